// The write-ahead log in front of LevelDB. A batch is durable once its record is in this file: one
// synchronous write(2) into the page cache, the same promise LevelDB itself gives without `sync`
// (it survives kill -9, not a power cut). The batch then goes to LevelDB in the background, and the
// caller does not wait for LevelDB's thread pool: under automine that wait was a third of every
// send call. A store opened on a directory whose log still holds records applies them again first.
//
// The file starts with an 8-byte mark naming its format. Format 3, the one written: each record is
// a 20-byte header (payload length u32 LE, sequence number u64 LE, CRC-32 of the payload u32 LE,
// CRC-32 of the header's first 16 bytes u32 LE), then the payload: operation count (u32), then per
// operation a type byte (1 put, 2 del), key length (u32) and key, and for a put the value length
// (u32) and value. The header's own checksum is what tells a torn write from damage: a record whose
// header checks and whose payload runs past the end of the file is the write a crash cut short
// (never acknowledged); a header that does not check, a payload that does not, or a sequence
// number out of order is damage to an acknowledged batch, wherever it is. Older logs are still
// read: format 2 (the mark ending in 2; header: length and payload CRC, the sequence number first
// in the payload) and format 1 (no mark, no sequence numbers), whose records only carry a payload
// checksum, so there a record that fails at the end of the file is taken for a torn write as before.
//
// LevelDB records with each batch it applies the sequence number of the last log record in it, so
// a store that opens applies exactly the records after that one: a record LevelDB holds already is
// never applied again over newer values (a stale or shortened log cannot roll the store back).
// Records missing between LevelDB's number and the log's also mean acknowledged batches cannot be
// read, and the store refuses to open rather than guess.
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { crc32 } from "node:zlib";
import type { StoreOperation } from "./keyValueStore.js";

const putType = 1;
const delType = 2;
const markBytes = 8;
/** Format 3's record header: length, sequence, payload checksum, header checksum. */
const recordHeaderBytes = 20;
/** Formats 1 and 2: length and payload checksum. */
const legacyRecordHeaderBytes = 8;
const sequenceBytes = 8;

/** The first bytes of a log of format 3, the format written. */
export const writeAheadLogMark = Buffer.from("CNWAL\0\0\x03", "latin1");
/** The first bytes of a log of format 2 (read only). */
export const legacyWriteAheadLogMark = Buffer.from("CNWAL\0\0\x02", "latin1");

/** One batch of a log: its sequence number (undefined in a log of format 1) and operations. */
export interface LogRecord {
  readonly sequence: bigint | undefined;
  readonly operations: StoreOperation[];
}

/** Bytes of the payload of one batch (format 3: without the sequence number). */
function payloadBytesOf(operations: readonly StoreOperation[]): number {
  let bytes = 4;
  for (const operation of operations) {
    bytes += 1 + 4 + operation.key.length;
    if (operation.type === "put") bytes += 4 + operation.value.length;
  }
  return bytes;
}

/** Writes the operations of a batch into `target` at `offset`; answers where they end. */
export function writeOperations(operations: readonly StoreOperation[], target: Buffer, offset: number): number {
  offset = target.writeUInt32LE(operations.length, offset);
  for (const operation of operations) {
    offset = target.writeUInt8(operation.type === "put" ? putType : delType, offset);
    offset = target.writeUInt32LE(operation.key.length, offset);
    target.set(operation.key, offset);
    offset += operation.key.length;
    if (operation.type === "put") {
      offset = target.writeUInt32LE(operation.value.length, offset);
      target.set(operation.value, offset);
      offset += operation.value.length;
    }
  }
  return offset;
}

/** Bytes of the record of one batch, header and payload. */
function logRecordBytes(operations: readonly StoreOperation[]): number {
  return recordHeaderBytes + payloadBytesOf(operations);
}

