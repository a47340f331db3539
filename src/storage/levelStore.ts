// The node's store on disk: an embedded LevelDB (classic-level) behind a write-ahead log. A batch
// is durable once it is in the log (storage/writeAheadLog.ts); it goes to LevelDB behind it, and
// until it is there reads are answered from the batches on their way.
import { mkdir, readdir, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { ClassicLevel } from "classic-level";
import { nextEventLoopTurn } from "../common/eventLoop.js";
import { plainBytes } from "../common/plainBytes.js";
import { compareKeys, DataDirectoryError, keyFromString, keyOf, prefixEnd, type KeyValueStore, type StoreEntry, type StoreOperation } from "./keyValueStore.js";
import { storeKeys } from "./keys.js";
import { checkedTablesFileName, checkLevelFiles } from "./leveldb/filesCheck.js";
import { WriteAheadLog, type DecodedLog, type LogRecord } from "./writeAheadLog.js";

/**
 * What is at `directory`: nothing, an empty folder, a LevelDB database, the remains of one (its
 * files without CURRENT, which names its manifest), another folder, or no folder at all.
 */
async function directoryState(directory: string): Promise<"missing" | "empty" | "leveldb" | "broken-leveldb" | "other" | "not-a-directory"> {
  let names: string[];
  try {
    if (!(await stat(directory)).isDirectory()) return "not-a-directory";
    names = await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw error;
  }
  if (names.length === 0) return "empty";
  if (names.includes("CURRENT")) return "leveldb";
  const levelFiles = names.filter((name) => name === "LOCK" || name === writeAheadLogFileName || name === checkedTablesFileName || name.startsWith("MANIFEST-") || /^\d+\.(ldb|log)$/.test(name));
  return levelFiles.length > 0 ? "broken-leveldb" : "other";
}

/**
 * Creates `directory` (absolute) and its missing parents, one level at a time. Not
 * `mkdir(..., { recursive: true })`: under a pseudo file system such as /proc, Node 20's recursive
 * mkdir never settles, and the node would hang at start instead of saying why it cannot.
 */
async function createDirectory(directory: string): Promise<void> {
  const parent = dirname(directory);
  try {
    await mkdir(directory);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === "EEXIST") return;
    if (code !== "ENOENT" || parent === directory) throw error;
    // The parent is missing: create it, then try again (once: a second ENOENT is the answer).
    await createDirectory(parent);
    await mkdir(directory).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== "EEXIST") throw again;
    });
  }
}

/**
 * Directories a LevelStore of this process has open. LevelDB's own lock keeps other processes
 * out, but classic-level opened for several threads shares one handle within a process: a second
 * store on the same directory would share the write-ahead log too, and each would empty it under
 * the other.
 */
const openDirectories = new Set<string>();

/** The log's file in the LevelDB directory (LevelDB leaves files of names it does not use alone). */
export const writeAheadLogFileName = "CHAIN-NODE-WAL";
/** Once every batch is in LevelDB, a log of this size or more is emptied. */
const logClearBytes = 1024 * 1024;
/** A log this large makes the next write wait until LevelDB has caught up and the log is emptied. */
const logLimitBytes = 64 * 1024 * 1024;

/**
 * How long a logged batch waits for the next ones before they go to LevelDB together. A LevelDB
 * write costs the same whatever its size: on the main thread a native batch and a promise, on
 * LevelDB's thread a write of its own log. Blocks mined one by one (automine: a block per
 * transaction) each wrote alone. Measured with blocks of 25 operations: 45-85 µs of the main
 * thread and 136-188 µs in all per block written alone, 22-28 and 49-70 µs for four at a time.
 * Writers do not wait on it: a batch is durable once logged, and reads see it meanwhile. Readers
 * of LevelDB itself (the call worker's thread) wait for `settled`, and end the wait early (hurry).
 */
const defaultLevelWriteDelayMs = 4;
/** Operations waiting for LevelDB that make it write without waiting out the delay. */
const levelWriteQueueLimit = 4096;

/** A key's value in a batch not yet in LevelDB (undefined: deleted), and the batch that set it. */
interface PendingValue {
  readonly value: Uint8Array | undefined;
  readonly batch: number;
}

/** A batch written to the log and not yet to LevelDB, with its keys as `pending` holds them. */
interface QueuedBatch {
  readonly operations: readonly StoreOperation[];
  readonly pendingKeys: readonly string[];
}

