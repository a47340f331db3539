// The engine's state manager with these changes.
// - @ethereumjs/statemanager 10.1.3 means to keep storage writes in its cache until the checkpoint
//   is committed, but writes `cache.put(...) ?? writeToTrie(...)`, and put returns undefined:
//   every SSTORE also updated the storage trie at once (hashing and encoding its nodes), a fifth of
//   the CPU of a storage-heavy call. Here a write goes to the cache only; flush() writes it to the
//   trie on commit, as intended.
// - The account cache keeps accounts as RLP and decodes one on every read (the interpreter reads
//   the running contract's account at every SSTORE). A decoded copy is kept per RLP value, and a
//   read answers a fresh Account object with its fields, as a decode would.
// - A revert drops every storage trie object, and the next read builds one again (a trie copy per
//   contract per call). Trie objects are kept here and handed back when their root is still the
//   account's storage root, so they give exactly what a new one would.
// - SSTORE's original values are kept by state/originalStorageValues.ts.
// - flush() writes the cached changes as the package's does (code, then storage, then accounts) but
//   applies each trie's changes at once (applyTrieChanges: each changed node hashed once, not once
//   per key) and puts a contract's account once for all its slots, not once per slot.
import type { MerklePatriciaTrie } from "@ethereumjs/mpt";
import { CODEHASH_PREFIX, MerkleStateManager, type MerkleStateManagerOpts } from "@ethereumjs/statemanager";
import { RLP } from "@ethereumjs/rlp";
import {
  Account,
  type Address,
  concatBytes,
  createAccountFromRLP,
  createAddressFromString,
  equalsBytes,
  unprefixedHexToBytes,
} from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import { bigIntToMinimalBytes, bytesToUnprefixedHex, withoutLeadingZeroBytes } from "../common/hex.js";
import { OriginalStorageValues } from "./originalStorageValues.js";
import { applyTrieChanges, appliedTrieKey, type TrieChange } from "./trieBatch.js";

/** Storage trie objects kept per state manager. */
const keptStorageTrieCount = 1_000;

/**
 * An account read from the cache. The engine changes it and puts it back, and the cache stores its
 * serialize(): here the integers go straight into the RLP encoder, where the package's Account
 * turns each into a hex string, checks it with a regular expression and parses it back to bytes
 * first (a tenth of a value transfer's execution). The bytes are the same.
 */
class CachedAccount extends Account {
  override serialize(): Uint8Array {
    const rlp = RLP.encode([bigIntToMinimalBytes(this.nonce), bigIntToMinimalBytes(this.balance), this.storageRoot, this.codeHash]);
    // The cache stores this RLP: the next read of the account needs no decoding.
    decodedAccounts.set(rlp, new Account(this.nonce, this.balance, this.storageRoot, this.codeHash));
    return rlp;
  }
}

/** Decoded accounts by the RLP value the account cache holds (values are never changed in place). */
const decodedAccounts = new WeakMap<Uint8Array, Account>();

function decodedAccount(rlp: Uint8Array): Account {
  let decoded = decodedAccounts.get(rlp);
  if (decoded === undefined) decodedAccounts.set(rlp, (decoded = createAccountFromRLP(rlp)));
  return new CachedAccount(decoded.nonce, decoded.balance, decoded.storageRoot, decoded.codeHash);
}

/**
 * An empty list for a flush's trie changes, from one place: the changes are appended to it, so the
 * list is a packed array every time. Made with map() it was packed or holey depending on whether
 * V8 had optimised the flush yet, and applyTrieChanges, optimised for one kind, was deoptimised
 * ("wrong map") and compiled again for the other.
 */
function trieChanges(): TrieChange[] {
  return [];
}

export class ChainStateManager extends MerkleStateManager {
  /** Storage tries by hashed address, kept across reverts. */
  private readonly keptStorageTries = new Map<string, MerklePatriciaTrie>();

  constructor(options: MerkleStateManagerOpts) {
    super(options);
    // The package's cache of SSTORE's original values, with the node's hex conversions.
    (this as { originalStorageCache: unknown }).originalStorageCache = new OriginalStorageValues((address, key) => this.getStorage(address, key));
  }

  protected override _getStorageTrie(addressOrHash: Address | { bytes: Uint8Array } | Uint8Array, rootAccount?: Account): MerklePatriciaTrie {
    const hashedAddress = addressOrHash instanceof Uint8Array ? addressOrHash : keccak256(addressOrHash.bytes);
    const key = bytesToUnprefixedHex(hashedAddress);
    if (this._storageTries[key] === undefined && rootAccount !== undefined) {
      const kept = this.keptStorageTries.get(key);
      if (kept !== undefined && !kept.hasCheckpoints() && equalsBytes(kept.root(), rootAccount.storageRoot)) this._storageTries[key] = kept;
    }
    const trie = super._getStorageTrie(hashedAddress, rootAccount);
    if (this.keptStorageTries.get(key) !== trie) {
      this.keptStorageTries.set(key, trie);
      if (this.keptStorageTries.size > keptStorageTrieCount) this.keptStorageTries.delete(this.keptStorageTries.keys().next().value!);
    }
    return trie;
  }