/** Writes the record of one batch into `target` at `start` (room for logRecordBytes); answers where it ends. */
function writeLogRecord(operations: readonly StoreOperation[], sequence: bigint, target: Buffer, start: number): number {
  const payloadStart = start + recordHeaderBytes;
  const end = writeOperations(operations, target, payloadStart);
  target.writeUInt32LE(end - payloadStart, start);
  target.writeBigUInt64LE(sequence, start + 4);
  target.writeUInt32LE(crc32(target.subarray(payloadStart, end)), start + 12);
  target.writeUInt32LE(crc32(target.subarray(start, start + 16)), start + 16);
  return end;
}

/** One batch as a record of the format written (header and payload), without the file's mark. */
export function encodeLogRecord(operations: readonly StoreOperation[], sequence: bigint): Buffer {
  const record = Buffer.allocUnsafe(logRecordBytes(operations));
  writeLogRecord(operations, sequence, record, 0);
  return record;
}

/**
 * Records up to this size are encoded into one buffer the log keeps (a block's record is a few
 * KiB; a new buffer for each cost an allocation of node's buffer pool every other block); larger
 * ones get a buffer of their own, so the log does not hold on to a rare large one.
 */
const reusedRecordBufferBytes = 256 * 1024;

/** The operations of a payload from `offset` to its end, or undefined when they do not parse. */
function decodeOperations(payload: Buffer, offset: number): StoreOperation[] | undefined {
  if (payload.length < offset + 4) return undefined;
  const count = payload.readUInt32LE(offset);
  const operations: StoreOperation[] = [];
  offset += 4;
  const take = (length: number): Uint8Array | undefined => {
    if (offset + length > payload.length) return undefined;
    const bytes = new Uint8Array(payload.subarray(offset, offset + length));
    offset += length;
    return bytes;
  };
  const length = (): number | undefined => {
    if (offset + 4 > payload.length) return undefined;
    const value = payload.readUInt32LE(offset);
    offset += 4;
    return value;
  };
  for (let index = 0; index < count; index++) {
    if (offset >= payload.length) return undefined;
    const type = payload[offset++];
    const keyLength = length();
    const key = keyLength === undefined ? undefined : take(keyLength);
    if (key === undefined) return undefined;
    if (type === delType) {
      operations.push({ type: "del", key });
      continue;
    }
    if (type !== putType) return undefined;
    const valueLength = length();
    const value = valueLength === undefined ? undefined : take(valueLength);
    if (value === undefined) return undefined;
    operations.push({ type: "put", key, value });
  }
  return offset === payload.length ? operations : undefined;
}

/** What reading a log found. */
export interface DecodedLog {
  /** The log's format: 3 (written now), 2 or 1 (see the top of this file). An empty log is of format 3. */
  readonly format: 1 | 2 | 3;
  /** The readable records, in order. */
  readonly records: LogRecord[];
  /** Their batches (the records' operations). */
  readonly batches: StoreOperation[][];
  /** Bytes the mark and the readable records take. */
  readonly validBytes: number;
  /**
   * What follows the readable records: nothing; a write a crash cut short (never acknowledged); or
   * damage to an acknowledged batch.
   */
  readonly end: "clean" | "torn" | "damaged";
  /** The write cut short: its sequence number when its header was whole, and its bytes in the file. */
  readonly torn?: { readonly sequence: bigint | undefined; readonly bytes: number };
  /** What is damaged, where (for messages). */
  readonly damage?: string;
}

function decoded(format: DecodedLog["format"], records: LogRecord[], validBytes: number, end: Pick<DecodedLog, "end" | "torn" | "damage">): DecodedLog {
  return { format, records, batches: records.map((record) => record.operations), validBytes, ...end };
}

function isZeroFrom(log: Buffer, offset: number): boolean {
  for (let index = offset; index < log.length; index++) if (log[index] !== 0) return false;
  return true;
}