/**
 * LevelDB behind the write-ahead log. A write appends its batch to the log, records its keys in
 * `pending` and answers; the batches go to LevelDB in order, a few milliseconds later
 * (defaultLevelWriteDelayMs), those written meanwhile together in one LevelDB batch. A key leaves
 * `pending` once the last batch that set it is in LevelDB. The database is opened for other
 * threads too (see openLevelReader).
 */
export class LevelStore implements KeyValueStore {
  private readonly pending = new Map<string, PendingValue>();
  private queued: QueuedBatch[] = [];
  /** The operations of the queued batches. */
  private queuedOperations = 0;
  private lastBatch = 0;
  /** Ends the wait before the next LevelDB write early (set while it waits). */
  private writeSoon: (() => void) | undefined;
  /** The next wait before a LevelDB write is to end at once (asked for while none was under way). */
  private hurried = false;
  /** The loop handing queued batches to LevelDB, while there are any. */
  private applying: Promise<void> | undefined;
  /** Set when the log or LevelDB failed a write: every later write fails with it. */
  private failure: Error | undefined;
  private closing = false;

  constructor(
    private readonly db: ClassicLevel<Uint8Array, Uint8Array>,
    private readonly log: WriteAheadLog,
    readonly location: string,
    /** The directory's absolute path, held in `openDirectories` while open. */
    private readonly resolvedDirectory: string,
    /** The sequence number of the last batch written (the log's numbering goes on from it). */
    private lastSequence: bigint,
    /** How long a logged batch waits for others before going to LevelDB. */
    private readonly levelWriteDelayMs: number,
  ) {}

  /**
   * Whether LevelDB holds every batch written so far, so that a reader in another thread sees
   * everything this store answers.
   */
  get settled(): boolean {
    return this.pending.size === 0 && this.applying === undefined && this.failure === undefined;
  }

  /**
   * Settles once LevelDB holds every batch written so far, handing the waiting ones over at once:
   * for a reader in another thread that would rather wait a few milliseconds than not read.
   */
  whenSettled(): Promise<void> {
    return this.caughtUp();
  }

  async get(key: Uint8Array): Promise<Uint8Array | undefined> {
    const pending = this.pendingValue(key);
    return pending !== undefined ? pending.value : plainBytes(await this.db.get(key));
  }

  getSync(key: Uint8Array): Uint8Array | undefined {
    const pending = this.pendingValue(key);
    return pending !== undefined ? pending.value : plainBytes(this.db.getSync(key));
  }

  async write(operations: readonly StoreOperation[]): Promise<void> {
    if (this.log.bytes >= logLimitBytes) await this.caughtUp();
    if (this.closing) throw new Error(`the store in ${this.location} is closing`);
    if (this.failure !== undefined) throw this.failure;
    try {
      this.log.append(operations, this.lastSequence + 1n);
      this.lastSequence++;
    } catch (error) {
      this.failure = new Error(`the write-ahead log in ${this.location} could not be written: ${(error as Error).message}`);
      throw this.failure;
    }
    const batch = ++this.lastBatch;
    // Appended rather than mapped: an optimised map() makes a holey array, the same map() not yet
    // optimised a packed one, and applyQueued, reading both, was compiled again for the second.
    const pendingKeys: string[] = [];
    for (const operation of operations) {
      const key = keyOf(operation.key);
      this.pending.set(key, { value: operation.type === "put" ? operation.value : undefined, batch });
      pendingKeys.push(key);
    }
    this.queued.push({ operations, pendingKeys });
    this.queuedOperations += operations.length;
    this.applying ??= this.whileMoreBatchesCome().then(() => this.applyQueued());
    if (this.queuedOperations >= levelWriteQueueLimit) this.hurry();
  }

  /**
   * Hands the waiting batches to LevelDB at the next turn of the event loop instead of after
   * the delay (or, while LevelDB is writing, the ones queued behind it once it is done).
   */
  hurry(): void {
    this.hurried = true;
    this.writeSoon?.();
  }

  /**
   * Settles after the delay, or at the next turn of the event loop once hurried; never
   * within this turn: the caller answers first.
   */
  private whileMoreBatchesCome(): Promise<void> {
    if (this.hurried) {
      this.hurried = false;
      return nextEventLoopTurn();
    }
    return new Promise((resolve) => {
      // Unreferenced: a process may end while it waits (the batches are in the log).
      const timer = setTimeout(() => this.writeSoon?.(), this.levelWriteDelayMs).unref();
      this.writeSoon = () => {
        clearTimeout(timer);
        this.writeSoon = undefined;
        this.hurried = false;
        void nextEventLoopTurn().then(resolve);
      };
    });
  }

