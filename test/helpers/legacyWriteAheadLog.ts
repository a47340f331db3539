// Records of the write-ahead log's older formats, which the node still reads but no longer writes
// (src/storage/writeAheadLog.ts): format 1 (no mark, no sequence numbers) and format 2 (the mark
// ending in 2, the sequence number first in the payload). Header: payload length and CRC-32.
import { crc32 } from "node:zlib";
import type { StoreOperation } from "../../src/storage/keyValueStore.js";
import { writeOperations } from "../../src/storage/writeAheadLog.js";

/** A record of format 2 when `sequence` is given, else of format 1. */
export function encodeLegacyLogRecord(operations: readonly StoreOperation[], sequence?: bigint): Buffer {
  const payload = Buffer.alloc(16 + operations.reduce((bytes, operation) => bytes + 9 + operation.key.length + (operation.type === "put" ? operation.value.length : 0), 0));
  let offset = sequence === undefined ? 0 : payload.writeBigUInt64LE(sequence, 0);
  offset = writeOperations(operations, payload, offset);
  const header = Buffer.alloc(8);
  header.writeUInt32LE(offset, 0);
  header.writeUInt32LE(crc32(payload.subarray(0, offset)), 4);
  return Buffer.concat([header, payload.subarray(0, offset)]);
}