/** The records of a log of format 3 (after its mark). */
function decodeCurrentFormat(log: Buffer): DecodedLog {
  const records: LogRecord[] = [];
  let offset = markBytes;
  let previous: bigint | undefined;
  const ended = (end: Pick<DecodedLog, "end" | "torn" | "damage">) => decoded(3, records, offset, end);
  while (offset < log.length) {
    const remaining = log.length - offset;
    // A header cut short by the end of the file, or a tail of zeros (a file extended whose data
    // never reached the disk), is the last write a crash interrupted.
    if (remaining < recordHeaderBytes || isZeroFrom(log, offset)) return ended({ end: "torn", torn: { sequence: undefined, bytes: remaining } });
    if (crc32(log.subarray(offset, offset + 16)) !== log.readUInt32LE(offset + 16)) {
      return ended({ end: "damaged", damage: `the header of the record at byte ${offset} does not match its checksum` });
    }
    const payloadBytes = log.readUInt32LE(offset);
    const sequence = log.readBigUInt64LE(offset + 4);
    if (previous !== undefined && sequence !== previous + 1n) {
      return ended({ end: "damaged", damage: `the record at byte ${offset} holds batch ${sequence} after batch ${previous}` });
    }
    const payloadStart = offset + recordHeaderBytes;
    if (payloadStart + payloadBytes > log.length) return ended({ end: "torn", torn: { sequence, bytes: remaining } });
    const payload = log.subarray(payloadStart, payloadStart + payloadBytes);
    const operations = crc32(payload) === log.readUInt32LE(offset + 12) ? decodeOperations(payload, 0) : undefined;
    if (operations === undefined) return ended({ end: "damaged", damage: `batch ${sequence} (the record at byte ${offset}) does not match its checksum` });
    records.push({ sequence, operations });
    previous = sequence;
    offset = payloadStart + payloadBytes;
  }
  return ended({ end: "clean" });
}

/**
 * The records of a log of format 2 (`sequenced`, after its mark) or 1. Their records check only
 * their payload, so one that fails where it reaches the end of the file is taken for a torn write.
 */
function decodeLegacyFormat(log: Buffer, sequenced: boolean): DecodedLog {
  const records: LogRecord[] = [];
  let offset = sequenced ? markBytes : 0;
  while (offset < log.length) {
    const remaining = log.length - offset;
    if (remaining < legacyRecordHeaderBytes) return decoded(sequenced ? 2 : 1, records, offset, { end: "torn", torn: { sequence: undefined, bytes: remaining } });
    const recordEnd = offset + legacyRecordHeaderBytes + log.readUInt32LE(offset);
    const payload = recordEnd > log.length ? undefined : log.subarray(offset + legacyRecordHeaderBytes, recordEnd);
    const checked = payload !== undefined && crc32(payload) === log.readUInt32LE(offset + 4);
    const operations = checked ? decodeOperations(payload, sequenced ? sequenceBytes : 0) : undefined;
    if (operations === undefined) {
      const end = recordEnd >= log.length ? { end: "torn" as const, torn: { sequence: undefined, bytes: remaining } } : { end: "damaged" as const, damage: `the record at byte ${offset} does not match its checksum` };
      return decoded(sequenced ? 2 : 1, records, offset, end);
    }
    records.push({ sequence: sequenced ? payload!.readBigUInt64LE(0) : undefined, operations });
    offset = recordEnd;
  }
  return decoded(sequenced ? 2 : 1, records, offset, { end: "clean" });
}

