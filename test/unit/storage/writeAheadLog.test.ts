// The write-ahead log in front of LevelDB: records decode to the batches written, a record cut short
// or damaged ends the log, reads see a batch as soon as its write returns, and a store opened on a
// directory whose log holds batches LevelDB lacks applies them before anything is read.
import { expect } from "chai";
import { ClassicLevel } from "classic-level";
import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StoreOperation } from "../../../src/storage/keyValueStore.js";
import { openLevelStore, writeAheadLogFileName } from "../../../src/storage/levelStore.js";
import { decodeLogRecords, encodeLogRecord, legacyWriteAheadLogMark, writeAheadLogMark } from "../../../src/storage/writeAheadLog.js";
import { encodeLegacyLogRecord } from "../../helpers/legacyWriteAheadLog.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array | undefined) => (value === undefined ? undefined : new TextDecoder().decode(value));

/** Every file of `directory` with its bytes (LevelDB's own LOG aside: its text says when it was opened). */
function directoryContents(directory: string): Record<string, string> {
  const contents: Record<string, string> = {};
  for (const name of readdirSync(directory).sort()) contents[name] = readFileSync(join(directory, name)).toString("hex");
  return contents;
}

/** Waits (up to 5 s) until `condition` holds. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited >= 5_000) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function randomBatch(next: () => number): StoreOperation[] {
  return Array.from({ length: 1 + (next() >>> 28) }, () => {
    const key = randomBytes(next, 1 + (next() >>> 26));
    return next() >>> 31 === 0 ? { type: "del" as const, key } : { type: "put" as const, key, value: randomBytes(next, next() >>> 22) };
  });
}

describe("storage/writeAheadLog", () => {
  let directory: string;
  beforeEach(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-wal-"))));
  afterEach(() => rm(directory, { recursive: true, force: true }));

  /** A log of the format written, holding `batches` numbered from `first`. */
  const logOfBatches = (batches: readonly StoreOperation[][], first = 1n) =>
    Buffer.concat([writeAheadLogMark, ...batches.map((batch, index) => encodeLogRecord(batch, first + BigInt(index)))]);

  it("decodes records to the batches encoded, in order", () => {
    const next = seededRandom(41);
    const batches = Array.from({ length: 50 }, () => randomBatch(next));
    const log = logOfBatches(batches);
    const decoded = decodeLogRecords(log);
    expect(decoded).to.include({ format: 3, end: "clean", validBytes: log.length });
    expect(decoded.batches).to.deep.equal(batches);
    expect(decoded.records.map((record) => record.sequence)).to.deep.equal(batches.map((_, index) => BigInt(index + 1)));
  });

  it("takes only a write cut short at the end of the file for a torn write, naming its batch when its header is whole", () => {
    const next = seededRandom(42);
    const whole = logOfBatches(Array.from({ length: 3 }, () => randomBatch(next)));
    const twoRecords = decodeLogRecords(whole).validBytes - encodeLogRecord(decodeLogRecords(whole).batches[2]!, 3n).length;
    for (let cut = twoRecords + 1; cut < whole.length; cut++) {
      const decoded = decodeLogRecords(whole.subarray(0, cut));
      expect(decoded, `cut at ${cut}`).to.include({ end: "torn", validBytes: twoRecords });
      expect(decoded.batches).to.have.length(2);
      expect(decoded.torn).to.deep.equal({ sequence: cut - twoRecords >= 20 ? 3n : undefined, bytes: cut - twoRecords });
    }
    // A tail of zeros after the last record: a file extended whose data never reached the disk.
    expect(decodeLogRecords(Buffer.concat([whole, Buffer.alloc(300)]))).to.include({ end: "torn", validBytes: whole.length });
    // The first write cut short inside the mark.
    expect(decodeLogRecords(writeAheadLogMark.subarray(0, 5))).to.include({ end: "torn", validBytes: 0 });
  });

  it("takes damage anywhere for damage, the last record's length and payload included", () => {
    const next = seededRandom(44);
    const whole = logOfBatches(Array.from({ length: 3 }, () => randomBatch(next)));
    const lastStart = decodeLogRecords(whole.subarray(0, whole.length - 1)).validBytes;
    const flipped = (offset: number, mask = 0x01) => {
      const damaged = Buffer.from(whole);
      damaged[offset]! ^= mask;
      return decodeLogRecords(damaged);
    };
    // (A flip of the mark's last bit reads as format 2's mark, whose records then do not check.)
    for (let offset = 0; offset < 8; offset++) expect(flipped(offset), `mark byte ${offset}`).to.have.property("end", "damaged");
    expect(flipped(lastStart + 3, 0x80).damage, "the high byte of the last record's length").to.equal(`the header of the record at byte ${lastStart} does not match its checksum`);
    expect(flipped(lastStart + 4).damage, "its sequence number").to.match(/header of the record at byte \d+ does not match/);
    expect(flipped(whole.length - 1).damage, "its last byte").to.equal(`batch 3 (the record at byte ${lastStart}) does not match its checksum`);
    expect(flipped(8 + 25)).to.include({ end: "damaged", validBytes: 8 });
    // Records out of order, each whole.
    const reordered = Buffer.concat([writeAheadLogMark, encodeLogRecord([], 1n), encodeLogRecord([], 3n)]);
    expect(decodeLogRecords(reordered).damage).to.equal("the record at byte 32 holds batch 3 after batch 1");
  });

  it("reads logs of the older formats, where a record failing at the end of the file is taken for a torn write as before", () => {
    const next = seededRandom(45);
    const batches = Array.from({ length: 3 }, () => randomBatch(next));
    for (const sequenced of [false, true]) {
      const records = batches.map((batch, index) => encodeLegacyLogRecord(batch, sequenced ? BigInt(index + 1) : undefined));
      const log = Buffer.concat([sequenced ? legacyWriteAheadLogMark : Buffer.alloc(0), ...records]);
      expect(decodeLogRecords(log)).to.include({ format: sequenced ? 2 : 1, end: "clean" });
      expect(decodeLogRecords(log).batches).to.deep.equal(batches);
      const damagedLast = Buffer.from(log);
      damagedLast[log.length - 1]! ^= 1;
      expect(decodeLogRecords(damagedLast)).to.include({ end: "torn" });
      const damagedFirst = Buffer.from(log);
      damagedFirst[(sequenced ? 8 : 0) + 12]! ^= 1;
      expect(decodeLogRecords(damagedFirst)).to.include({ end: "damaged" });
    }
  });

  it("answers a batch as soon as its write returns, and keeps it across a reopen", async () => {
    const store = await openLevelStore(directory);
    await store.write([
      { type: "put", key: bytes("a"), value: bytes("1") },
      { type: "put", key: bytes("b"), value: bytes("2") },
    ]);
    expect(text(store.getSync(bytes("a")))).to.equal("1");
    await store.write([
      { type: "del", key: bytes("a") },
      { type: "put", key: bytes("b"), value: bytes("3") },
    ]);
    expect(store.getSync(bytes("a"))).to.equal(undefined);
    expect(text(await store.get(bytes("b")))).to.equal("3");
    await store.close();
    expect(statSync(join(directory, writeAheadLogFileName)).size, "log emptied at close").to.equal(0);

    const reopened = await openLevelStore(directory);
    expect(reopened.getSync(bytes("a"))).to.equal(undefined);
    expect(text(reopened.getSync(bytes("b")))).to.equal("3");
    await reopened.close();
  });

  it("lists the entries under a prefix in key order, batches on their way to LevelDB included", async () => {
    const listed = async (store: Awaited<ReturnType<typeof openLevelStore>>, prefix: Uint8Array) =>
      (await store.entries(prefix)).map(({ key, value }) => `${Buffer.from(key).toString("hex")}=${text(value)}`);
    const store = await openLevelStore(directory);
    await store.write([
      { type: "put", key: bytes("pb"), value: bytes("2") },
      { type: "put", key: bytes("pa"), value: bytes("1") },
      { type: "put", key: bytes("q"), value: bytes("x") },
      { type: "put", key: new Uint8Array([0x70, 0xff]), value: bytes("3") },
      { type: "put", key: new Uint8Array([0xff, 0xff, 0x01]), value: bytes("4") },
    ]);
    await store.close();
    const reopened = await openLevelStore(directory);
    // Not yet in LevelDB when listed: one deleted, one changed, one new.
    await reopened.write([
      { type: "del", key: bytes("pa") },
      { type: "put", key: bytes("pb"), value: bytes("5") },
      { type: "put", key: bytes("p0"), value: bytes("6") },
    ]);
    expect(reopened.settled).to.equal(false);
    expect(await listed(reopened, bytes("p"))).to.deep.equal(["7030=6", "7062=5", "70ff=3"]);
    expect(await listed(reopened, new Uint8Array([0xff, 0xff]))).to.deep.equal(["ffff01=4"]);
    await reopened.close();
  });

  it("refuses a second store on the same directory in this process, and writes once closing", async () => {
    const store = await openLevelStore(directory);
    let refusal: Error | undefined;
    await openLevelStore(join(directory, ".")).catch((error: Error) => (refusal = error));
    expect(refusal?.message).to.include("in use by this process");
    const closing = store.close();
    let writeRefusal: Error | undefined;
    await store.write([{ type: "put", key: bytes("late"), value: bytes("1") }]).catch((error: Error) => (writeRefusal = error));
    expect(writeRefusal?.message).to.include("closing");
    await closing;
    const reopened = await openLevelStore(directory);
    expect(reopened.getSync(bytes("late"))).to.equal(undefined);
    await reopened.close();
  });

  it("keeps serving a batch LevelDB failed to take, refuses later writes, and applies it at the next open", async () => {
    const store = await openLevelStore(directory);
    const internals = store as unknown as { db: ClassicLevel<Uint8Array, Uint8Array>; failure: Error | undefined };
    await store.write([{ type: "put", key: bytes("a"), value: bytes("1") }]);
    await until(() => store.settled, "LevelDB holds the first batch");
    // LevelDB goes away under the store once it holds the first batch: the next reaches the log only.
    await internals.db.close();
    await store.write([
      { type: "put", key: bytes("b"), value: bytes("2") },
      { type: "del", key: bytes("a") },
    ]);
    await until(() => internals.failure !== undefined, "LevelDB refused the second batch");
    expect(text(store.getSync(bytes("b"))), "the batch is still read from the log's side").to.equal("2");
    expect(store.getSync(bytes("a"))).to.equal(undefined);
    let refusal: Error | undefined;
    await store.write([{ type: "put", key: bytes("c"), value: bytes("3") }]).catch((error: Error) => (refusal = error));
    expect(refusal?.message).to.match(/^LevelDB in .* failed a write: /);
    await store.close().catch(() => undefined);

    const reopened = await openLevelStore(directory);
    expect(text(reopened.getSync(bytes("b")))).to.equal("2");
    expect(reopened.getSync(bytes("a"))).to.equal(undefined);
    expect(reopened.getSync(bytes("c"))).to.equal(undefined);
    await reopened.close();
  });

  it("agrees with a plain map over many batches written without waiting", async () => {
    const next = seededRandom(43);
    const store = await openLevelStore(directory);
    const expected = new Map<string, Uint8Array>();
    const keys = Array.from({ length: 40 }, (_, index) => bytes(`key-${index}`));
    const writes: Promise<void>[] = [];
    for (let round = 0; round < 300; round++) {
      const operations: StoreOperation[] = Array.from({ length: 1 + (next() >>> 29) }, () => {
        const key = keys[(next() >>> 16) % keys.length]!;
        return next() >>> 30 === 0 ? { type: "del" as const, key } : { type: "put" as const, key, value: randomBytes(next, 1 + (next() >>> 27)) };
      });
      writes.push(store.write(operations));
      for (const operation of operations) {
        if (operation.type === "put") expected.set(text(operation.key)!, operation.value);
        else expected.delete(text(operation.key)!);
      }
      if (round % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
      for (const key of keys) expect(store.getSync(key), `round ${round}`).to.deep.equal(expected.get(text(key)!));
    }
    await Promise.all(writes);
    await store.close();
    const db = new ClassicLevel<Uint8Array, Uint8Array>(directory, { keyEncoding: "view", valueEncoding: "view" });
    await db.open();
    for (const key of keys) expect(await db.get(key)).to.deep.equal(expected.get(text(key)!));
    await db.close();
  });

  describe("with a wait before LevelDB writes longer than any test", () => {
    const forever = { levelWriteDelayMs: 600_000 };
    const inLevel = async (keys: string[]) => {
      const db = new ClassicLevel<Uint8Array, Uint8Array>(directory, { keyEncoding: "view", valueEncoding: "view" });
      await db.open();
      try {
        return await Promise.all(keys.map(async (key) => text(await db.get(bytes(key)))));
      } finally {
        await db.close();
      }
    };

    it("hands batches written a turn of the event loop apart to LevelDB together: those that came while LevelDB wrote wait for the next hurry", async () => {
      const store = await openLevelStore(directory, forever);
      // The store's LevelDB, watched for the chained batches it is given.
      const level = (store as unknown as { db: ClassicLevel<Uint8Array, Uint8Array> }).db;
      const chainedBatch = level.batch.bind(level) as () => ReturnType<typeof level.batch>;
      let levelWrites = 0;
      (level as unknown as { batch: () => unknown }).batch = () => {
        levelWrites++;
        return chainedBatch();
      };
      const batches = 40;
      for (let index = 0; index < batches; index++) {
        await store.write([{ type: "put", key: bytes(`block-${index}`), value: bytes(`body of ${index}`) }]);
        // Halfway, LevelDB is asked to write what waits; the batches after it come while it writes.
        if (index === batches / 2 - 1) store.hurry();
        await new Promise((resolve) => setImmediate(resolve));
      }
      store.hurry();
      await until(() => store.settled, "LevelDB holds every batch");
      expect(levelWrites, "LevelDB writes").to.equal(2);
      for (let index = 0; index < batches; index++) expect(text(await level.get(bytes(`block-${index}`)))).to.equal(`body of ${index}`);
      await store.close();
    });

    it("hands the waiting batches to LevelDB at once when hurried, and serves them meanwhile", async () => {
      const store = await openLevelStore(directory, forever);
      await store.write([{ type: "put", key: bytes("a"), value: bytes("1") }]);
      await store.write([{ type: "put", key: bytes("b"), value: bytes("2") }]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(store.settled, "settled before the wait ends").to.equal(false);
      expect(text(store.getSync(bytes("b")))).to.equal("2");
      store.hurry();
      await until(() => store.settled, "LevelDB holds the hurried batches");
      await store.close();
      expect(await inLevel(["a", "b"])).to.deep.equal(["1", "2"]);
    });

    it("closes without waiting, with every batch in LevelDB", async () => {
      const store = await openLevelStore(directory, forever);
      for (let index = 0; index < 5; index++) await store.write([{ type: "put", key: bytes(`k${index}`), value: bytes(`v${index}`) }]);
      await store.close();
      expect(await inLevel(["k0", "k4"])).to.deep.equal(["v0", "v4"]);
      expect(statSync(join(directory, writeAheadLogFileName)).size, "log emptied at close").to.be.at.most(writeAheadLogMark.length);
    });

    it("writes without waiting once the queued operations pass the limit", async () => {
      const store = await openLevelStore(directory, forever);
      await store.write(Array.from({ length: 5_000 }, (_, index) => ({ type: "put" as const, key: bytes(`many-${index}`), value: bytes(`${index}`) })));
      await until(() => store.settled, "LevelDB holds the large batch");
      await store.close();
      expect(await inLevel(["many-0", "many-4999"])).to.deep.equal(["0", "4999"]);
    });
  });

  it("applies the batches a log written before sequence numbers still holds, up to a torn record", async () => {
    // LevelDB holds "a" = 1; the log holds two later batches LevelDB never got, then half a record.
    const db = new ClassicLevel<Uint8Array, Uint8Array>(directory, { keyEncoding: "view", valueEncoding: "view" });
    await db.open();
    await db.put(bytes("a"), bytes("1"));
    await db.close();
    const logPath = join(directory, writeAheadLogFileName);
    const torn = encodeLegacyLogRecord([{ type: "put", key: bytes("c"), value: bytes("lost") }]);
    writeFileSync(logPath, encodeLegacyLogRecord([{ type: "put", key: bytes("a"), value: bytes("2") }]));
    appendFileSync(logPath, encodeLegacyLogRecord([{ type: "put", key: bytes("b"), value: bytes("3") }, { type: "del", key: bytes("a") }]));
    appendFileSync(logPath, torn.subarray(0, torn.length - 3));

    const store = await openLevelStore(directory);
    expect(readFileSync(logPath).length, "log emptied once applied").to.equal(0);
    expect(store.getSync(bytes("a"))).to.equal(undefined);
    expect(text(store.getSync(bytes("b")))).to.equal("3");
    expect(store.getSync(bytes("c"))).to.equal(undefined);
    // The next batch follows the recovered ones, not the torn tail.
    await store.write([{ type: "put", key: bytes("d"), value: bytes("4") }]);
    expect(decodeLogRecords(readFileSync(logPath)).batches).to.have.length(1);
    await store.close();
  });

  describe("a log with sequence numbers", () => {
    const head = (value: number): StoreOperation[] => [{ type: "put", key: bytes("head"), value: bytes(String(value)) }];
    /** A closed store whose LevelDB holds head = 5 after five batches; answers the log's path. */
    async function storeAtFive(): Promise<string> {
      const store = await openLevelStore(directory);
      for (let value = 1; value <= 5; value++) await store.write(head(value));
      await store.close();
      return join(directory, writeAheadLogFileName);
    }
    const logOf = (...records: Buffer[]) => Buffer.concat([writeAheadLogMark, ...records]);
    async function headAfterOpening(): Promise<string | undefined> {
      const store = await openLevelStore(directory);
      try {
        return text(store.getSync(bytes("head")));
      } finally {
        await store.close();
      }
    }
    async function refusal(): Promise<string> {
      try {
        await (await openLevelStore(directory)).close();
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error("the store opened");
    }

    it("numbers each batch and starts with the mark", async () => {
      const store = await openLevelStore(directory);
      await store.write(head(1));
      await store.write(head(2));
      const logged = decodeLogRecords(readFileSync(join(directory, writeAheadLogFileName)));
      expect(logged.format).to.equal(3);
      expect(logged.records.map((record) => record.sequence)).to.deep.equal([1n, 2n]);
      await store.close();
      // After a reopen the numbering goes on.
      const reopened = await openLevelStore(directory);
      await reopened.write(head(3));
      expect(decodeLogRecords(readFileSync(join(directory, writeAheadLogFileName))).records.map((record) => record.sequence)).to.deep.equal([3n]);
      await reopened.close();
    });

    it("logs each batch as given whatever its size: growing past the buffer it reuses, past its limit, and small again", async () => {
      const next = seededRandom(43);
      const batchOf = (valueBytes: number): StoreOperation[] => [
        { type: "put", key: randomBytes(next, 32), value: randomBytes(next, valueBytes) },
        { type: "del", key: randomBytes(next, 20) },
      ];
      const batches = [batchOf(10), batchOf(40_000), batchOf(300_000), batchOf(10), batchOf(70_000)];
      const store = await openLevelStore(directory);
      for (const batch of batches) await store.write(batch);
      const logged = decodeLogRecords(readFileSync(join(directory, writeAheadLogFileName)));
      expect(logged.end).to.equal("clean");
      expect(logged.records.map((record) => record.operations)).to.deep.equal(batches);
      await store.close();
    });

    it("never applies again a batch LevelDB holds: a stale or shortened log cannot take the store back", async () => {
      const logPath = await storeAtFive();
      writeFileSync(logPath, logOf(encodeLogRecord(head(2), 2n), encodeLogRecord(head(3), 3n)));
      expect(await headAfterOpening()).to.equal("5");
      // Batches after LevelDB's go on top, then the numbering follows them.
      writeFileSync(logPath, logOf(encodeLogRecord(head(5), 5n), encodeLogRecord(head(6), 6n), encodeLogRecord(head(7), 7n)));
      expect(await headAfterOpening()).to.equal("7");
      const store = await openLevelStore(directory);
      await store.write(head(8));
      expect(decodeLogRecords(readFileSync(logPath)).records.map((record) => record.sequence)).to.deep.equal([8n]);
      await store.close();
    });

    it("applies up to a torn last record, warning of it, and refuses damage anywhere, leaving the directory as it was", async () => {
      const logPath = await storeAtFive();
      const torn = encodeLogRecord(head(7), 7n);
      writeFileSync(logPath, logOf(encodeLogRecord(head(6), 6n), torn.subarray(0, torn.length - 2)));
      const warnings: unknown[] = [];
      const store = await openLevelStore(directory, { warn: (details) => warnings.push(details) });
      expect(text(store.getSync(bytes("head")))).to.equal("6");
      await store.close();
      expect(warnings).to.deep.equal([{ log: logPath, batch: "7", bytes: torn.length - 2 }]);

      const records = [encodeLogRecord(head(7), 7n), encodeLogRecord(head(8), 8n), encodeLogRecord(head(9), 9n)];
      const lastStart = 8 + records[0]!.length + records[1]!.length;
      for (const offset of [3, 8 + 2, lastStart + 3, lastStart + 25, lastStart + records[2]!.length - 1]) {
        const damaged = logOf(...records);
        damaged[offset]! ^= 0x80;
        writeFileSync(logPath, damaged);
        const before = directoryContents(directory);
        const message = await refusal();
        expect(message, `byte ${offset}`).to.match(/write-ahead log .* is damaged: .*Nothing in .* was changed\. To start from .* cut the log at byte \d+ \(truncate -s/);
        expect(directoryContents(directory), `byte ${offset}: the directory is left as it was`).to.deep.equal(before);
      }

      writeFileSync(logPath, logOf(encodeLogRecord(head(9), 9n)));
      expect(await refusal()).to.match(/cannot be applied: it lacks batch 7\. LevelDB holds the batches up to 6/);
      writeFileSync(logPath, Buffer.alloc(0));
      expect(await headAfterOpening()).to.equal("6");
    });

    it("applies a log of format 2 past what LevelDB holds, and writes the current format after it", async () => {
      const logPath = await storeAtFive();
      writeFileSync(logPath, Buffer.concat([legacyWriteAheadLogMark, encodeLegacyLogRecord(head(5), 5n), encodeLegacyLogRecord(head(6), 6n)]));
      const store = await openLevelStore(directory);
      expect(text(store.getSync(bytes("head")))).to.equal("6");
      await store.write(head(7));
      expect(decodeLogRecords(readFileSync(logPath))).to.deep.include({ format: 3, batches: [head(7)] });
      await store.close();
    });
  });
});
