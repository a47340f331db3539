// Checks a LevelDB database's own files without opening it: CURRENT names a manifest that reads
// whole; the logs it still needs read whole; every table it lists is there, of its size, with
// every block's checksum matching. Opening LevelDB rewrites its log into a table and writes a new
// manifest, and without paranoid checks it drops damaged log records and serves damaged table
// blocks silently; checked first, a damaged database is refused with the directory unchanged.
//
// Table files never change once written, so a table checked at one start is not read again at
// the next while its size, inode and change time are the same (recorded in checkedTablesFileName):
// a start reads only the tables LevelDB wrote since the last one. Any write to a file, or a
// change of its times, moves its change time, so a table changed since is checked again. Damage
// that leaves a file's change time alone (a failing disk) is found by `chain-node verify`, which
// reads every table.
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createCrc32c, type Crc32c } from "./crc32c.js";
import { readLevelLog } from "./logFormat.js";
import { playManifest, type LevelManifest } from "./manifest.js";
import { findTableDamage } from "./tableFile.js";

/** The node's record of the tables it checked, beside LevelDB's files (LevelDB leaves names it does not use alone). */
export const checkedTablesFileName = "CHAIN-NODE-CHECKED-TABLES";

export interface LevelFilesCheckOptions {
  /** Read every table, recorded as checked or not (`chain-node verify`). */
  readonly everyTable?: boolean;
  /**
   * Whether the node's own write-ahead log holds batches. LevelDB's last log record cut short by
   * the end of its file is a write a crash interrupted only if the node's log still holds that
   * batch: the node empties its log only once LevelDB has every batch in it, whole.
   */
  readonly nodeLogHoldsBatches: boolean;
}

export interface LevelFilesCheck {
  /** Each problem found, with the file it is in. */
  readonly damage: string[];
  /** LevelDB logs whose last record is cut short and taken for a torn write (the node's log holds batches). */
  readonly tornLogs: string[];
  /** Tables read (checked now rather than known from the record). */
  readonly tablesRead: number;
  /** Records the tables found whole as checked, for the next start. */
  recordChecked(): Promise<void>;
}

/** Identity of a table file's contents as the record keeps it: size, inode and change time. */
function fileIdentity(stats: { size: bigint; ino: bigint; ctimeNs: bigint }): string {
  return `${stats.size} ${stats.ino} ${stats.ctimeNs}`;
}

async function readRecord(directory: string): Promise<Map<string, string>> {
  const record = new Map<string, string>();
  const text = await readFile(join(directory, checkedTablesFileName), "utf8").catch(() => "");
  for (const line of text.split("\n")) {
    const [name, ...identity] = line.split(" ");
    if (name !== undefined && identity.length === 3) record.set(name, identity.join(" "));
  }
  return record;
}

const fileNumberName = (number: number, suffix: string) => `${String(number).padStart(6, "0")}.${suffix}`;

/** The manifest CURRENT names, read and played; or what is wrong with either. */
async function readManifest(directory: string, names: ReadonlySet<string>, crc32c: Crc32c): Promise<LevelManifest | string> {
  const current = await readFile(join(directory, "CURRENT"), "latin1").catch(() => undefined);
  const manifestName = current === undefined ? undefined : /^(MANIFEST-\d+)\n$/.exec(current)?.[1];
  if (manifestName === undefined) return "CURRENT does not name a manifest";
  if (!names.has(manifestName)) return `CURRENT names ${manifestName}, which is missing`;
  const contents = readLevelLog(await readFile(join(directory, manifestName)), crc32c);
  // LevelDB writes (and syncs) each manifest edit before it acts on it: a last edit cut short was
  // never acted on. But the first edit is the whole version: without it there is no database.
  if (contents.damage !== undefined) return `${manifestName}: ${contents.damage}`;
  if (contents.records.length === 0) return `${manifestName}: its first record${contents.tornAt === undefined ? " is missing" : ", at byte 0, runs past the end of the file"}`;
  const manifest = playManifest(contents.records);
  return typeof manifest === "string" ? `${manifestName}: ${manifest}` : manifest;
}

export async function checkLevelFiles(directory: string, options: LevelFilesCheckOptions): Promise<LevelFilesCheck> {
  const crc32c = await createCrc32c();
  const names = new Set(await readdir(directory));
  const damage: string[] = [];
  const tornLogs: string[] = [];
  const record = await readRecord(directory);
  const checked = new Map<string, string>();
  let tablesRead = 0;
  const result = (): LevelFilesCheck => ({
    damage,
    tornLogs,
    tablesRead,
    recordChecked: () => writeFile(join(directory, checkedTablesFileName), [...checked].map(([name, identity]) => `${name} ${identity}\n`).join("")),
  });
  const manifest = await readManifest(directory, names, crc32c);
  if (typeof manifest === "string") {
    damage.push(manifest);
    return result();
  }
  for (const name of [...names].sort()) {
    const logNumber = /^(\d+)\.log$/.exec(name)?.[1];
    // Older logs are obsolete: everything in them is in tables, and LevelDB deletes them at open.
    if (logNumber === undefined || (Number(logNumber) < manifest.logNumber && Number(logNumber) !== manifest.previousLogNumber)) continue;
    const contents = readLevelLog(await readFile(join(directory, name)), crc32c);
    if (contents.damage !== undefined) damage.push(`${name}: ${contents.damage}`);
    else if (contents.tornAt !== undefined) {
      if (options.nodeLogHoldsBatches) tornLogs.push(`${name}: its last record, at byte ${contents.tornAt}, runs past the end of the file`);
      else damage.push(`${name}: its last record, at byte ${contents.tornAt}, runs past the end of the file although the node's log holds no batch LevelDB could lack`);
    }
  }
  for (const [number, bytes] of manifest.tables) {
    const name = [fileNumberName(number, "ldb"), fileNumberName(number, "sst")].find((candidate) => names.has(candidate));
    if (name === undefined) {
      damage.push(`table ${fileNumberName(number, "ldb")} is missing`);
      continue;
    }
    const path = join(directory, name);
    const identity = fileIdentity(await stat(path, { bigint: true }));
    if (!options.everyTable && record.get(name) === identity) {
      checked.set(name, identity);
      continue;
    }
    const table = await readFile(path);
    tablesRead++;
    const tableDamage = table.length !== bytes ? `it holds ${table.length} bytes where the manifest says ${bytes}` : findTableDamage(table, crc32c);
    if (tableDamage !== undefined) damage.push(`${name}: ${tableDamage}`);
    else checked.set(name, identity);
  }
  return result();
}
