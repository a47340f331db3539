// The write-ahead log in front of LevelDB: records decode to the batches written, a record cut short
// or damaged ends the log, reads see a batch as soon as its write returns, and a store opened on a
// directory whose log holds batches LevelDB lacks applies them before anything is read.
import { expect } from "chai";
import { ClassicLevel } from "classic-level";
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StoreOperation } from "../../../src/storage/keyValueStore.js";
import { openLevelStore, writeAheadLogFileName } from "../../../src/storage/levelStore.js";
import { decodeLogRecords, encodeLogRecord, sequencedLogMark } from "../../../src/storage/writeAheadLog.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array | undefined) => (value === undefined ? undefined : new TextDecoder().decode(value));

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

  it("decodes records to the batches encoded, in order", () => {
    const next = seededRandom(41);
    const batches = Array.from({ length: 50 }, () => randomBatch(next));
    const log = Buffer.concat(batches.map((batch) => encodeLogRecord(batch)));
    const decoded = decodeLogRecords(log);
    expect(decoded.validBytes).to.equal(log.length);
    expect(decoded.batches).to.deep.equal(batches);
  });

  it("ends the log at a record cut short or damaged", () => {
    const next = seededRandom(42);
    const records = Array.from({ length: 3 }, () => encodeLogRecord(randomBatch(next)));
    const whole = Buffer.concat(records);
    const twoRecords = records[0]!.length + records[1]!.length;
    for (let cut = twoRecords; cut < whole.length; cut++) {
      const decoded = decodeLogRecords(whole.subarray(0, cut));
      expect(decoded.batches, `cut at ${cut}`).to.have.length(2);
      expect(decoded.validBytes).to.equal(twoRecords);
    }
    const damaged = Buffer.from(whole);
    damaged[records[0]!.length + 12]! ^= 0x01; // a payload byte of the second record
    expect(decodeLogRecords(damaged).batches).to.have.length(1);
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
      expect(statSync(join(directory, writeAheadLogFileName)).size, "log emptied at close").to.be.at.most(sequencedLogMark.length);
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
    const torn = encodeLogRecord([{ type: "put", key: bytes("c"), value: bytes("lost") }]);
    writeFileSync(logPath, encodeLogRecord([{ type: "put", key: bytes("a"), value: bytes("2") }]));
    appendFileSync(logPath, encodeLogRecord([{ type: "put", key: bytes("b"), value: bytes("3") }, { type: "del", key: bytes("a") }]));
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
    const logOf = (...records: Buffer[]) => Buffer.concat([sequencedLogMark, ...records]);
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
      expect(logged.sequenced).to.equal(true);
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

    it("applies up to a torn last record, and refuses damage before the end or a missing batch, leaving the log as it was", async () => {
      const logPath = await storeAtFive();
      const torn = encodeLogRecord(head(7), 7n);
      writeFileSync(logPath, logOf(encodeLogRecord(head(6), 6n), torn.subarray(0, torn.length - 2)));
      expect(await headAfterOpening()).to.equal("6");

      const damaged = logOf(encodeLogRecord(head(7), 7n), encodeLogRecord(head(8), 8n), encodeLogRecord(head(9), 9n));
      damaged[sequencedLogMark.length + 20] ^= 0xff;
      writeFileSync(logPath, damaged);
      expect(await refusal()).to.match(/cannot be applied: it is damaged at byte 8, before its end\. LevelDB holds the batches up to 6; .*move the file aside/);
      expect(readFileSync(logPath).equals(damaged), "the damaged log is left as it was").to.equal(true);

      writeFileSync(logPath, logOf(encodeLogRecord(head(9), 9n)));
      expect(await refusal()).to.match(/cannot be applied: it lacks batch 7\. LevelDB holds the batches up to 6/);
      writeFileSync(logPath, Buffer.alloc(0));
      expect(await headAfterOpening()).to.equal("6");
    });
  });
});
