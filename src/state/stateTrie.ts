// The state tries: @ethereumjs/mpt with a direct path search. The package finds a key's path with
// its general trie walker (a task queue and a callback per node), which costs more than the node
// reads themselves when they come from memory; every get, put and delete starts with that search.
// Here the same search is a plain loop from the root. Results are the package's: the same node,
// remaining nibbles and stack (a test compares both on random tries).
//
// Reads are remembered by root and key: a trie's content is fixed by its root hash, so the value
// under a key at a root never changes. The engine's state caches forget what a call read when the
// call's checkpoint is reverted; the next call at the same root then finds its accounts and slots
// here instead of searching the trie again.
import {
  BranchMPTNode,
  decodeMPTNode,
  decodeRawMPTNode,
  ExtensionMPTNode,
  LeafMPTNode,
  MerklePatriciaTrie,
  type MPTNode,
  type MPTOpts,
  type MPTOptsWithDefaults,
  type Path,
} from "@ethereumjs/mpt";
import { equalsBytes } from "@ethereumjs/util";
import { bytesEntryCost, GenerationalCache } from "../common/generationalCache.js";
import { bytesToNibbles, bytesToUnprefixedHex } from "../common/hex.js";
import { TrieNodeStore } from "../storage/trieNodeStore.js";

const missingNodeMessage = "Missing node in DB";
/**
 * Memory of the values remembered per node database (root and key -> value, null for none), as
 * resident cost (see common/generationalCache.ts): about 12,000 reads of 128-character keys. A new
 * block is a new root, so what is worth remembering is the reads at the few roots calls run at;
 * 12,000 covers the accounts and slots of several heavy calls. It was 100,000 entries, about 40 MiB
 * of heap, mostly reads at roots no call would use again; then 16,000, until the cost of an entry
 * counted malloc's share too (eth_call of balanceOf and make bench-compare unchanged).
 */
const rememberedValuesBytes = 8 * 1024 * 1024;

// The two caches below are GenerationalCaches themselves rather than subclasses of it: a subclass's
// objects have a hidden class of their own, and the cache's get and set, which every trie read runs,
// met three classes (with the node store's cache) where one does.
type RememberedValues = GenerationalCache<Uint8Array | null>;

/** One memory per node database: tries of one database share it, another database has its own. */
const rememberedByDatabase = new WeakMap<object, RememberedValues>();

/**
 * Memory of the decoded nodes kept per node database, as heap cost (decodedNodeCost): about 1,000
 * branch nodes, or many more leaves. Every state access walks from the root, so the same few
 * upper nodes of the account trie and of the busy storage tries are looked up by every
 * transaction and call; the package decodes a node again on every lookup (an RLP decode and an
 * array per child, a fifth of what a value transfer allocates).
 */
const decodedNodesBytes = 2 * 1024 * 1024;

/** Heap bytes of a decoded node, roughly: objects, the array of children and each child's bytes. */
function decodedNodeCost(key: string, node: MPTNode): number {
  let cost = 200 + key.length;
  if (node instanceof BranchMPTNode) {
    cost += 160;
    for (const child of node._branches) if (child !== null) cost += child instanceof Uint8Array ? 100 + child.length : 400;
    if (node._value !== null) cost += 100 + node._value.length;
    return cost;
  }
  const { _nibbles: nibbles, _value: value } = node as LeafMPTNode | ExtensionMPTNode;
  return cost + 16 + nibbles.length * 8 + (value instanceof Uint8Array ? 100 + value.length : 400);
}

type DecodedNodes = GenerationalCache<MPTNode>;

const decodedByDatabase = new WeakMap<object, DecodedNodes>();

/**
 * A node of its own for the caller: the package changes the nodes of a path in place when it puts
 * or deletes a key (a branch's array of children, a leaf's key or value). The children and values
 * themselves are bytes no one writes into, and stay shared.
 */
function copyOfNode(node: MPTNode): MPTNode {
  if (node instanceof BranchMPTNode) {
    const copy = new BranchMPTNode();
    copy._branches = node._branches.slice();
    copy._value = node._value;
    return copy;
  }
  if (node instanceof LeafMPTNode) return new LeafMPTNode(node._nibbles.slice(), node._value);
  return new ExtensionMPTNode((node as ExtensionMPTNode)._nibbles.slice(), (node as ExtensionMPTNode)._value);
}

/**
 * The package's options object again, as one object literal: every field of MPTOpts, always in the
 * same order. The package builds its options with object spreads (defaults, then the caller's),
 * and once V8 has warmed up each such spread gets a map of its own, so every trie (one per block,
 * one per storage trie) had options of a new hidden class: the hash, key and root functions that
 * read them saw one more map per trie, and their optimised code was thrown away and compiled again
 * for it. Options made here share one map for the whole run. Every field is named (the type
 * check below fails the build when a new version of the package adds one, which would be dropped).
 */
