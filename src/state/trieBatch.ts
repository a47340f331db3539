// A set of trie changes applied at once. @ethereumjs/mpt changes one key at a time: every put or
// delete reads the key's path, then encodes and hashes every node on it again, so n changes under
// shared top nodes hash those nodes n times. Here the changed paths are read once (each node read
// and decoded once), the new structure is built in memory with the package's normal form (a branch
// left with one child folds into its child's path, extensions merge, nodes under 32 bytes are
// embedded in their parent), and each new node is encoded and hashed once. Unchanged subtrees stay
// the references they were and are not read.
//
// A batch runs without waiting: the nodes it reads are nearly always in the state trie's decoded
// cache. A pass that meets nodes the cache does not hold notes them and finishes with a result it
// throws away; they are read from the database together, and the batch runs again from the top,
// each pass a level deeper at least. (An asynchronous walk cost a promise per node and per child:
// some fifty per token transfer, and the largest functions V8 compiled for them.)
//
// The outcome is the package's: the same root, and the same stored nodes reachable from it (nodes
// of 32 bytes or more, and the root, written by hash through the trie's checkpointed database, so a
// checkpoint buffers them). A test compares both on random batches.
import {
  BranchMPTNode,
  ExtensionMPTNode,
  LeafMPTNode,
  type MerklePatriciaTrie,
  decodeRawMPTNode,
  type MPTNode,
  type NodeReferenceOrRawMPTNode,
} from "@ethereumjs/mpt";
import { equalsBytes, type Lock } from "@ethereumjs/util";
import { bytesToNibbles, bytesToUnprefixedHex } from "../common/hex.js";
import { TrieNodeStore, type WrittenTrieNode } from "../storage/trieNodeStore.js";
import { StateTrie } from "./stateTrie.js";

/** A change of one key: the value to store, or null (or empty bytes) to delete the key. */
export type TrieChange = readonly [appliedKey: Uint8Array, value: Uint8Array | null];

/**
 * How a node refers to a child: the child's hash, or the child itself (its raw fields) when its
 * encoding is under 32 bytes. The package's type names embedded leaves and extensions; with short
 * keys a branch can be embedded too, and is handled the same way.
 */
type NodeReference = NodeReferenceOrRawMPTNode;

/** A subtree left as it was: only its reference is known, its nodes are not read. */
interface UnchangedNode {
  readonly kind: "unchanged";
  readonly reference: NodeReference;
}

interface LeafNode {
  readonly kind: "leaf";
  readonly path: number[];
  readonly value: Uint8Array;
}

interface ExtensionNode {
  readonly kind: "extension";
  readonly path: number[];
  /** A branch (a valid trie has nothing else under an extension). */
  readonly child: TrieNode;
}

interface BranchNode {
  readonly kind: "branch";
  readonly children: (TrieNode | null)[];
  readonly value: Uint8Array | null;
}

type TrieNode = UnchangedNode | LeafNode | ExtensionNode | BranchNode;
/** A node whose content is known: read from the database, or new. */
type OpenNode = LeafNode | ExtensionNode | BranchNode;

/** A change with its key as nibbles; value null deletes. */
interface PathChange {
  readonly path: number[];
  readonly value: Uint8Array | null;
}

/** A key and value that will be in the trie. */
interface PathEntry {
  readonly path: number[];
  readonly value: Uint8Array;
}

/**
 * The trie internals a batch needs. They are protected in the package's class; element access
 * reaches them as the package itself uses them (the same database wrapper, hash and key prefix).
 */
interface TrieInternals {
  readonly writeNodes: (nodes: readonly WrittenTrieNode[]) => Promise<void>;
  readonly hash: (bytes: Uint8Array) => Uint8Array;
  readonly databaseKey: (hash: Uint8Array) => Uint8Array;
  readonly lock: Lock;
  readonly pruning: boolean;
  /** Notes a node replaced by a new version, for the caches to drop a block later (TrieNodeStore.retire). */
  readonly retireNode: (keyText: string, hashText: string) => void;
}

function internalsOf(trie: MerklePatriciaTrie): TrieInternals {
  const database = trie["_db"];
  return {
    writeNodes: async (nodes) => {
      // Without a checkpoint the package's database converts each operation to a hex key and hands
      // the batch to the node store: the store takes the nodes with the hex keys made once here.
      // Under a checkpoint the database keeps them until the checkpoint is committed.
      if (!database.hasCheckpoints() && database.db instanceof TrieNodeStore) database.db.putWritten(nodes);
      else await database.batch(nodes.map(({ key, value }) => ({ type: "put", key, value })));
    },
    hash: (bytes) => trie["hash"](bytes),
    databaseKey: (hash) => trie["_getDbKey"](hash),
    lock: trie["_lock"],
    pruning: trie["_opts"].useNodePruning,
    retireNode: (keyText, hashText) => {
      if (database.db instanceof TrieNodeStore) database.db.retire(keyText, hashText);
    },
  };
}

