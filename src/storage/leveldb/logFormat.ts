// LevelDB's log format, that of its own write-ahead log (NNNNNN.log) and of its MANIFEST: 32 KiB
// blocks of records, each a 7-byte header (masked CRC-32C of the type byte and the data, u32 LE;
// data length, u16 LE; type: 1 a whole record, 2 the first, 3 a middle and 4 the last fragment of
// one) and the data. Fewer than 7 bytes left in a block are padding. LevelDB opened without its
// paranoid checks (classic-level does not expose them) skips a record whose checksum fails, and
// the rest of its block, without a word: 29 blocks of the chain went that way. Reading the file
// here first finds such damage before LevelDB can drop it.
import { maskCrc, type Crc32c } from "./crc32c.js";

const blockBytes = 32 * 1024;
const headerBytes = 7;
const fullType = 1;
const firstType = 2;
const middleType = 3;
const lastType = 4;

export interface LevelLogContents {
  /** The logical records read whole, in order. */
  readonly records: Uint8Array[];
  /** Where the last record was cut short by the end of the file (a write interrupted), if it was. */
  readonly tornAt?: number;
  /** Damage before the end: where and what. */
  readonly damage?: string;
}

/** The records of a file in LevelDB's log format, up to the first damage. */
export function readLevelLog(file: Uint8Array, crc32c: Crc32c): LevelLogContents {
  const records: Uint8Array[] = [];
  let fragments: Uint8Array[] | undefined;
  let fragmentsStart = 0;
  let offset = 0;
  const type = new Uint8Array(1);
  while (offset < file.length) {
    const leftInBlock = blockBytes - (offset % blockBytes);
    if (leftInBlock < headerBytes) {
      offset += leftInBlock;
      continue;
    }
    const tornAt = fragments === undefined ? offset : fragmentsStart;
    if (file.length - offset < headerBytes) return { records, tornAt };
    const view = Buffer.from(file.buffer, file.byteOffset + offset, headerBytes);
    const length = view.readUInt16LE(4);
    type[0] = view[6]!;
    if (type[0] === 0 && length === 0) {
      // A region LevelDB preallocated and never wrote: the rest of the block.
      offset += leftInBlock;
      continue;
    }
    if (headerBytes + length > leftInBlock) {
      // Running past the end of the file inside the last block is a write cut short.
      if (offset + headerBytes + length > file.length && file.length - offset <= leftInBlock) return { records, tornAt };
      return { records, damage: `the record at byte ${offset} is longer than its block` };
    }
    if (offset + headerBytes + length > file.length) return { records, tornAt };
    const data = file.subarray(offset + headerBytes, offset + headerBytes + length);
    if (maskCrc(crc32c(type, data)) !== view.readUInt32LE(0)) return { records, damage: `the record at byte ${offset} does not match its checksum` };
    const kind = type[0];
    if (kind === fullType || kind === firstType) {
      if (fragments !== undefined) return { records, damage: `the record begun at byte ${fragmentsStart} has no end` };
      if (kind === fullType) records.push(data);
      else [fragments, fragmentsStart] = [[data], offset];
    } else if (kind === middleType || kind === lastType) {
      if (fragments === undefined) return { records, damage: `the record at byte ${offset} continues a record that was never begun` };
      fragments.push(data);
      if (kind === lastType) {
        records.push(Buffer.concat(fragments));
        fragments = undefined;
      }
    } else {
      return { records, damage: `the record at byte ${offset} has the unknown type ${kind}` };
    }
    offset += headerBytes + length;
  }
  return fragments === undefined ? { records } : { records, tornAt: fragmentsStart };
}