function uniformOptions(options: MPTOptsWithDefaults): MPTOptsWithDefaults {
  const uniform = {
    useKeyHashing: options.useKeyHashing,
    useKeyHashingFunction: options.useKeyHashingFunction,
    keyPrefix: options.keyPrefix,
    useRootPersistence: options.useRootPersistence,
    useNodePruning: options.useNodePruning,
    cacheSize: options.cacheSize,
    valueEncoding: options.valueEncoding,
    db: options.db,
    root: options.root,
    common: options.common,
  } satisfies { [field in keyof Required<MPTOptsWithDefaults>]: MPTOptsWithDefaults[field] };
  return uniform;
}

export class StateTrie extends MerklePatriciaTrie {
  private readonly remembered: RememberedValues;
  private readonly decodedNodes: DecodedNodes;

  constructor(options: MPTOpts) {
    super(options);
    (this as unknown as { _opts: MPTOptsWithDefaults })._opts = uniformOptions(this._opts);
    const database = this._db.db as object;
    let remembered = rememberedByDatabase.get(database);
    if (remembered === undefined) rememberedByDatabase.set(database, (remembered = new GenerationalCache<Uint8Array | null>(rememberedValuesBytes, bytesEntryCost)));
    this.remembered = remembered;
    let decodedNodes = decodedByDatabase.get(database);
    if (decodedNodes === undefined) {
      const created: DecodedNodes = new GenerationalCache<MPTNode>(decodedNodesBytes, decodedNodeCost);
      decodedByDatabase.set(database, created);
      // Nodes the tries replaced leave the decoded cache when they leave the store's (TrieNodeStore.retire).
      if (database instanceof TrieNodeStore) database.onForget((hashText) => created.delete(hashText));
      decodedNodes = created;
    }
    this.decodedNodes = decodedNodes;
  }

  /**
   * As the package's: the node a reference names (by hash, or embedded in its parent). A node
   * stored by hash is decoded once and kept: its hash fixes its content. The first lookup reads it
   * through the package, so a node missing from the database throws the package's error.
   */
  override async lookupNode(reference: Uint8Array | Uint8Array[]): Promise<MPTNode> {
    if (!(reference instanceof Uint8Array)) return super.lookupNode(reference);
    const key = bytesToUnprefixedHex(reference);
    const known = this.decodedNodes.get(key);
    if (known !== undefined) return copyOfNode(known);
    const node = await super.lookupNode(reference);
    this.decodedNodes.set(key, copyOfNode(node));
    return node;
  }

  /**
   * The decoded node kept under `hashText` (unprefixed hex of its hash), itself rather than a copy:
   * for readers that do not change it. Undefined when the cache does not hold it.
   */
  keptNode(hashText: string): MPTNode | undefined {
    return this.decodedNodes.get(hashText);
  }

  override async get(key: Uint8Array, throwIfMissing = false): Promise<Uint8Array | null> {
    return this.valueAt(this.root(), key, throwIfMissing);
  }

  /**
   * The value under `key` in the trie with root `root` (stored in this trie's database), without
   * moving this trie's root: one trie object serves reads at any root, concurrently. A missing
   * node throws.
   */
  async getAt(root: Uint8Array, key: Uint8Array): Promise<Uint8Array | null> {
    return this.valueAt(root, key, true);
  }

  /**
   * As getAt, without waiting: a node neither the decoded cache nor this search holds is read from
   * the node store's synchronous get (memory, else LevelDB's synchronous read), decoded and kept as
   * lookupNode keeps it. Undefined when the trie's database cannot be read that way. A missing node
   * throws the package's error.
   */
  getAtSync(root: Uint8Array, key: Uint8Array): Uint8Array | null | undefined {
    const database = this.nodeStore();
    if (database === undefined) return undefined;
    const memoryKey = bytesToUnprefixedHex(root) + bytesToUnprefixedHex(key);
    const known = this.remembered.get(memoryKey);
    if (known !== undefined) return known;
    const walked = this.walkFrom(root, bytesToNibbles(this.appliedKey(key)), (hashText) => {
      const kept = this.decodedNodes.get(hashText);
      if (kept !== undefined) return kept;
      const encoded = database.getNode(hashText);
      if (encoded === undefined) throw new Error(missingNodeMessage);
      const node = decodeMPTNode(encoded);
      this.decodedNodes.set(hashText, copyOfNode(node));
      return node;
    });
    if ("missing" in walked) throw new Error(missingNodeMessage);
    const value = walked.node !== null && walked.remaining.length === 0 ? walked.node.value() : null;
    this.remembered.set(memoryKey, value);
    return value;
  }

  /** The node store behind this trie when it reads without waiting (TrieNodeStore), else undefined. */
  nodeStore(): TrieNodeStore | undefined {
    const database = this._db.db;
    return database instanceof TrieNodeStore ? database : undefined;
  }