/** The key under which `trie` files `key` (its hash when the trie hashes keys), for building changes. */
export function appliedTrieKey(trie: MerklePatriciaTrie, key: Uint8Array): Uint8Array {
  return trie["appliedKey"](key);
}

/**
 * Applies `changes` (applied keys, i.e. already hashed when the trie hashes keys) to `trie` and
 * moves its root to the result, as the same puts and deletes one by one would. A key given twice
 * takes its last value. Reads nothing and writes nothing when there are no changes.
 */
export async function applyTrieChanges(trie: MerklePatriciaTrie, changes: Iterable<TrieChange>): Promise<void> {
  const latest = new Map<string, PathChange>();
  for (const [key, value] of changes) {
    latest.set(bytesToUnprefixedHex(key), { path: bytesToNibbles(key), value: value === null || value.length === 0 ? null : value });
  }
  if (latest.size === 0) return;
  const internals = internalsOf(trie);
  if (internals.pruning) throw new Error("applyTrieChanges does not prune: the trie must have node pruning off");
  const pathChanges = [...latest.values()];
  await internals.lock.acquire();
  try {
    const oldRoot = trie.root();
    const start: TrieNode | null = equalsBytes(oldRoot, trie.EMPTY_TRIE_ROOT) ? null : { kind: "unchanged", reference: oldRoot };
    /** Nodes read from the database for this batch, by hash (hex). */
    const fetched = new Map<string, MPTNode>();
    for (;;) {
      const batch = new TrieBatch(trie, internals, fetched);
      const result = batch.apply(start, pathChanges, 0);
      if (batch.missing !== undefined) {
        await Promise.all(batch.missing.map(async (hash) => fetched.set(bytesToUnprefixedHex(hash), await trie.lookupNode(hash))));
        continue;
      }
      const newRoot = result === null ? trie.EMPTY_TRIE_ROOT : batch.storeRoot(result);
      if (batch.writes.length > 0) await internals.writeNodes(batch.writes);
      batch.retireReplacedNodes();
      trie.root(newRoot);
      await trie.persistRoot();
      return;
    }
  } finally {
    internals.lock.release();
  }
}

/** How many nibbles `path` shares with `key` from `offset` on. */
function sharedLength(path: readonly number[], key: readonly number[], offset: number): number {
  let shared = 0;
  while (shared < path.length && offset + shared < key.length && path[shared] === key[offset + shared]) shared++;
  return shared;
}

/** Changes split by the nibble at `depth`, and the one (if any) whose key ends at `depth`. */
function splitByNibble<T extends { readonly path: number[] }>(items: readonly T[], depth: number): { ending: T | undefined; groups: (T[] | undefined)[] } {
  const groups: (T[] | undefined)[] = new Array(16).fill(undefined);
  let ending: T | undefined;
  for (const item of items) {
    if (item.path.length === depth) {
      ending = item;
      continue;
    }
    const nibble = item.path[depth]!;
    (groups[nibble] ??= []).push(item);
  }
  return { ending, groups };
}

/**
 * A branch's sixteen empty children. Every branch's children start here, as the package's branch
 * nodes do (a holey array): the code that copies and walks them meets one hidden class (a branch
 * built from a map over its groups had another, and that code was compiled again for it).
 */
function noChildren(): (TrieNode | null)[] {
  return new Array(16).fill(null);
}

function extension(path: number[], child: TrieNode): ExtensionNode {
  return { kind: "extension", path, child };
}

class TrieBatch {
  /** Nodes to write, by database key. */
  readonly writes: WrittenTrieNode[] = [];
  /** Hashes of the stored nodes this batch read to rebuild them: the new root no longer refers to them. */
  private readonly replaced: Uint8Array[] = [];
  /**
   * Stored nodes this pass needed and found in no cache (undefined: none); when any are, its result
   * is thrown away. Made with its first hash rather than empty: most passes miss nothing, and an
   * empty array V8 makes for small integers, so the first hash put into one (in a pass long after
   * the code was optimised) deoptimised it ("not a Smi"), and arrays made after that for objects
   * deoptimised the code that had only seen the empty ones ("wrong map").
   */
  missing: Uint8Array[] | undefined;

  constructor(
    private readonly trie: MerklePatriciaTrie,
    private readonly internals: TrieInternals,
    /** Nodes earlier passes of the batch read from the database, by hash (hex). */
    private readonly fetched: ReadonlyMap<string, MPTNode>,
  ) {}

