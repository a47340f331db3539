// EIP-1186 proofs: the state-trie nodes from a state root down to an account (or to where it would
// be), and the storage-trie nodes from the account's storage root down to each requested slot.
// Every committed root stays stored, so proofs work at any block, not only the head.
import { createMerkleProof, type MerklePatriciaTrie } from "@ethereumjs/mpt";
import { RLP } from "@ethereumjs/rlp";
import { bytesToBigInt, createAccountFromRLP, KECCAK256_NULL, KECCAK256_RLP } from "@ethereumjs/util";
import { nextEventLoopTurn } from "../common/eventLoop.js";

/**
 * A proof of many slots gives the event loop a turn after this long: the trie reads resolve as
 * microtasks, so 1,024 slots would otherwise hold the thread for 0.3-0.6 s (make bench, bounds).
 */
const proofSliceMs = 5;

export interface StorageSlotProof {
  readonly key: Uint8Array;
  /** 0 for a slot that was never written (the proof then shows its absence). */
  readonly value: bigint;
  /** Serialized nodes from the storage root node down, root first; empty for an empty storage trie. */
  readonly proof: Uint8Array[];
}

export interface AccountProof {
  readonly address: Uint8Array;
  /** Zero, the empty code hash and the empty trie root for an account that does not exist. */
  readonly balance: bigint;
  readonly nonce: bigint;
  readonly codeHash: Uint8Array;
  readonly storageRoot: Uint8Array;
  /** Serialized nodes from the state root node down, root first. */
  readonly accountProof: Uint8Array[];
  readonly storageProofs: StorageSlotProof[];
}

/** A trie of the state's kind (hashed keys, same node store) opened at a root. */
export type TrieOpener = (root: Uint8Array) => MerklePatriciaTrie;

/** Proves `address` and its `slots` (32-byte keys) in the state whose root is `stateRoot`. */
export async function proveAccount(openTrie: TrieOpener, stateRoot: Uint8Array, address: Uint8Array, slots: readonly Uint8Array[]): Promise<AccountProof> {
  const accountTrie = openTrie(stateRoot);
  const accountProof = await createMerkleProof(accountTrie, address);
  const encodedAccount = await accountTrie.get(address);
  const account = encodedAccount === null ? undefined : createAccountFromRLP(encodedAccount);
  const storageRoot = account?.storageRoot ?? KECCAK256_RLP;
  const storageTrie = openTrie(storageRoot);
  const storageProofs: StorageSlotProof[] = [];
  let sliceEndsAt = performance.now() + proofSliceMs;
  for (const key of slots) {
    if (performance.now() > sliceEndsAt) {
      await nextEventLoopTurn();
      sliceEndsAt = performance.now() + proofSliceMs;
    }
    const proof = await createMerkleProof(storageTrie, key);
    // Slots hold the RLP of the value without leading zeros.
    const stored = await storageTrie.get(key);
    const value = stored === null ? 0n : bytesToBigInt(RLP.decode(stored) as Uint8Array);
    storageProofs.push({ key, value, proof });
  }
  return {
    address,
    balance: account?.balance ?? 0n,
    nonce: account?.nonce ?? 0n,
    codeHash: account?.codeHash ?? KECCAK256_NULL,
    storageRoot,
    accountProof,
    storageProofs,
  };
}
