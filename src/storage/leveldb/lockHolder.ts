// Whether a process holds LevelDB's lock on a directory, told without taking it: LevelDB locks its
// LOCK file with fcntl, and Linux lists every such lock in /proc/locks with the file's device and
// inode. Opening LevelDB to find out would run its recovery, which rewrites its files; a check
// that reads them while a node writes them would report damage that is not there.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";

/** glibc's encoding of a device number from its major and minor numbers (as stat reports st_dev). */
function deviceNumber(major: number, minor: number): bigint {
  const [majorBig, minorBig] = [BigInt(major), BigInt(minor)];
  return (minorBig & 0xffn) | ((majorBig & 0xfffn) << 8n) | ((minorBig & ~0xffn) << 12n) | ((majorBig & ~0xfffn) << 32n);
}

/**
 * The id of the process holding the lock of the LevelDB in `directory`, or undefined when none
 * does (or the system does not list its locks in /proc/locks).
 */
export async function findLevelLockHolder(directory: string): Promise<number | undefined> {
  const lockFile = await stat(join(directory, "LOCK"), { bigint: true }).catch(() => undefined);
  if (lockFile === undefined) return undefined;
  const locks = await readFile("/proc/locks", "utf8").catch(() => "");
  for (const line of locks.split("\n")) {
    // "1: POSIX  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF" (lines of blocked waiters carry "->").
    const fields = line.trim().split(/\s+/);
    if (fields[1] === "->" || fields.length < 6) continue;
    const [major, minor, inode] = fields[5]!.split(":");
    if (inode === undefined || BigInt(inode) !== lockFile.ino) continue;
    if (deviceNumber(parseInt(major!, 16), parseInt(minor!, 16)) !== lockFile.dev) continue;
    return Number(fields[4]);
  }
  return undefined;
}