  async entries(prefix: Uint8Array): Promise<StoreEntry[]> {
    // Batches on their way to LevelDB are newer than what it holds. They are taken before LevelDB
    // is read: one applied (and so no longer pending) while the read runs is then still seen.
    const start = keyOf(prefix);
    const newer = [...this.pending].filter(([key]) => key.startsWith(start));
    const found = new Map<string, Uint8Array>();
    for (const [key, value] of await readEntries(this.db, prefix)) found.set(keyOf(key), plainBytes(value));
    for (const [key, pending] of newer) {
      if (pending.value === undefined) found.delete(key);
      else found.set(key, pending.value);
    }
    return [...found].map(([key, value]) => ({ key: keyFromString(key), value })).sort((a, b) => compareKeys(a.key, b.key));
  }

  async isEmpty(): Promise<boolean> {
    return this.pending.size === 0 && (await this.db.keys({ limit: 1 }).all()).length === 0;
  }

  /** Refuses writes from now on, waits until LevelDB holds every batch, empties the log and closes. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.caughtUp();
    try {
      if (this.failure === undefined) this.log.clear();
    } finally {
      this.log.close();
      openDirectories.delete(this.resolvedDirectory);
      await this.db.close();
    }
  }

  /** The key's value in a batch not yet in LevelDB (no string key is made while there is none). */
  private pendingValue(key: Uint8Array): PendingValue | undefined {
    return this.pending.size === 0 ? undefined : this.pending.get(keyOf(key));
  }

  /** Settles once every batch written so far is in LevelDB (or LevelDB failed). */
  private async caughtUp(): Promise<void> {
    while (this.applying !== undefined) {
      this.hurry();
      await this.applying;
    }
  }

  private async applyQueued(): Promise<void> {
    try {
      while (this.queued.length > 0 && this.failure === undefined) {
        const batches = this.queued;
        const appliedUpTo = this.lastBatch;
        this.queued = [];
        this.queuedOperations = 0;
        try {
          // Every queued batch is logged: the last of them has the last sequence number written.
          await writeToLevel(this.db, batches, this.lastSequence);
        } catch (error) {
          // The batches stay in the log (a restart applies them) and in `pending` (reads see them).
          this.failure = new Error(`LevelDB in ${this.location} failed a write: ${(error as Error).message}`);
          return;
        }
        for (const { pendingKeys } of batches) {
          for (const key of pendingKeys) {
            // A key a later batch set again keeps that batch's value until it is applied too.
            const pending = this.pending.get(key);
            if (pending !== undefined && pending.batch <= appliedUpTo) this.pending.delete(key);
          }
        }
        // Batches written while LevelDB wrote wait for the next ones too (unless hurried).
        if (this.queued.length > 0) await this.whileMoreBatchesCome();
      }
      if (this.failure === undefined && this.log.bytes >= logClearBytes) {
        try {
          this.log.clear();
        } catch {
          // The log keeps batches LevelDB holds already (applying them again changes nothing): the
          // next time LevelDB catches up tries again.
        }
      }
    } finally {
      this.applying = undefined;
    }
  }
}

export interface LevelStoreOptions {
  /** How long a logged batch waits for the next ones before they go to LevelDB (default 4 ms). */
  readonly levelWriteDelayMs?: number;
  /** Told what opening repaired on its own (a torn write dropped from the log). */
  readonly warn?: (details: Record<string, unknown>, message: string) => void;
}

/**
 * Opens the LevelDB under `directory`, creating it only when the directory is missing or empty:
 * a directory holding anything else is refused untouched. Batches its write-ahead log still holds
 * (the node stopped before LevelDB had them) are applied before anything is read.
 */
