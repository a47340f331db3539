// The write-ahead log in front of LevelDB. A batch is durable once its record is in this file: one
// synchronous write(2) into the page cache, the same promise LevelDB itself gives without `sync`
// (it survives kill -9, not a power cut). The batch then goes to LevelDB in the background, and the
// caller does not wait for LevelDB's thread pool: under automine that wait was a third of every
// send call. A store opened on a directory whose log still holds records applies them again first.
//
// Record: payload length (u32 LE), CRC-32 of the payload (u32 LE), payload. Payload: operation
// count (u32), then per operation a type byte (1 put, 2 del), key length (u32) and key, and for a
// put the value length (u32) and value. A record cut short by a crash, or one whose checksum does
// not match, ends the log: nothing after it was ever acknowledged.
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { crc32 } from "node:zlib";
import type { StoreOperation } from "./keyValueStore.js";

const recordHeaderBytes = 8;
const putType = 1;
const delType = 2;

/** One batch as a log record (header and payload). */
export function encodeLogRecord(operations: readonly StoreOperation[]): Buffer {
  let payloadBytes = 4;
  for (const operation of operations) {
    payloadBytes += 1 + 4 + operation.key.length;
    if (operation.type === "put") payloadBytes += 4 + operation.value.length;
  }
  const record = Buffer.allocUnsafe(recordHeaderBytes + payloadBytes);
  let offset = recordHeaderBytes;
  offset = record.writeUInt32LE(operations.length, offset);
  for (const operation of operations) {
    offset = record.writeUInt8(operation.type === "put" ? putType : delType, offset);
    offset = record.writeUInt32LE(operation.key.length, offset);
    record.set(operation.key, offset);
    offset += operation.key.length;
    if (operation.type === "put") {
      offset = record.writeUInt32LE(operation.value.length, offset);
      record.set(operation.value, offset);
      offset += operation.value.length;
    }
  }
  record.writeUInt32LE(payloadBytes, 0);
  record.writeUInt32LE(crc32(record.subarray(recordHeaderBytes)), 4);
  return record;
}

/** The operations of one payload whose checksum matched, or undefined when it does not parse. */
function decodePayload(payload: Buffer): StoreOperation[] | undefined {
  if (payload.length < 4) return undefined;
  const count = payload.readUInt32LE(0);
  const operations: StoreOperation[] = [];
  let offset = 4;
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

/**
 * The batches of a log, in order, up to the first record that is cut short or damaged; and how
 * many bytes the whole records take.
 */
export function decodeLogRecords(log: Buffer): { batches: StoreOperation[][]; validBytes: number } {
  const batches: StoreOperation[][] = [];
  let offset = 0;
  while (offset + recordHeaderBytes <= log.length) {
    const payloadBytes = log.readUInt32LE(offset);
    const end = offset + recordHeaderBytes + payloadBytes;
    if (end > log.length) break;
    const payload = log.subarray(offset + recordHeaderBytes, end);
    if (crc32(payload) !== log.readUInt32LE(offset + 4)) break;
    const operations = decodePayload(payload);
    if (operations === undefined) break;
    batches.push(operations);
    offset = end;
  }
  return { batches, validBytes: offset };
}

/** The log file: appended to synchronously, emptied once LevelDB holds everything in it. */
export class WriteAheadLog {
  private constructor(
    private readonly descriptor: number,
    private size: number,
  ) {}

  /** Opens (or creates) the log at `path`; answers it with the batches it still holds, in order. */
  static open(path: string): { log: WriteAheadLog; batches: StoreOperation[][] } {
    // Read and write, created if missing, not O_APPEND: appends go at explicit positions.
    const descriptor = openSync(path, constants.O_RDWR | constants.O_CREAT);
    try {
      const contents = readFileSync(descriptor);
      const { batches, validBytes } = decodeLogRecords(contents);
      // A torn tail is dropped now, so that the next record does not follow it.
      if (validBytes !== contents.length) ftruncateSync(descriptor, validBytes);
      return { log: new WriteAheadLog(descriptor, validBytes), batches };
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
  append(operations: readonly StoreOperation[]): void {
    const record = encodeLogRecord(operations);
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