  /** As the package's get, at `root`, remembered by root and key. */
  private async valueAt(root: Uint8Array, key: Uint8Array, throwIfMissing: boolean): Promise<Uint8Array | null> {
    const memoryKey = bytesToUnprefixedHex(root) + bytesToUnprefixedHex(key);
    const known = this.remembered.get(memoryKey);
    if (known !== undefined) return known;
    const appliedKey = this.appliedKey(key);
    // Nearly always every node of the path is kept (a block's new nodes are kept as they are
    // written): the value is found without waiting and without copying a node.
    const kept = this.walkFrom(root, bytesToNibbles(appliedKey), (hashText) => this.decodedNodes.get(hashText));
    const { node, remaining } = "missing" in kept ? await this.findPathFrom(root, appliedKey, throwIfMissing) : kept;
    const value = node !== null && remaining.length === 0 ? node.value() : null;
    this.remembered.set(memoryKey, value);
    return value;
  }

  override async findPath(key: Uint8Array, throwIfMissing = false, partialPath: { stack: MPTNode[] } = { stack: [] }): Promise<Path> {
    // Resuming from a partial path is rare (proof building); the package's walk handles it.
    if (partialPath.stack.length > 0) return super.findPath(key, throwIfMissing, partialPath);
    return this.findPathFrom(this.root(), key, throwIfMissing);
  }

  /**
   * The package's findPath from `root`: the walk runs on the kept nodes and those read for it;
   * when it meets a node neither holds, the node is read (through lookupNode, which keeps it) and
   * the walk starts again. The stack holds copies: the package changes the nodes of a path in place.
   */
  private async findPathFrom(root: Uint8Array, key: Uint8Array, throwIfMissing: boolean): Promise<Path> {
    const target = bytesToNibbles(key);
    /** Nodes read from the database for this search, by hash (hex). */
    const fetched = new Map<string, MPTNode>();
    for (;;) {
      const walked = this.walkFrom(root, target, (hashText) => fetched.get(hashText) ?? this.decodedNodes.get(hashText));
      if (!("missing" in walked)) return { ...walked, stack: walked.stack.map(copyOfNode) };
      try {
        fetched.set(bytesToUnprefixedHex(walked.missing), await this.lookupNode(walked.missing));
      } catch (error) {
        // As the package: a missing node ends the search with nothing found, unless asked to throw.
        if ((error as Error).message !== missingNodeMessage || throwIfMissing) throw error;
        return { node: null, remaining: [], stack: walked.stack.map(copyOfNode) };
      }
    }
  }

  /**
   * The path to `target` (nibbles) from `root`, as the package's findPath gives it, with the nodes
   * `nodeOf` answers by hash (hex) and embedded ones decoded in place; the stack holds those nodes
   * themselves. When `nodeOf` lacks a node, the hash it was asked for, with the stack so far.
   */
  private walkFrom(root: Uint8Array, target: readonly number[], nodeOf: (hashText: string) => MPTNode | undefined): Path | { missing: Uint8Array; stack: MPTNode[] } {
    const stack: MPTNode[] = [];
    if (equalsBytes(root, this.EMPTY_TRIE_ROOT)) return { node: null, remaining: [], stack };
    let progress = 0;
    let reference: Uint8Array | Uint8Array[] = root;
    for (;;) {
      const node: MPTNode | undefined = reference instanceof Uint8Array ? nodeOf(bytesToUnprefixedHex(reference)) : decodeRawMPTNode(reference);
      if (node === undefined) return { missing: reference as Uint8Array, stack };
      stack.push(node);
      if (node instanceof BranchMPTNode) {
        if (progress === target.length) return { node, remaining: [], stack };
        const child: Uint8Array | Uint8Array[] | null = node.getBranch(target[progress]!);
        if (child === null) return { node: null, remaining: target.slice(progress), stack };
        progress++;
        reference = child;
        continue;
      }
      const start = progress;
      const nibbles = (node as LeafMPTNode | ExtensionMPTNode)._nibbles;
      if (node instanceof LeafMPTNode && target.length - progress > nibbles.length) return { node: null, remaining: target.slice(start), stack };
      for (const nibble of nibbles) {
        if (nibble !== target[progress]) return { node: null, remaining: target.slice(start), stack };
        progress++;
      }
      if (node instanceof LeafMPTNode) return { node, remaining: [], stack };
      reference = (node as ExtensionMPTNode).value();
    }
  }

  /**
   * Keeps a node just written by a batch of changes under its hash (`hashText`, unprefixed hex):
   * the next block's changes and reads start from the new root and walk the new nodes first. The
   * node must not change afterwards.
   */
  keepWrittenNode(hashText: string, node: MPTNode): void {
    this.decodedNodes.set(hashText, node);
  }

  /** A copy on the same database, as the package's, but of this class (storage tries are copies). */
  override shallowCopy(includeCheckpoints = true, options?: Partial<MPTOpts>): MerklePatriciaTrie {
    const trie = new StateTrie({ ...this._opts, db: this._db.db.shallowCopy(), root: this.root(), cacheSize: 0, ...(options ?? {}) });
    if (includeCheckpoints && this.hasCheckpoints()) trie._db.setCheckpoints(this._db.checkpoints);
    return trie;
  }
}