export async function openLevelStore(directory: string, options: LevelStoreOptions = {}): Promise<LevelStore> {
  let state: Awaited<ReturnType<typeof directoryState>>;
  try {
    state = await directoryState(directory);
    if (state === "missing") await createDirectory(resolve(directory));
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === undefined) throw error;
    // ENOTDIR, EACCES, EROFS...: the system's reason, without the stack.
    throw new DataDirectoryError(`cannot use ${directory} as the data directory: ${message}`);
  }
  if (state === "not-a-directory") throw new DataDirectoryError(`${directory} is not a directory; choose an empty or new directory with --data-dir`);
  if (state === "broken-leveldb") {
    throw new DataDirectoryError(`${directory} holds the files of a LevelDB database without its CURRENT file: the database is damaged, and the node leaves it as it is`);
  }
  if (state === "other") {
    throw new DataDirectoryError(`${directory} is not a chain-node data directory (it holds other files); choose an empty or new directory with --data-dir`);
  }
  const resolved = resolve(directory);
  if (openDirectories.has(resolved)) throw new DataDirectoryError(`${directory} is in use by this process already`);
  openDirectories.add(resolved);
  try {
    return await openLoggedStore(directory, state !== "leveldb", resolved, options);
  } catch (error) {
    openDirectories.delete(resolved);
    throw error;
  }
}

/**
 * The LevelDB under `directory`, not yet open. Opened for several threads: the store and the
 * readers of other threads share one handle, so they must open it with the same options.
 */
function levelDatabaseAt(directory: string, createIfMissing: boolean): ClassicLevel<Uint8Array, Uint8Array> {
  return new ClassicLevel<Uint8Array, Uint8Array>(directory, { keyEncoding: "view", valueEncoding: "view", createIfMissing, multithreading: true });
}

async function openLoggedStore(directory: string, create: boolean, resolved: string, options: LevelStoreOptions): Promise<LevelStore> {
  // The node's own files are judged before LevelDB is opened (opening it rewrites its log into a
  // table and a new manifest): a directory refused here is left byte for byte as it was.
  const logPath = join(directory, writeAheadLogFileName);
  const logContents = WriteAheadLog.read(logPath);
  if (logContents.end === "damaged") throw new DataDirectoryError(damagedLogMessage(directory, logPath, logContents));
  const levelFiles = create ? undefined : await checkLevelFiles(directory, { nodeLogHoldsBatches: logContents.records.length > 0 });
  if (levelFiles !== undefined && levelFiles.damage.length > 0) {
    throw new DataDirectoryError(
      `LevelDB's files in ${directory} are damaged: ${levelFiles.damage.join("; ")}. The node did not open the database, so nothing in ${directory} was changed ` +
        `(opened, LevelDB would drop the damaged records of its log and serve damaged table blocks without a word). Keep the directory as it is and start ` +
        `the node on another --data-dir; \`chain-node verify --data-dir ${directory}\` lists every problem it finds.`,
    );
  }
  const db = levelDatabaseAt(directory, create);
  try {
    await db.open();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code === "LEVEL_LOCKED") throw new DataDirectoryError(`${directory} is in use by another process (LevelDB lock held)`);
    throw new DataDirectoryError(`cannot open the chain database in ${directory}: ${cause?.message ?? (error as Error).message}`);
  }
  // Batches acknowledged before the last stop that LevelDB may not hold yet: those after the last
  // one LevelDB records having applied, in order (see storage/writeAheadLog.ts).
  let log: WriteAheadLog | undefined;
  let lastSequence: bigint;
  try {
    const stored = await db.get(appliedRecordKey);
    const applied = stored === undefined ? 0n : Buffer.from(stored).readBigUInt64BE(0);
    lastSequence = applied;
    const { format, records } = logContents;
    let toApply: readonly LogRecord[];
    if (format === 1) {
      // Written before sequence numbers: applied again whole, as then.
      toApply = records;
    } else {
      toApply = records.filter((record) => record.sequence! > applied);
      toApply.forEach((record, index) => {
        if (record.sequence !== applied + 1n + BigInt(index)) throw new LogUnreadableError(`it lacks batch ${applied + 1n + BigInt(index)}`, applied, logPath);
      });
      const last = records.at(-1)?.sequence;
      if (last !== undefined && last > lastSequence) lastSequence = last;
    }
    if (toApply.length > 0) {
      await writeToLevel(db, toApply, format === 1 ? undefined : lastSequence);
    }
    log = WriteAheadLog.open(logPath, logContents);
    if (logContents.torn !== undefined) {
      const { sequence, bytes } = logContents.torn;
      options.warn?.({ log: logPath, batch: sequence === undefined ? undefined : String(sequence), bytes }, "a write the last stop cut short was dropped from the end of the write-ahead log (it had not been acknowledged)");
    }
    // Every batch is in LevelDB now; later records go into an empty log of the current format.
    if (log.bytes > 0) log.clear();
    await levelFiles?.recordChecked().catch((error: Error) => options.warn?.({ reason: error.message }, "the record of LevelDB's checked tables could not be written (the next start reads them again)"));
  } catch (error) {
    log?.close();
    await db.close();
    if (error instanceof LogUnreadableError) throw new DataDirectoryError(error.message);
    throw new DataDirectoryError(`cannot recover the write-ahead log in ${directory}: ${(error as Error).message}`);
  }
  return new LevelStore(db, log, directory, resolved, lastSequence, options.levelWriteDelayMs ?? defaultLevelWriteDelayMs);
}

