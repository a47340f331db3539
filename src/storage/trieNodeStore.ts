// The database behind the state tries (@ethereumjs/mpt's DB interface). Trie writes are held in
// memory until the block that made them is written: `takeWrites` hands them over to that block's
// batch, so a block and its state reach the disk together or not at all. Nodes are keyed by their
// own hash, so a node written twice, or left over from a block that was never written, is harmless.
// Nodes read or written recently stay in a memory cache (nodes never change, so it cannot go
// stale), and a miss is read synchronously: a state access walks several nodes in a row, and a
// round trip through LevelDB's thread pool per node would cost more than the reads themselves.
import type { BatchDBOp, DB } from "@ethereumjs/util";
import { bytesEntryCost, GenerationalCache } from "../common/generationalCache.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { KeyValueStore, StoreOperation } from "./keyValueStore.js";
import { storeKeys } from "./keys.js";

/** The tries key nodes by unprefixed hex; values are bytes (hex text only if a trie is set up so). */
type TrieKey = string | Uint8Array;
type TrieValue = string | Uint8Array;

function valueBytes(value: TrieValue): Uint8Array {
  return typeof value === "string" ? Buffer.from(value, "hex") : value;
}

function keyBytes(key: TrieKey): Uint8Array {
  return typeof key === "string" ? Buffer.from(key, "hex") : key;
}

function keyText(key: TrieKey): string {
  return typeof key === "string" ? key : bytesToUnprefixedHex(key);
}

/** A node a trie writes: its database key as bytes and as unprefixed hex, and its encoding. */
export interface WrittenTrieNode {
  readonly key: Uint8Array;
  readonly keyText: string;
  readonly value: Uint8Array;
}

/** Trie nodes taken into one block's batch (hex key -> node). */
export type TrieNodeBatch = ReadonlyMap<string, Uint8Array>;

/**
 * Default memory of the node cache, counted as resident cost (see common/generationalCache.ts):
 * about 7,000 nodes of 300 bytes. That holds the paths a block's transactions and the calls at
 * recent roots walk, many times over (a dev chain's working set is a few thousand nodes, and the
 * upper nodes every access walks are also kept decoded by state/stateTrie.ts); the nodes of older
 * states come from LevelDB's own block cache and the page cache in microseconds. The cache fills
 * with the nodes of every new block (a node is written once and rarely read again once its state
 * is old), so its size is also how long the node's memory keeps growing under steady work.
 * History: 64 MiB of node bytes (150 MiB of heap with the objects around them); then 24 and 12 MiB
 * of heap cost. At 12 MiB (some 18,000 nodes) the node bytes and their backing stores made
 * malloc's main arena 28-29 MiB at bench-long's first minute and 33 MiB at its tenth (the cache
 * drops half its entries at a time, and the freed chunks are reused only in part), against 9 MiB
 * throughout with 2 MiB; side by side (make bench-compare) 2 MiB changed neither the token nor
 * the value transfers (0.978 and 1.010 of the other's time per block).
 */
export const defaultNodeCacheBytes = 6 * 1024 * 1024;

export class TrieNodeStore implements DB<string, TrieValue> {
  /** Written by the tries, not yet on disk (hex key -> node). */
  private unwritten = new Map<string, Uint8Array>();
  /** Handed to a batch that is being written: still served until the write completes. */
  private inFlight = new Map<string, Uint8Array>();
  private readonly cache: GenerationalCache<Uint8Array>;
  /** Nodes the tries replaced since the last block's nodes were taken (hex key, hex hash). */
  private replacedSinceLastBlock: [keyText: string, hashText: string][] = [];
  /** Nodes the block before replaced: they leave the caches when the next block's nodes are taken. */
  private replacedByLastBlock: [keyText: string, hashText: string][] = [];
  /** Other caches of these nodes, by hash (the tries' decoded nodes), told when a node leaves. */
  private readonly forgetListeners: ((hashText: string) => void)[] = [];

