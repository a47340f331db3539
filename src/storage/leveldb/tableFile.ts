// LevelDB's table files (NNNNNN.ldb): blocks, each followed by a 5-byte trailer (the block's
// compression type and the masked CRC-32C of its bytes and that type), then a 48-byte footer that
// locates the index block (one entry per data block: its offset and size) and the metaindex block
// (the filter block's), and ends with a magic number. LevelDB checks a block's checksum only when
// asked to (classic-level never asks), so a flipped byte in a table was served as data. Here every
// block's checksum is checked and the blocks must tile the file, so no byte of it goes unchecked.
import { maskCrc, type Crc32c } from "./crc32c.js";
import { snappyDecompress } from "./snappy.js";
import { readVarint } from "./varint.js";

const footerBytes = 48;
const trailerBytes = 5;
const magicLow = 0x8b80fb57;
const magicHigh = 0xdb477524;
const noCompression = 0;
const snappyCompression = 1;

interface BlockHandle {
  readonly offset: number;
  readonly size: number;
}

class TableDamage extends Error {}

function readHandle(bytes: Uint8Array, offset: number): { handle: BlockHandle; next: number } {
  const blockOffset = readVarint(bytes, offset);
  const size = blockOffset === undefined ? undefined : readVarint(bytes, blockOffset.next);
  if (blockOffset === undefined || size === undefined) throw new TableDamage(`a block handle at byte ${offset} does not parse`);
  return { handle: { offset: blockOffset.value, size: size.value }, next: size.next };
}

/** Checks the block's checksum (over its bytes as stored and its compression type); answers those bytes and the type. */
function checkBlock(table: Buffer, handle: BlockHandle, dataEnd: number, crc32c: Crc32c): { contents: Buffer; type: number } {
  const end = handle.offset + handle.size;
  if (end + trailerBytes > dataEnd) throw new TableDamage(`the block at byte ${handle.offset} runs past the table's blocks`);
  const contents = table.subarray(handle.offset, end);
  if (maskCrc(crc32c(contents, table.subarray(end, end + 1))) !== table.readUInt32LE(end + 1)) throw new TableDamage(`the block at byte ${handle.offset} does not match its checksum`);
  return { contents, type: table[end]! };
}

/** The block's contents, uncompressed, once its checksum matched (only the index blocks are read: data blocks are checked). */
function readBlock(table: Buffer, handle: BlockHandle, dataEnd: number, crc32c: Crc32c): Uint8Array {
  const { contents, type } = checkBlock(table, handle, dataEnd, crc32c);
  if (type === noCompression) return contents;
  const uncompressed = type === snappyCompression ? snappyDecompress(contents) : undefined;
  if (uncompressed === undefined) throw new TableDamage(`the block at byte ${handle.offset} does not decompress`);
  return uncompressed;
}

/** The values of a block's entries (keys are skipped: only the handles they map to matter here). */
function blockValues(block: Uint8Array, at: number): Uint8Array[] {
  const view = Buffer.from(block.buffer, block.byteOffset, block.byteLength);
  if (block.length < 4) throw new TableDamage(`the block at byte ${at} is too short`);
  const restarts = view.readUInt32LE(block.length - 4);
  const entriesEnd = block.length - 4 * (restarts + 1);
  if (entriesEnd < 0) throw new TableDamage(`the block at byte ${at} does not parse`);
  const values: Uint8Array[] = [];
  for (let offset = 0; offset < entriesEnd; ) {
    const shared = readVarint(block, offset);
    const unshared = shared && readVarint(block, shared.next);
    const valueLength = unshared && readVarint(block, unshared.next);
    const valueStart = valueLength === undefined ? undefined : valueLength.next + unshared!.value;
    if (valueStart === undefined || valueStart + valueLength!.value > entriesEnd) throw new TableDamage(`the block at byte ${at} does not parse`);
    values.push(block.subarray(valueStart, valueStart + valueLength!.value));
    offset = valueStart + valueLength!.value;
  }
  return values;
}

/** What is damaged in a table file, or undefined when every block checks. */
export function findTableDamage(table: Buffer, crc32c: Crc32c): string | undefined {
  try {
    if (table.length < footerBytes) throw new TableDamage(`it is shorter than a table's footer`);
    const dataEnd = table.length - footerBytes;
    if (table.readUInt32LE(table.length - 8) !== magicLow || table.readUInt32LE(table.length - 4) !== magicHigh) throw new TableDamage("its footer lacks the table magic number");
    const metaindex = readHandle(table, dataEnd);
    const index = readHandle(table, metaindex.next).handle;
    const handles: BlockHandle[] = [metaindex.handle, index];
    for (const parent of [metaindex.handle, index]) {
      for (const value of blockValues(readBlock(table, parent, dataEnd, crc32c), parent.offset)) handles.push(readHandle(value, 0).handle);
    }
    handles.sort((a, b) => a.offset - b.offset);
    let covered = 0;
    for (const handle of handles) {
      if (handle.offset !== covered) throw new TableDamage(`bytes ${covered} to ${handle.offset} belong to no block`);
      if (handle !== metaindex.handle && handle !== index) checkBlock(table, handle, dataEnd, crc32c);
      covered = handle.offset + handle.size + trailerBytes;
    }
    if (covered !== dataEnd) throw new TableDamage(`bytes ${covered} to ${dataEnd} belong to no block`);
    return undefined;
  } catch (error) {
    if (error instanceof TableDamage) return error.message;
    throw error;
  }
}
