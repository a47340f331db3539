// CRC-32C (Castagnoli), as LevelDB checksums its log records and table blocks, in WebAssembly
// (hash-wasm: about 1.1 GB/s over 4 KiB blocks here). LevelDB stores the checksum "masked" (rotated
// and offset), so that the checksum of data that itself holds checksums is not trivially related.
import type * as HashWasm from "hash-wasm";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { createCRC32 } = require("hash-wasm/dist/crc32.umd.min.js") as Pick<typeof HashWasm, "createCRC32">;

const castagnoliPolynomial = 0x82f63b78;
const maskDelta = 0xa282ead8;

/** CRC-32C of the concatenation of `parts`. */
export type Crc32c = (...parts: Uint8Array[]) => number;

/** A CRC-32C function (the WebAssembly module is compiled once, on first use). */
export async function createCrc32c(): Promise<Crc32c> {
  const hasher = await createCRC32(castagnoliPolynomial);
  return (...parts) => {
    hasher.init();
    for (const part of parts) hasher.update(part);
    return Buffer.from(hasher.digest("binary")).readUInt32BE(0);
  };
}

/** The checksum as LevelDB stores it. */
export function maskCrc(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + maskDelta) >>> 0;
}