/** The records of a log, in order, up to the first record that is cut short or damaged. */
export function decodeLogRecords(log: Buffer): DecodedLog {
  if (log.length === 0) return decoded(3, [], 0, { end: "clean" });
  const start = log.subarray(0, markBytes);
  if (log.length < markBytes && writeAheadLogMark.subarray(0, log.length).equals(log)) {
    // The first write of an empty log, cut short inside the mark.
    return decoded(3, [], 0, { end: "torn", torn: { sequence: undefined, bytes: log.length } });
  }
  if (start.equals(writeAheadLogMark)) return decodeCurrentFormat(log);
  if (start.equals(legacyWriteAheadLogMark)) return decodeLegacyFormat(log, true);
  // Without a mark, a log of format 1, whose first record must then read whole: otherwise the mark
  // itself is damaged.
  const unmarked = decodeLegacyFormat(log, false);
  if (unmarked.records.length > 0 || unmarked.end === "clean") return unmarked;
  return decoded(3, [], 0, { end: "damaged", damage: "its first 8 bytes are not the mark of a log format this node reads" });
}

/** The log file: appended to synchronously, emptied once LevelDB holds everything in it. */
export class WriteAheadLog {
  /** Where records are encoded before they are written (see reusedRecordBufferBytes). */
  private reusedBuffer = Buffer.allocUnsafeSlow(16 * 1024);

  private constructor(
    private readonly descriptor: number,
    private size: number,
  ) {}

  /** A buffer of at least `bytes` to encode a record in: the kept one, grown if need be, or one of its own past the limit. */
  private recordBuffer(bytes: number): Buffer {
    if (bytes > reusedRecordBufferBytes) return Buffer.allocUnsafe(bytes);
    if (this.reusedBuffer.length < bytes) this.reusedBuffer = Buffer.allocUnsafeSlow(Math.min(reusedRecordBufferBytes, 2 ** Math.ceil(Math.log2(bytes))));
    return this.reusedBuffer;
  }

  /** Reads the log at `path` without changing it (a missing file reads as an empty log). */
  static read(path: string): DecodedLog {
    try {
      return decodeLogRecords(readFileSync(path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return decodeLogRecords(Buffer.alloc(0));
      throw error;
    }
  }

  /**
   * Opens (or creates) the log at `path` for appending, given what `read` found in it: a torn
   * last record is cut off. A damaged log must not be opened (the caller refuses it first).
   */
  static open(path: string, contents: DecodedLog): WriteAheadLog {
    if (contents.end === "damaged") throw new Error(`the write-ahead log ${path} is damaged: ${contents.damage}`);
    // Read and write, created if missing, not O_APPEND: appends go at explicit positions.
    const descriptor = openSync(path, constants.O_RDWR | constants.O_CREAT);
    try {
      // A torn tail is dropped now, so that the next record does not follow it.
      if (contents.end === "torn") ftruncateSync(descriptor, contents.validBytes);
      return new WriteAheadLog(descriptor, contents.validBytes);
    } catch (error) {
      closeSync(descriptor);
      throw error;
    }
  }

  /** Bytes in the log. */
  get bytes(): number {
    return this.size;
  }

  /**
   * Appends one batch; when this returns, the batch survives the process. On a failed write the
   * log is cut back to where it was, so a partial record never precedes a later one. A log that
   * holds records of an older format is emptied before the first append (see LevelStore).
   */
  append(operations: readonly StoreOperation[], sequence: bigint): void {
    const mark = this.size === 0 ? markBytes : 0;
    const buffer = this.recordBuffer(mark + logRecordBytes(operations));
    if (mark > 0) writeAheadLogMark.copy(buffer, 0);
    const record = buffer.subarray(0, writeLogRecord(operations, sequence, buffer, mark));
    try {
      let written = 0;
      while (written < record.length) written += writeSync(this.descriptor, record, written, record.length - written, this.size + written);
    } catch (error) {
      try {
        ftruncateSync(this.descriptor, this.size);
      } catch {
        // The store refuses every later write anyway; opening it drops a torn record.
      }
      throw error;
    }
    this.size += record.length;
  }

  /** Empties the log: call only when every batch in it is in LevelDB. */
  clear(): void {
    ftruncateSync(this.descriptor, 0);
    this.size = 0;
  }

  close(): void {
    closeSync(this.descriptor);
  }
}