  /**
   * The subtree `node` (keys from nibble `depth` on) with `changes` applied; null when it is left
   * empty. Meaningless when the pass noted a missing node.
   */
  apply(node: TrieNode | null, changes: readonly PathChange[], depth: number): TrieNode | null {
    if (changes.length === 0) return node;
    if (node === null) return this.build(changes.filter(isPut), depth);
    if (node.kind === "unchanged") this.noteReplaced(node.reference);
    const open = node.kind === "unchanged" ? this.read(node.reference) : node;
    if (open === undefined) return node;
    switch (open.kind) {
      case "leaf":
        return this.applyToLeaf(open, changes, depth);
      case "extension":
        return this.applyToExtension(open, changes, depth);
      case "branch":
        return this.applyToBranch(open, changes, depth);
    }
  }

  private applyToLeaf(leaf: LeafNode, changes: readonly PathChange[], depth: number): TrieNode | null {
    const leafPath = changes[0]!.path.slice(0, depth).concat(leaf.path);
    const replaced = changes.some((change) => change.path.length === leafPath.length && sharedLength(leaf.path, change.path, depth) === leaf.path.length);
    const entries = changes.filter(isPut);
    if (!replaced) entries.push({ path: leafPath, value: leaf.value });
    return this.build(entries, depth);
  }

  private applyToExtension(node: ExtensionNode, changes: readonly PathChange[], depth: number): TrieNode | null {
    // A change that leaves the extension's path splits it where the first one leaves: the part
    // before becomes a shorter extension over a new branch, the part after hangs from that branch.
    let split = node.path.length;
    for (const change of changes) split = Math.min(split, sharedLength(node.path, change.path, depth));
    if (split === node.path.length) return this.extend(node.path, this.apply(node.child, changes, depth + split));
    const children = noChildren();
    const rest = node.path.slice(split + 1);
    children[node.path[split]!] = rest.length === 0 ? node.child : extension(rest, node.child);
    const branch: BranchNode = { kind: "branch", children, value: null };
    if (split === 0) return this.applyToBranch(branch, changes, depth);
    return this.extend(node.path.slice(0, split), this.applyToBranch(branch, changes, depth + split));
  }

  private applyToBranch(node: BranchNode, changes: readonly PathChange[], depth: number): TrieNode | null {
    const { ending, groups } = splitByNibble(changes, depth);
    const children = node.children.slice();
    for (let nibble = 0; nibble < 16; nibble++) {
      const group = groups[nibble];
      if (group !== undefined) children[nibble] = this.apply(children[nibble] ?? null, group, depth + 1);
    }
    return this.branch(children, ending === undefined ? node.value : ending.value);
  }

  /** The subtree holding exactly `entries` (keys from nibble `depth` on). */
  private build(entries: readonly PathEntry[], depth: number): TrieNode | null {
    if (entries.length === 0) return null;
    const first = entries[0]!;
    if (entries.length === 1) return { kind: "leaf", path: first.path.slice(depth), value: first.value };
    let shared = first.path.length - depth;
    for (const entry of entries) shared = Math.min(shared, sharedLength(first.path.slice(depth, depth + shared), entry.path, depth));
    if (shared > 0) return extension(first.path.slice(depth, depth + shared), this.build(entries, depth + shared)!);
    const { ending, groups } = splitByNibble(entries, depth);
    const children = noChildren();
    for (let nibble = 0; nibble < 16; nibble++) {
      const group = groups[nibble];
      if (group !== undefined) children[nibble] = this.build(group, depth + 1);
    }
    return { kind: "branch", children, value: ending?.value ?? null };
  }

  /** A branch in normal form: with one child and no value it folds into the child's path. */
  private branch(children: (TrieNode | null)[], value: Uint8Array | null): TrieNode | null {
    let onlyChild = -1;
    let childCount = 0;
    for (let nibble = 0; nibble < 16; nibble++) {
      if (children[nibble] === null) continue;
      childCount++;
      onlyChild = nibble;
    }
    if (childCount === 0) return value === null ? null : { kind: "leaf", path: [], value };
    if (childCount > 1 || value !== null) return { kind: "branch", children, value };
    const child = children[onlyChild]!;
    const open = child.kind === "unchanged" ? this.read(child.reference) : child;
    if (open === undefined) return null;
    // A leaf or extension merges with the nibble above it into a new node.
    if (child.kind === "unchanged" && open.kind !== "branch") this.noteReplaced(child.reference);
    switch (open.kind) {
      case "leaf":
        return { kind: "leaf", path: [onlyChild, ...open.path], value: open.value };
      case "extension":
        return extension([onlyChild, ...open.path], open.child);
      case "branch":
        // The branch itself is unchanged: keep its reference rather than encode it again.
        return extension([onlyChild], child);
    }
  }

