// The node's one key-value store: an embedded LevelDB on disk, or a Map for throwaway chains.
// Everything above writes through `write(batch)`, which is atomic: all of it or none of it.
// The LevelDB store is in storage/levelStore.ts.

export type StoreOperation = { type: "put"; key: Uint8Array; value: Uint8Array } | { type: "del"; key: Uint8Array };

export interface StoreEntry {
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

export interface KeyValueStore {
  get(key: Uint8Array): Promise<Uint8Array | undefined>;
  /**
   * The same read without leaving the event loop: for many small reads in a row (trie nodes),
   * where a round trip through LevelDB's thread pool per read costs more than the read itself.
   */
  getSync(key: Uint8Array): Uint8Array | undefined;
  /** Applies every operation or none (one LevelDB batch). */
  write(operations: readonly StoreOperation[]): Promise<void>;
  close(): Promise<void>;
  /** Every entry whose key starts with `prefix`, in key order (for small sets: it reads them all). */
  entries(prefix: Uint8Array): Promise<StoreEntry[]>;
  /** Whether the store holds no key at all (a store that can tell: the chain's own stores do). */
  isEmpty?(): Promise<boolean>;
  /** Where the data lives, for messages: a directory or "memory". */
  readonly location: string;
}

/** A data directory the node refuses to use; the message says why and what to do. */
export class DataDirectoryError extends Error {}

/**
 * Node's latin1 decoder called on the array itself (`Buffer.prototype.latin1Slice`, what a Buffer's
 * toString("latin1") calls): no Buffer made over the key first, which was half of keyOf's time;
 * every key of every batch the store writes goes through keyOf. Where the method is missing or
 * answers otherwise for a sample, the Buffer way.
 */
const latin1SliceOfBuffer = (Buffer.prototype as unknown as { latin1Slice?: (this: Uint8Array, start: number, end: number) => string }).latin1Slice;
const sampleKey = Uint8Array.from({ length: 41 }, (_, index) => (index * 97 + 3) & 0xff);
const nodeLatin1Slice =
  typeof latin1SliceOfBuffer === "function" && latin1SliceOfBuffer.call(sampleKey.subarray(1), 0, 40) === Buffer.from(sampleKey.subarray(1)).toString("latin1") ? latin1SliceOfBuffer : undefined;

/** A key as a string for Map lookups (one character per byte). */
export function keyOf(bytes: Uint8Array): string {
  if (nodeLatin1Slice !== undefined) return nodeLatin1Slice.call(bytes, 0, bytes.length);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

/** The key keyOf made the string of. */
export function keyFromString(key: string): Uint8Array {
  return new Uint8Array(Buffer.from(key, "latin1"));
}

/** The first key after every key that starts with `prefix` (undefined: no such key, the prefix is all 0xff). */
export function prefixEnd(prefix: Uint8Array): Uint8Array | undefined {
  const end = new Uint8Array(prefix);
  for (let index = end.length - 1; index >= 0; index--) {
    if (end[index]! < 0xff) {
      end[index] = end[index]! + 1;
      return end.subarray(0, index + 1);
    }
  }
  return undefined;
}

/** Orders keys bytewise, as LevelDB does. */
export function compareKeys(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

export function createMemoryStore(): KeyValueStore {
  const entries = new Map<string, Uint8Array>();
  return {
    location: "memory",
    async get(key) {
      return entries.get(keyOf(key));
    },
    getSync(key) {
      return entries.get(keyOf(key));
    },
    async write(operations) {
      for (const operation of operations) {
        if (operation.type === "put") entries.set(keyOf(operation.key), operation.value);
        else entries.delete(keyOf(operation.key));
      }
    },
    async close() {
      entries.clear();
    },
    async entries(prefix) {
      const start = keyOf(prefix);
      const found: StoreEntry[] = [];
      for (const [key, value] of entries) if (key.startsWith(start)) found.push({ key: keyFromString(key), value });
      return found.sort((a, b) => compareKeys(a.key, b.key));
    },
    async isEmpty() {
      return entries.size === 0;
    },
  };
}