  constructor(
    private readonly store: KeyValueStore,
    cacheBytes = defaultNodeCacheBytes,
  ) {
    this.cache = new GenerationalCache<Uint8Array>(cacheBytes, bytesEntryCost);
  }

  /** What the cached nodes cost in memory, by the cache's estimate (for tests). */
  get cacheCost(): number {
    return this.cache.cost;
  }

  async get(key: TrieKey): Promise<Uint8Array | undefined> {
    return this.getNode(key);
  }

  /** A node by hash, from memory when it can, else from the store without leaving the event loop. */
  getNode(key: TrieKey): Uint8Array | undefined {
    const text = keyText(key);
    const held = this.unwritten.get(text) ?? this.inFlight.get(text) ?? this.cache.get(text);
    if (held !== undefined) return held;
    const stored = this.store.getSync(storeKeys.trieNode(keyBytes(key)));
    if (stored !== undefined) this.cache.set(text, stored);
    return stored;
  }

  async put(key: TrieKey, value: TrieValue): Promise<void> {
    this.unwritten.set(keyText(key), valueBytes(value));
  }

  async del(): Promise<void> {
    // Tries run without pruning: a node may be shared by several state roots, so none is deleted.
  }

  async batch(operations: BatchDBOp<string, TrieValue>[]): Promise<void> {
    for (const operation of operations) {
      if (operation.type === "put") this.unwritten.set(keyText(operation.key), valueBytes(operation.value));
    }
  }

  /** Nodes written by a trie outside any checkpoint (state/trieBatch.ts), as `batch` takes them. */
  putWritten(nodes: readonly WrittenTrieNode[]): void {
    for (const { keyText, value } of nodes) this.unwritten.set(keyText, value);
  }

  shallowCopy(): DB<string, TrieValue> {
    return this;
  }

  async open(): Promise<void> {}

  /**
   * Moves every unwritten node into `operations`, and answers them as a batch: hand it to
   * `writeFinished` once the store holds it, or to `writeAbandoned` if the write failed. Until
   * then the nodes are still served from memory.
   */
  takeWrites(operations: StoreOperation[]): TrieNodeBatch {
    for (const [keyText, hashText] of this.replacedByLastBlock) {
      this.cache.delete(keyText);
      for (const forget of this.forgetListeners) forget(hashText);
    }
    this.replacedByLastBlock = this.replacedSinceLastBlock;
    this.replacedSinceLastBlock = [];
    const batch = this.unwritten;
    for (const [text, value] of batch) {
      this.inFlight.set(text, value);
      operations.push({ type: "put", key: storeKeys.trieNode(Buffer.from(text, "hex")), value });
    }
    this.unwritten = new Map();
    return batch;
  }

  writeFinished(batch: TrieNodeBatch): void {
    for (const [text, value] of batch) {
      this.cache.set(text, value);
      this.inFlight.delete(text);
    }
  }

  /**
   * Notes a node a trie replaced with a new version (by its hex key and hex hash). It leaves the
   * memory caches (this one and the listeners') one block later, when the nodes of the block
   * after the one that replaced it are taken: until then the parent state of the newest block
   * (which a trace of its transactions replays) is still served from memory. A state access walks
   * from the newest root, so the old versions of a changed path are rarely read after that (an
   * older block's state reads them from the database, and the batches on their way there). Dropped
   * this soon, most of them are garbage before V8's next young-generation collection; kept until
   * the caches turned over, each was copied and promoted to the old generation first, with the
   * nodes of every block. The caches are shared by every trie of the database, so a node another
   * trie shares is then read from the database too.
   */
  retire(keyText: string, hashText: string): void {
    this.replacedSinceLastBlock.push([keyText, hashText]);
  }

  /** `forget` hears of each node that leaves the caches (see retire). */
  onForget(forget: (hashText: string) => void): void {
    this.forgetListeners.push(forget);
  }

  /** The batch never reached the store: its nodes are forgotten (the states they belong to are gone too). */
  writeAbandoned(batch: TrieNodeBatch): void {
    for (const text of batch.keys()) this.inFlight.delete(text);
  }
}
