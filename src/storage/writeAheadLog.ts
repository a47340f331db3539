// The write-ahead log in front of LevelDB. A batch is durable once its record is in this file: one
// synchronous write(2) into the page cache, the same promise LevelDB itself gives without `sync`
// (it survives kill -9, not a power cut). The batch then goes to LevelDB in the background, and the
// caller does not wait for LevelDB's thread pool: under automine that wait was a third of every
// send call. A store opened on a directory whose log still holds records applies them again first.
//
// Record: payload length (u32 LE), CRC-32 of the payload (u32 LE), payload. Payload: the batch's
// sequence number (u64 LE), operation count (u32), then per operation a type byte (1 put, 2 del),
// key length (u32) and key, and for a put the value length (u32) and value. The file starts with
// an 8-byte mark; a log without it was written before sequence numbers (its payloads start with
// the count) and is read as such.
//
// LevelDB records with each batch it applies the sequence number of the last log record in it, so
// a store that opens applies exactly the records after that one: a record LevelDB holds already is
// never applied again over newer values (a stale or shortened log cannot roll the store back). A
// record cut short at the end of the file is the write a crash interrupted (never acknowledged);
// damage before the end, or records missing between LevelDB's number and the log's, mean
// acknowledged batches cannot be read, and the store refuses to open rather than guess.
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { crc32 } from "node:zlib";
import type { StoreOperation } from "./keyValueStore.js";

const recordHeaderBytes = 8;
const sequenceBytes = 8;
const putType = 1;
const delType = 2;

/** The first bytes of a log whose records carry sequence numbers. */
export const sequencedLogMark = Buffer.from("CNWAL\0\0\x02", "latin1");

/** One batch of a log: its sequence number (undefined in a log written before them) and operations. */
export interface LogRecord {
  readonly sequence: bigint | undefined;
  readonly operations: StoreOperation[];
}

/** Bytes of the record of one batch (header and payload); with `sequence`, the sequenced form. */
function logRecordBytes(operations: readonly StoreOperation[], sequence: bigint | undefined): number {
  let payloadBytes = (sequence === undefined ? 0 : sequenceBytes) + 4;
  for (const operation of operations) {
    payloadBytes += 1 + 4 + operation.key.length;
    if (operation.type === "put") payloadBytes += 4 + operation.value.length;
  }
  return recordHeaderBytes + payloadBytes;
}

/** Writes the record of one batch into `target` at `start` (room for logRecordBytes); answers where it ends. */
function writeLogRecord(operations: readonly StoreOperation[], sequence: bigint | undefined, target: Buffer, start: number): number {
  let offset = start + recordHeaderBytes;
  if (sequence !== undefined) offset = target.writeBigUInt64LE(sequence, offset);
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
  const payloadStart = start + recordHeaderBytes;
  target.writeUInt32LE(offset - payloadStart, start);
  target.writeUInt32LE(crc32(target.subarray(payloadStart, offset)), start + 4);
  return offset;
}

/** One batch as a log record (header and payload); with `sequence`, the sequenced form. */
export function encodeLogRecord(operations: readonly StoreOperation[], sequence?: bigint): Buffer {
  const record = Buffer.allocUnsafe(logRecordBytes(operations, sequence));
  writeLogRecord(operations, sequence, record, 0);
  return record;
}

/**
 * Records up to this size are encoded into one buffer the log keeps (a block's record is a few
 * KiB; a new buffer for each cost an allocation of node's buffer pool every other block); larger
 * ones get a buffer of their own, so the log does not hold on to a rare large one.
 */
const reusedRecordBufferBytes = 256 * 1024;

/** The record of one payload whose checksum matched, or undefined when it does not parse. */
function decodePayload(payload: Buffer, sequenced: boolean): LogRecord | undefined {
  const prefixBytes = sequenced ? sequenceBytes : 0;
  if (payload.length < prefixBytes + 4) return undefined;
  const sequence = sequenced ? payload.readBigUInt64LE(0) : undefined;
  const count = payload.readUInt32LE(prefixBytes);
  const operations: StoreOperation[] = [];
  let offset = prefixBytes + 4;
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
  return offset === payload.length ? { sequence, operations } : undefined;
}

/** What reading a log found. */
export interface DecodedLog {
  /** Whether the log carries sequence numbers (it starts with sequencedLogMark). */
  readonly sequenced: boolean;
  /** The readable records, in order. */
  readonly records: LogRecord[];
  /** Their batches (the records' operations). */
  readonly batches: StoreOperation[][];
  /** Bytes the mark and the readable records take. */
  readonly validBytes: number;
  /**
   * What follows the readable records: nothing; a record cut short or damaged that ends the file
   * (a write a crash interrupted); or damage with more bytes after it.
   */
  readonly end: "clean" | "torn" | "damaged";
}

/** The records of a log, in order, up to the first record that is cut short or damaged. */
export function decodeLogRecords(log: Buffer): DecodedLog {
  const sequenced = log.length >= sequencedLogMark.length && log.subarray(0, sequencedLogMark.length).equals(sequencedLogMark);
  const records: LogRecord[] = [];
  let offset = sequenced ? sequencedLogMark.length : 0;
  let end: DecodedLog["end"] = "clean";
  while (offset < log.length) {
    if (offset + recordHeaderBytes > log.length) {
      end = "torn";
      break;
    }
    const payloadBytes = log.readUInt32LE(offset);
    const recordEnd = offset + recordHeaderBytes + payloadBytes;
    const payload = recordEnd > log.length ? undefined : log.subarray(offset + recordHeaderBytes, recordEnd);
    const record = payload === undefined || crc32(payload) !== log.readUInt32LE(offset + 4) ? undefined : decodePayload(payload, sequenced);
    if (record === undefined) {
      // The last write a crash cut short reaches (or would reach) the end of the file.
      end = recordEnd >= log.length ? "torn" : "damaged";
      break;
    }
    records.push(record);
    offset = recordEnd;
  }
  return { sequenced, records, batches: records.map((record) => record.operations), validBytes: offset, end };
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

  /**
   * Opens (or creates) the log at `path`; answers it with what it still holds. A torn last record
   * is cut off; a damaged log is left as it is (the caller decides, see DecodedLog.end).
   */
  static open(path: string): { log: WriteAheadLog; contents: DecodedLog } {
    // Read and write, created if missing, not O_APPEND: appends go at explicit positions.
    const descriptor = openSync(path, constants.O_RDWR | constants.O_CREAT);
    try {
      const contents = decodeLogRecords(readFileSync(descriptor));
      // A torn tail is dropped now, so that the next record does not follow it.
      if (contents.end === "torn") ftruncateSync(descriptor, contents.validBytes);
      return { log: new WriteAheadLog(descriptor, contents.validBytes), contents };
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
   * log is cut back to where it was, so a partial record never precedes a later one.
   */
  append(operations: readonly StoreOperation[], sequence: bigint): void {
    // An empty log starts with the mark: a log with older, unmarked records is emptied first.
    const markBytes = this.size === 0 ? sequencedLogMark.length : 0;
    const buffer = this.recordBuffer(markBytes + logRecordBytes(operations, sequence));
    if (markBytes > 0) sequencedLogMark.copy(buffer, 0);
    const record = buffer.subarray(0, writeLogRecord(operations, sequence, buffer, markBytes));
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
