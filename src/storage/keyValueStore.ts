// The node's one key-value store: an embedded LevelDB on disk, or a Map for throwaway chains.
// Everything above writes through `write(batch)`, which is atomic: all of it or none of it.
import { mkdir, readdir, stat } from "node:fs/promises";
import { ClassicLevel } from "classic-level";

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
  /** Where the data lives, for messages: a directory or "memory". */
  readonly location: string;
}

/** A data directory the node refuses to use; the message says why and what to do. */
export class DataDirectoryError extends Error {}

function keyOf(bytes: Uint8Array): string {
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
  };
}

async function directoryState(directory: string): Promise<"missing" | "empty" | "leveldb" | "other"> {
  let names: string[];
  try {
    if (!(await stat(directory)).isDirectory()) return "other";
    names = await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw error;
  }
  if (names.length === 0) return "empty";
  return names.includes("CURRENT") ? "leveldb" : "other";
}

/**
 * Opens the LevelDB under `directory`, creating it only when the directory is missing or empty:
 * a directory holding anything else is refused untouched.
 */
export async function openLevelStore(directory: string): Promise<KeyValueStore> {
  const state = await directoryState(directory);
  if (state === "other") {
    throw new DataDirectoryError(`${directory} is not a chain-node data directory (it holds other files); choose an empty or new directory with --data-dir`);
  }
  if (state === "missing") await mkdir(directory, { recursive: true });
  const db = new ClassicLevel<Uint8Array, Uint8Array>(directory, { keyEncoding: "view", valueEncoding: "view", createIfMissing: state !== "leveldb" });
  try {
    await db.open();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code === "LEVEL_LOCKED") throw new DataDirectoryError(`${directory} is in use by another process (LevelDB lock held)`);
    throw new DataDirectoryError(`cannot open the chain database in ${directory}: ${cause?.message ?? (error as Error).message}`);
  }
  return {
    location: directory,
    async get(key) {
      return db.get(key);
    },
    getSync(key) {
      return db.getSync(key);
    },
    async write(operations) {
      await db.batch(operations as StoreOperation[]);
    },
    async close() {
      await db.close();
    },
  };
}