  /** An extension in normal form: merged with an extension or leaf under it, gone when its subtree is. */
  private extend(path: number[], child: TrieNode | null): TrieNode | null {
    if (child === null) return null;
    if (child.kind === "leaf") return { kind: "leaf", path: path.concat(child.path), value: child.value };
    if (child.kind === "extension") return extension(path.concat(child.path), child.child);
    // A branch, or the unchanged branch the extension already led to.
    return extension(path, child);
  }

  /**
   * The node `reference` names, from the node itself when embedded, else from the nodes fetched for
   * this batch or the state trie's decoded cache; undefined (noted as missing) when none holds it.
   */
  private read(reference: NodeReference): OpenNode | undefined {
    if (!(reference instanceof Uint8Array)) return openNode(decodeRawMPTNode(reference));
    const hashText = bytesToUnprefixedHex(reference);
    const node = this.fetched.get(hashText) ?? (this.trie instanceof StateTrie ? this.trie.keptNode(hashText) : undefined);
    if (node !== undefined) return openNode(node);
    if (this.missing === undefined) this.missing = [reference];
    else this.missing.push(reference);
    return undefined;
  }

  private noteReplaced(reference: NodeReference): void {
    if (reference instanceof Uint8Array) this.replaced.push(reference);
  }

  /**
   * Hands the nodes this batch replaced to the node store, which drops them from the caches a
   * block later. A node rebuilt with the same content has the same hash and is among the writes:
   * it is still in use, and stays.
   */
  retireReplacedNodes(): void {
    if (this.replaced.length === 0) return;
    const written = new Set(this.writes.map((node) => node.keyText));
    for (const hash of this.replaced) {
      const key = this.internals.databaseKey(hash);
      const keyText = bytesToUnprefixedHex(key);
      if (!written.has(keyText)) this.internals.retireNode(keyText, key === hash ? keyText : bytesToUnprefixedHex(hash));
    }
  }

  /** Encodes `root` and every new node under it; returns the root hash (the root is stored whatever its size). */
  storeRoot(root: TrieNode): Uint8Array {
    if (root.kind === "unchanged") {
      if (root.reference instanceof Uint8Array) return root.reference;
      // An embedded node left as the root (not reached from a valid trie): stored by hash, as the package would.
      return this.store(decodeRawMPTNode(root.reference), true) as Uint8Array;
    }
    return this.store(this.packageNode(root), true) as Uint8Array;
  }

  private reference(node: TrieNode): NodeReference {
    return node.kind === "unchanged" ? node.reference : this.store(this.packageNode(node), false);
  }

  private packageNode(node: OpenNode): MPTNode {
    switch (node.kind) {
      case "leaf":
        return new LeafMPTNode(node.path, node.value);
      case "extension":
        // The package types an extension's child as a hash, but keeps an embedded child's raw fields there too.
        return new ExtensionMPTNode(node.path, this.reference(node.child) as Uint8Array);
      case "branch": {
        const branch = new BranchMPTNode();
        for (let nibble = 0; nibble < 16; nibble++) {
          const child = node.children[nibble];
          if (child !== null && child !== undefined) branch.setBranch(nibble, this.reference(child));
        }
        if (node.value !== null) branch.value(node.value);
        return branch;
      }
    }
  }

  /** As the package's _formatNode: a node of 32 bytes or more (or the root) is written and referred to by hash, a smaller one is embedded. */
  private store(node: MPTNode, isRoot: boolean): NodeReference {
    const encoded = node.serialize();
    if (encoded.length < 32 && !isRoot) return node.raw() as NodeReference;
    const hash = this.internals.hash(encoded);
    const key = this.internals.databaseKey(hash);
    const keyText = bytesToUnprefixedHex(key);
    this.writes.push({ key, keyText, value: encoded });
    // One hex string for both (unless the trie prefixes its keys): V8 hashes a string once for every map.
    if (this.trie instanceof StateTrie) this.trie.keepWrittenNode(key === hash ? keyText : bytesToUnprefixedHex(hash), node);
    return hash;
  }
}

function isPut(change: PathChange): change is PathEntry {
  return change.value !== null;
}

/** The package's decoded node as a batch node; its children stay unread references. */
function openNode(node: MPTNode): OpenNode {
  if (node instanceof LeafMPTNode) return { kind: "leaf", path: node.key(), value: node.value() as Uint8Array };
  if (node instanceof ExtensionMPTNode) return { kind: "extension", path: node.key(), child: { kind: "unchanged", reference: node.value() } };
  const children = noChildren();
  for (const [nibble, reference] of node.getChildren()) children[nibble] = { kind: "unchanged", reference };
  return { kind: "branch", children, value: node.value() };
}