  override async getAccount(address: Address): Promise<Account | undefined> {
    const cached = this.cachedAccount(address);
    return cached === undefined ? super.getAccount(address) : (cached ?? undefined);
  }

  /**
   * The account as getAccount answers it, without waiting, when the account cache holds it: null
   * for an account the cache knows does not exist, undefined when only the trie can tell.
   */
  cachedAccount(address: Address): Account | null | undefined {
    const cached = this._caches?.account?.get(address);
    if (cached === undefined) return undefined;
    return cached.accountRLP === undefined ? null : decodedAccount(cached.accountRLP);
  }

  override async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    const storageCache = this._caches?.storage;
    if (storageCache === undefined) return super.putStorage(address, key, value);
    if (key.length !== 32) throw new Error("Storage key must be 32 bytes long");
    if (value.length > 32) throw new Error("Storage value cannot be longer than 32 bytes");
    if ((await this.getAccount(address)) === undefined) throw new Error("putStorage() called on non-existing account");
    storageCache.put(address, key, RLP.encode(withoutLeadingZeroBytes(value)));
  }

  override async flush(): Promise<void> {
    const caches = this._caches;
    if (caches === undefined) return super.flush();
    await this.flushCode(caches.code?.flush() ?? []);
    await this.flushStorage(caches.storage?.flush() ?? []);
    await this.flushAccounts(caches.account?.flush() ?? []);
  }

  /** As the package: each contract's code under its hash, and the hash into its account (created if missing). */
  private async flushCode(items: [addressHex: string, { code: Uint8Array | undefined }][]): Promise<void> {
    const hash = this.common.customCrypto.keccak256 ?? keccak256;
    for (const [addressHex, { code }] of items) {
      if (code === undefined) continue;
      const address = createAddressFromString(`0x${addressHex}`);
      const codeHash = hash(code);
      await this._getCodeDB().put(this._prefixCodeHashes ? concatBytes(CODEHASH_PREFIX, codeHash) : codeHash, code);
      if ((await this.getAccount(address)) === undefined) await this.putAccount(address, new Account());
      await this.modifyAccountFields(address, { codeHash });
    }
  }

  /**
   * The slots of each account into its storage trie, as the package's per-slot writes would: the
   * trie is the one the package picks (_getStorageTrie with the account), a slot's value is stored
   * RLP-encoded without leading zeros and deleted when empty, and slots of accounts that no longer
   * exist are dropped. The account's storage root is then put once.
   */
  private async flushStorage(items: [addressHex: string, keyHex: string, value: Uint8Array | undefined][]): Promise<void> {
    const slotsByAccount = new Map<string, [keyHex: string, value: Uint8Array | undefined][]>();
    for (const [addressHex, keyHex, value] of items) {
      let slots = slotsByAccount.get(addressHex);
      if (slots === undefined) slotsByAccount.set(addressHex, (slots = []));
      slots.push([keyHex, value]);
    }
    for (const [addressHex, slots] of slotsByAccount) {
      const address = createAddressFromString(`0x${addressHex}`);
      const account = await this.getAccount(address);
      if (account === undefined) continue;
      const trie = this._getStorageTrie(address, account);
      // Appended, not mapped, here and in flushAccounts: see trieChanges.
      const changes = trieChanges();
      for (const [keyHex, value] of slots) {
        // The cache holds RLP(value without leading zeros); RLP(empty) marks a deleted slot.
        const decoded = RLP.decode(value ?? new Uint8Array(0));
        const stored = decoded instanceof Uint8Array && decoded.length > 0 ? RLP.encode(decoded) : null;
        changes.push([appliedTrieKey(trie, unprefixedHexToBytes(keyHex)), stored]);
      }
      await applyTrieChanges(trie, changes);
      account.storageRoot = trie.root();
      await this.putAccount(address, account);
    }
  }

  /** Changed accounts into the account trie: their RLP, or a delete for an account that was deleted. */
  private async flushAccounts(items: [addressHex: string, { accountRLP: Uint8Array | undefined }][]): Promise<void> {
    const changes = trieChanges();
    for (const [addressHex, { accountRLP }] of items) changes.push([appliedTrieKey(this._trie, unprefixedHexToBytes(addressHex)), accountRLP ?? null]);
    await applyTrieChanges(this._trie, changes);
  }
}
