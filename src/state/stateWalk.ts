// Walks every node of a world state from its root, reading straight from the store: each node
// must be there and hash to its key, each account's storage trie and code likewise. For
// `chain-node verify`; a node shared by several tries (or accounts) is read once.
import { RLP } from "@ethereumjs/rlp";
import { equalsBytes, KECCAK256_NULL, KECCAK256_RLP } from "@ethereumjs/util";
import { CODEHASH_PREFIX } from "@ethereumjs/statemanager";
import { keccak256 } from "../common/crypto.js";
import { bytesToHex, bytesToUnprefixedHex } from "../common/hex.js";
import type { KeyValueStore } from "../storage/keyValueStore.js";
import { storeKeys } from "../storage/keys.js";

type RlpItem = Uint8Array | RlpItem[];

export interface StateWalkResult {
  readonly nodes: number;
  readonly accounts: number;
  readonly problems: string[];
}

/** A trie to walk: the account trie (its leaves are accounts) or a storage trie. */
interface PendingNode {
  readonly hash: Uint8Array;
  readonly accounts: boolean;
  /** Where it is referred from, for messages. */
  readonly from: string;
}

/** Whether a two-item node is a leaf: the hex-prefix flag of its path (2 or 3) says so. */
const isLeaf = (path: Uint8Array) => path.length > 0 && path[0]! >> 4 >= 2;

export function walkState(store: KeyValueStore, stateRoot: Uint8Array, onProgress?: (nodes: number) => void): StateWalkResult {
  const problems: string[] = [];
  const seen = new Set<string>();
  let nodes = 0;
  let accounts = 0;
  const pending: PendingNode[] = [];
  const enqueue = (hash: Uint8Array, accountTrie: boolean, from: string) => {
    if (equalsBytes(hash, KECCAK256_RLP)) return;
    const key = bytesToUnprefixedHex(hash) + (accountTrie ? "a" : "s");
    if (seen.has(key)) return;
    seen.add(key);
    pending.push({ hash, accounts: accountTrie, from });
  };
  const visitAccount = (encoded: Uint8Array, from: string) => {
    accounts++;
    let fields: Uint8Array[];
    try {
      fields = RLP.decode(encoded) as Uint8Array[];
      if (!Array.isArray(fields) || fields.length !== 4) throw new Error();
    } catch {
      problems.push(`an account under ${from} does not decode`);
      return;
    }
    const [, , storageRoot, codeHash] = fields as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
    enqueue(storageRoot, false, `the storage of an account under ${from}`);
    if (!equalsBytes(codeHash, KECCAK256_NULL) && !seen.has(`code${bytesToUnprefixedHex(codeHash)}`)) {
      seen.add(`code${bytesToUnprefixedHex(codeHash)}`);
      const code = store.getSync(storeKeys.trieNode(new Uint8Array([...CODEHASH_PREFIX, ...codeHash])));
      if (code === undefined) problems.push(`code ${bytesToHex(codeHash)} is missing`);
      else if (!equalsBytes(keccak256(code), codeHash)) problems.push(`code ${bytesToHex(codeHash)} does not hash to its key`);
    }
  };
  /** A decoded node: its children go on the list, an account leaf's storage and code too. */
  const visitNode = (node: RlpItem, accountTrie: boolean, from: string) => {
    if (!Array.isArray(node) || (node.length !== 17 && node.length !== 2)) {
      problems.push(`node ${from} is neither a branch, an extension nor a leaf`);
      return;
    }
    const children = node.length === 17 ? node.slice(0, 16) : isLeaf(node[0] as Uint8Array) ? [] : [node[1]!];
    for (const child of children) {
      if (Array.isArray(child)) visitNode(child, accountTrie, `embedded in ${from}`);
      else if (child.length === 32) enqueue(child, accountTrie, from);
      else if (child.length !== 0) problems.push(`node ${from} refers to a child of ${child.length} bytes`);
    }
    if (accountTrie && node.length === 2 && isLeaf(node[0] as Uint8Array)) visitAccount(node[1] as Uint8Array, from);
  };
  enqueue(stateRoot, true, "the state root");
  while (pending.length > 0) {
    const { hash, accounts: accountTrie, from } = pending.pop()!;
    const name = bytesToHex(hash);
    const encoded = store.getSync(storeKeys.trieNode(hash));
    nodes++;
    if (nodes % 10_000 === 0) onProgress?.(nodes);
    if (encoded === undefined) {
      problems.push(`trie node ${name} (referred to by ${from}) is missing`);
      continue;
    }
    if (!equalsBytes(keccak256(encoded), hash)) {
      problems.push(`trie node ${name} does not hash to its key`);
      continue;
    }
    let node: RlpItem;
    try {
      node = RLP.decode(encoded) as RlpItem;
    } catch {
      problems.push(`trie node ${name} does not decode`);
      continue;
    }
    visitNode(node, accountTrie, name);
  }
  return { nodes, accounts, problems };
}
