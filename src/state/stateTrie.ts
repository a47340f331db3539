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
  ExtensionMPTNode,
  LeafMPTNode,
  MerklePatriciaTrie,
  type MPTNode,
  type MPTOpts,
  type Path,
} from "@ethereumjs/mpt";
import { equalsBytes } from "@ethereumjs/util";
import { bytesEntryCost, GenerationalCache } from "../common/generationalCache.js";
import { bytesToNibbles, bytesToUnprefixedHex } from "../common/hex.js";

const missingNodeMessage = "Missing node in DB";
/**
 * Memory of the values remembered per node database (root and key -> value, null for none), as
 * heap cost (see common/generationalCache.ts): about 16,000 reads of 128-character keys. A new
 * block is a new root, so what is worth remembering is the reads at the few roots calls run at;
 * 16,000 covers the accounts and slots of several heavy calls. It was 100,000 entries, about 40 MiB
 * of heap, mostly reads at roots no call would use again.
 */
const rememberedValuesBytes = 8 * 1024 * 1024;

class RememberedValues extends GenerationalCache<Uint8Array | null> {
  constructor() {
    super(rememberedValuesBytes, bytesEntryCost);
  }
}

/** One memory per node database: tries of one database share it, another database has its own. */
const rememberedByDatabase = new WeakMap<object, RememberedValues>();

export class StateTrie extends MerklePatriciaTrie {
  private readonly remembered: RememberedValues;

  constructor(options: MPTOpts) {
    super(options);
    const database = this._db.db as object;
    let remembered = rememberedByDatabase.get(database);
    if (remembered === undefined) rememberedByDatabase.set(database, (remembered = new RememberedValues()));
    this.remembered = remembered;
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

  /** As the package's get, at `root`, remembered by root and key. */
  private async valueAt(root: Uint8Array, key: Uint8Array, throwIfMissing: boolean): Promise<Uint8Array | null> {
    const memoryKey = bytesToUnprefixedHex(root) + bytesToUnprefixedHex(key);
    const known = this.remembered.get(memoryKey);
    if (known !== undefined) return known;
    const { node, remaining } = await this.findPathFrom(root, this.appliedKey(key), throwIfMissing);
    const value = node !== null && remaining.length === 0 ? node.value() : null;
    this.remembered.set(memoryKey, value);
    return value;
  }

  override async findPath(key: Uint8Array, throwIfMissing = false, partialPath: { stack: MPTNode[] } = { stack: [] }): Promise<Path> {
    // Resuming from a partial path is rare (proof building); the package's walk handles it.
    if (partialPath.stack.length > 0) return super.findPath(key, throwIfMissing, partialPath);
    return this.findPathFrom(this.root(), key, throwIfMissing);
  }

  private async findPathFrom(root: Uint8Array, key: Uint8Array, throwIfMissing: boolean): Promise<Path> {
    // Our helper: the package exports a bytesToNibbles that appends a terminator nibble.
    const target = bytesToNibbles(key);
    const stack: MPTNode[] = [];
    if (equalsBytes(root, this.EMPTY_TRIE_ROOT)) return { node: null, remaining: [], stack };
    let progress = 0;
    try {
      let node = await this.lookupNode(root);
      for (;;) {
        stack.push(node);
        if (node instanceof BranchMPTNode) {
          if (progress === target.length) return { node, remaining: [], stack };
          const child = node.getBranch(target[progress]!);
          if (child === null) return { node: null, remaining: target.slice(progress), stack };
          progress++;
          node = await this.lookupNode(child);
          continue;
        }
        const start = progress;
        const nodeKey = node.key();
        if (node instanceof LeafMPTNode && target.length - progress > nodeKey.length) return { node: null, remaining: target.slice(start), stack };
        for (const nibble of nodeKey) {
          if (nibble !== target[progress]) return { node: null, remaining: target.slice(start), stack };
          progress++;
        }
        if (node instanceof LeafMPTNode) return { node, remaining: [], stack };
        node = await this.lookupNode((node as ExtensionMPTNode).value());
      }
    } catch (error) {
      // As the package: a missing node ends the search with nothing found, unless asked to throw.
      if ((error as Error).message !== missingNodeMessage || throwIfMissing) throw error;
      return { node: null, remaining: [], stack };
    }
  }

  /** A copy on the same database, as the package's, but of this class (storage tries are copies). */
  override shallowCopy(includeCheckpoints = true, options?: Partial<MPTOpts>): MerklePatriciaTrie {
    const trie = new StateTrie({ ...this._opts, db: this._db.db.shallowCopy(), root: this.root(), cacheSize: 0, ...(options ?? {}) });
    if (includeCheckpoints && this.hasCheckpoints()) trie._db.setCheckpoints(this._db.checkpoints);
    return trie;
  }
}
