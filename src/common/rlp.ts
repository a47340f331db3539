// RLP encoding in one pass into one buffer. @ethereumjs/rlp encodes a list by encoding each item
// into a new array, then concatenating the length prefix and the items (a variadic spread and a
// copy per level), and writes length prefixes through hexadecimal strings: a seventh of a value
// transfer's block (accounts, trie nodes, header, receipts and transactions are all RLP). Every
// @ethereumjs package calls the encoder through the shared `RLP` object, so the node puts this
// one there at start-up; the output is the package's byte for byte (a test compares both).
import { RLP } from "@ethereumjs/rlp";

/** What the package's encoder accepts. */
export type RlpInput = Uint8Array | string | number | bigint | null | undefined | readonly RlpInput[];

const emptyBytes = new Uint8Array(0);
const hexPairs = /^[0-9a-fA-F]*$/;

/** A scalar as the package's toBytes turns it into bytes. */
function scalarBytes(value: Exclude<RlpInput, readonly RlpInput[]>): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value === null || value === undefined) return emptyBytes;
  if (typeof value === "string") {
    if (!value.startsWith("0x")) return new TextEncoder().encode(value);
    const digits = value.length % 2 === 1 ? `0${value.slice(2)}` : value.slice(2);
    if (!hexPairs.test(digits)) throw new Error(`hex string expected, got ${value}`);
    return Uint8Array.from(Buffer.from(digits, "hex"));
  }
  if (typeof value === "number" && !Number.isSafeInteger(value)) throw new Error(`RLP: ${value} is not an integer`);
  if (value < 0) throw new Error("Invalid integer as argument, must be unsigned!");
  if (!value) return emptyBytes;
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Uint8Array.from(Buffer.from(hex, "hex"));
}

/** The output so far: one buffer reused by every encoding (encoding never yields). */
let output = new Uint8Array(4096);
let position = 0;

function reserve(length: number): void {
  if (position + length <= output.length) return;
  let size = output.length * 2;
  while (size < position + length) size *= 2;
  const larger = new Uint8Array(size);
  larger.set(output.subarray(0, position));
  output = larger;
}

/** Bytes of `length` big-endian without leading zeros (at most 8: lengths are far below 2^53). */
function lengthByteCount(length: number): number {
  let count = 0;
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) count++;
  return count;
}

/** Writes the prefix of a string (offset 0x80) or list (0xc0) of `length` bytes at `at`; returns its size. */
function writePrefix(at: number, length: number, offset: number): number {
  if (length < 56) {
    output[at] = offset + length;
    return 1;
  }
  const count = lengthByteCount(length);
  output[at] = offset + 55 + count;
  for (let index = count, rest = length; index >= 1; index--, rest = Math.floor(rest / 256)) output[at + index] = rest % 256;
  return count + 1;
}

/** The largest prefix: one byte and up to eight length bytes. */
const maxPrefix = 9;

function write(input: RlpInput): void {
  if (Array.isArray(input)) {
    // The items go after room for the largest prefix, then move back behind the real one.
    reserve(maxPrefix);
    const start = position;
    position += maxPrefix;
    for (const item of input as readonly RlpInput[]) write(item);
    const contentLength = position - start - maxPrefix;
    const prefixLength = writePrefix(start, contentLength, 0xc0);
    if (prefixLength !== maxPrefix) output.copyWithin(start + prefixLength, start + maxPrefix, position);
    position -= maxPrefix - prefixLength;
    return;
  }
  const bytes = scalarBytes(input as Exclude<RlpInput, readonly RlpInput[]>);
  if (bytes.length === 1 && bytes[0]! < 0x80) {
    reserve(1);
    output[position++] = bytes[0]!;
    return;
  }
  reserve(maxPrefix + bytes.length);
  position += writePrefix(position, bytes.length, 0x80);
  output.set(bytes, position);
  position += bytes.length;
}

/** RLP of `input`, as @ethereumjs/rlp's encode gives it (a single byte below 0x80 comes back as given). */
export function encodeRlp(input: RlpInput): Uint8Array {
  if (!Array.isArray(input)) {
    const bytes = scalarBytes(input as Exclude<RlpInput, readonly RlpInput[]>);
    if (bytes.length === 1 && bytes[0]! < 0x80) return bytes;
  }
  position = 0;
  write(input);
  return output.slice(0, position);
}

/** The package's own encoder, kept for comparison. */
export const packageRlpEncode = RLP.encode;

/** Makes every user of @ethereumjs/rlp's `RLP` object encode with encodeRlp. */
export function installFastRlpEncoding(): void {
  (RLP as { encode: (input: RlpInput) => Uint8Array }).encode = encodeRlp;
}
