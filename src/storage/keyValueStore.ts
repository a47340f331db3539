// The node's one key-value store: an embedded LevelDB on disk, or a Map for throwaway chains.
// Everything above writes through `write(batch)`, which is atomic: all of it or none of it.
// The LevelDB store is in storage/levelStore.ts.

export type StoreOperation = { type: "put"; key: Uint8Array; value: Uint8Array } | { type: "del"; key: Uint8Array };

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
  /** Whether the store holds no key at all (a store that can tell: the chain's own stores do). */
  isEmpty?(): Promise<boolean>;
  /** Where the data lives, for messages: a directory or "memory". */
  readonly location: string;
}

/** A data directory the node refuses to use; the message says why and what to do. */
export class DataDirectoryError extends Error {}

/** A key as a string for Map lookups (one character per byte). */
export function keyOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
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
    async isEmpty() {
      return entries.size === 0;
    },
  };
}