/** Why a directory whose write-ahead log is damaged is refused, and what can be done. */
function damagedLogMessage(directory: string, logPath: string, contents: DecodedLog): string {
  const first = contents.records[0]?.sequence;
  const last = contents.records.at(-1)?.sequence;
  const readable =
    first === undefined
      ? "No batch before the damage can be read"
      : `The batches ${first} to ${last} before it read whole; LevelDB holds every batch before ${first} (the log is emptied only once LevelDB holds all of it) and may hold some of the later ones`;
  return (
    `the write-ahead log ${logPath} is damaged: ${contents.damage}. ${readable}; batches acknowledged after them are in the damaged part. ` +
    `Nothing in ${directory} was changed. To start from what LevelDB and the readable part of the log hold, cut the log at byte ${contents.validBytes} ` +
    `(truncate -s ${contents.validBytes} ${logPath}): the batches from the damaged record on are then lost.`
  );
}

/** Acknowledged batches in the log cannot be read: the store does not open. */
class LogUnreadableError extends Error {
  constructor(problem: string, applied: bigint, logPath: string) {
    super(
      `the write-ahead log ${logPath} cannot be applied: ${problem}. LevelDB holds the batches up to ${applied}; ` +
        `batches acknowledged after it may be in the damaged part. To start from what LevelDB holds, move the file aside (those batches are then lost).`,
    );
  }
}

/** Where LevelDB records the sequence number of the last log record it applied. */
const appliedRecordKey = storeKeys.metadata("log-applied");

function sequenceBytes(sequence: bigint): Uint8Array {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(sequence);
  return bytes;
}

/**
 * Writes logged batches to LevelDB in one atomic batch, in order, with the sequence number of the
 * last of them under `appliedRecordKey` when given (a log written before sequence numbers has none).
 * LevelDB's chained batch: each operation goes to the native batch as it is added. The array form
 * costs the main thread two to three times as much (abstract-level copies and checks every
 * operation object, then the binding reads each one's properties back): 50-100 µs against 20-30 µs
 * for a block's twenty-odd operations here.
 */
async function writeToLevel(db: ClassicLevel<Uint8Array, Uint8Array>, batches: readonly { readonly operations: readonly StoreOperation[] }[], appliedSequence: bigint | undefined): Promise<void> {
  const levelBatch = db.batch();
  for (const { operations } of batches) {
    for (const operation of operations) {
      if (operation.type === "put") levelBatch.put(operation.key, operation.value);
      else levelBatch.del(operation.key);
    }
  }
  if (appliedSequence !== undefined) levelBatch.put(appliedRecordKey, sequenceBytes(appliedSequence));
  await levelBatch.write();
}

/** LevelDB's entries under `prefix`, in key order. */
function readEntries(db: ClassicLevel<Uint8Array, Uint8Array>, prefix: Uint8Array): Promise<[Uint8Array, Uint8Array][]> {
  const end = prefixEnd(prefix);
  return db.iterator(end === undefined ? { gte: prefix } : { gte: prefix, lt: end }).all();
}

/**
 * The LevelDB of a store another thread of this process has open (openLevelStore), for reading
 * only: it sees what that store's LevelDB holds, not the batches still on their way to it.
 */
export async function openLevelReader(directory: string): Promise<KeyValueStore> {
  const db = levelDatabaseAt(directory, false);
  await db.open();
  return {
    location: directory,
    get: async (key) => plainBytes(await db.get(key)),
    getSync: (key) => plainBytes(db.getSync(key)),
    entries: async (prefix) => (await readEntries(db, prefix)).map(([key, value]) => ({ key: plainBytes(key), value: plainBytes(value) })),
    write: () => Promise.reject(new Error(`the reader of ${directory} does not write`)),
    close: () => db.close(),
  };
}
