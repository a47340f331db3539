// LevelDB's own files checked without opening the database: a damaged log record, table block,
// manifest or CURRENT is found (each byte of a table and of a log tried), a log cut short at its
// end is a torn write only while the node's log still holds batches, and a table recorded as
// checked is not read again until it changes.
import { expect } from "chai";
import { ClassicLevel } from "classic-level";
import { readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCrc32c, type Crc32c } from "../../../src/storage/leveldb/crc32c.js";
import { checkLevelFiles } from "../../../src/storage/leveldb/filesCheck.js";
import { readLevelLog } from "../../../src/storage/leveldb/logFormat.js";
import { findTableDamage } from "../../../src/storage/leveldb/tableFile.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

/**
 * A closed LevelDB with one table (written at the second open, from the first open's log) and a
 * log of later writes. Values repeat themselves, so that snappy compresses the blocks.
 */
async function levelDatabase(directory: string): Promise<void> {
  const next = seededRandom(7);
  const write = async (from: number, count: number) => {
    const db = new ClassicLevel<Uint8Array, Uint8Array>(directory, { keyEncoding: "view", valueEncoding: "view" });
    await db.open();
    const batch = db.batch();
    for (let index = from; index < from + count; index++) {
      const unit = randomBytes(next, 8);
      batch.put(new TextEncoder().encode(`key-${index}`), Buffer.concat(Array.from({ length: 1 + (index % 40) }, () => unit)));
    }
    await batch.write();
    await db.close();
  };
  await write(0, 300);
  await write(300, 400);
}

const fileWith = (directory: string, pattern: RegExp) => join(directory, readdirSync(directory).find((name) => pattern.test(name))!);

describe("storage/leveldb files check", () => {
  let directory: string;
  let crc32c: Crc32c;
  before(async () => (crc32c = await createCrc32c()));
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), "chain-node-level-files-"));
    await levelDatabase(directory);
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it("finds a whole database whole, and reads a table recorded as checked again only once it changed", async () => {
    const first = await checkLevelFiles(directory, { nodeLogHoldsBatches: false });
    expect(first.damage).to.deep.equal([]);
    expect(first.tablesRead).to.equal(1);
    await first.recordChecked();
    expect((await checkLevelFiles(directory, { nodeLogHoldsBatches: false })).tablesRead).to.equal(0);
    expect((await checkLevelFiles(directory, { nodeLogHoldsBatches: false, everyTable: true })).tablesRead).to.equal(1);
    // The same bytes written again: the change time moves, and the table is read again.
    const table = fileWith(directory, /\.ldb$/);
    writeFileSync(table, readFileSync(table));
    expect((await checkLevelFiles(directory, { nodeLogHoldsBatches: false })).tablesRead).to.equal(1);
  });

  it("finds a flipped byte anywhere in a table but in its footer's padding, compressed blocks included", () => {
    const table = readFileSync(fileWith(directory, /\.ldb$/));
    expect(findTableDamage(table, crc32c)).to.equal(undefined);
    // 300 values of 8 to 320 bytes, some 49 KB: a table far smaller holds snappy-compressed blocks.
    expect(table.length).to.be.within(4_000, 20_000);
    const missed: number[] = [];
    for (let offset = 0; offset < table.length; offset++) {
      const damaged = Buffer.from(table);
      damaged[offset]! ^= 0x10;
      if (findTableDamage(damaged, crc32c) === undefined) missed.push(offset);
    }
    // Only padding between the footer's two block handles and its magic number may go unseen.
    const footerStart = table.length - 48;
    expect(missed.every((offset) => offset > footerStart + 4 && offset < table.length - 8 && table[offset] === 0), `missed: ${missed.join(",")}`).to.equal(true);
  });

  it("finds a flipped byte anywhere in the log but in a block's padding, and takes a record cut short at the end for torn only while the node's log holds batches", async () => {
    const log = readFileSync(fileWith(directory, /\.log$/));
    const whole = readLevelLog(log, crc32c);
    expect([whole.damage, whole.tornAt, whole.records.length]).to.deep.equal([undefined, undefined, 1]);
    expect(log.length).to.be.above(32 * 1024);
    const unseen: number[] = [];
    for (let offset = 0; offset < log.length; offset += 7) {
      const damaged = Buffer.from(log);
      damaged[offset]! ^= 0x04;
      const read = readLevelLog(damaged, crc32c);
      if (read.damage === undefined && read.tornAt === undefined) unseen.push(offset);
    }
    expect(unseen.every((offset) => offset % (32 * 1024) > 32 * 1024 - 7), `unseen: ${unseen.join(",")}`).to.equal(true);

    const logPath = fileWith(directory, /\.log$/);
    writeFileSync(logPath, log.subarray(0, log.length - 10));
    expect((await checkLevelFiles(directory, { nodeLogHoldsBatches: true })).damage).to.deep.equal([]);
    expect((await checkLevelFiles(directory, { nodeLogHoldsBatches: false })).damage[0]).to.match(/^\d+\.log: its last record, at byte \d+, runs past the end of the file/);
  });

  it("finds a damaged manifest, a CURRENT that names none, a missing table and a table of the wrong size", async () => {
    const damage = async () => (await checkLevelFiles(directory, { nodeLogHoldsBatches: false })).damage;
    const manifestPath = fileWith(directory, /^MANIFEST-/);
    const manifest = readFileSync(manifestPath);
    const damagedManifest = Buffer.from(manifest);
    damagedManifest[12]! ^= 0x01;
    writeFileSync(manifestPath, damagedManifest);
    expect(await damage()).to.deep.equal([`${manifestPath.split("/").at(-1)}: the record at byte 0 does not match its checksum`]);
    // The length of its first (and only) record made longer: the record seems cut short, and
    // without that first edit there is no version of the database at all.
    const longerFirstRecord = Buffer.from(manifest);
    longerFirstRecord[5]! ^= 0x20;
    writeFileSync(manifestPath, longerFirstRecord);
    expect(await damage()).to.deep.equal([`${manifestPath.split("/").at(-1)}: its first record, at byte 0, runs past the end of the file`]);
    writeFileSync(manifestPath, manifest);

    const currentPath = join(directory, "CURRENT");
    const current = readFileSync(currentPath);
    writeFileSync(currentPath, "MANIFEST-00000x\n");
    expect(await damage()).to.deep.equal(["CURRENT does not name a manifest"]);
    writeFileSync(currentPath, current);

    const tablePath = fileWith(directory, /\.ldb$/);
    const table = readFileSync(tablePath);
    writeFileSync(tablePath, table.subarray(0, table.length - 1));
    expect((await damage())[0]).to.match(/\.ldb: it holds \d+ bytes where the manifest says \d+$/);
    unlinkSync(tablePath);
    expect((await damage())[0]).to.match(/^table \d+\.ldb is missing$/);
    expect(statSync(manifestPath).size).to.equal(manifest.length);
  });
});
