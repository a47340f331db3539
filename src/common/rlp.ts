// RLP in one pass. @ethereumjs/rlp encodes a list by encoding each item into a new array, then
// concatenating the length prefix and the items (a variadic spread and a copy per level), writes
// length prefixes through hexadecimal strings, and decodes by slicing a copy of every remainder:
// together a seventh of a value transfer's block (accounts, trie nodes, header, receipts and
// transactions are all RLP). Every @ethereumjs package calls the codec through the shared `RLP`
// object, so the node puts these functions there at start-up. Their output is the package's byte
// for byte and value for value (a test compares both); the decoder hands any input it does not
// find well formed to the package's, which then throws its own error.
import { RLP } from "@ethereumjs/rlp";
import { bigIntToMinimalBytes, writeHexDigits } from "./hex.js";

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
  return bigIntToMinimalBytes(BigInt(value));
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

/** A positive integer as its shortest big-endian bytes, with its prefix, straight from its hex digits. */
function writeInteger(value: bigint): void {
  if (value < 0x80n) {
    reserve(1);
    output[position++] = Number(value);
    return;
  }
  const digits = value.toString(16);
  const length = (digits.length + 1) >> 1;
  reserve(maxPrefix + length);
  position += writePrefix(position, length, 0x80);
  position += writeHexDigits(digits, output, position);
}

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
  if (typeof input === "bigint" && input > 0n) {
    writeInteger(input);
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

/** What decoding gives: bytes, or a list of decoded items. */
export type RlpDecoded = Uint8Array | RlpDecoded[];

/** Thrown inside the decoder at anything not well formed: the package's decoder then words it. */
const malformed = new Error("malformed RLP");

/** The declared length in `count` bytes at `at` (canonical: no leading zero). */
function readLength(input: Uint8Array, at: number, count: number, end: number): number {
  if (at + count > end || input[at] === 0 || count > 6) throw malformed;
  let length = 0;
  for (let index = 0; index < count; index++) length = length * 256 + input[at + index]!;
  return length;
}

let decodedEnd = 0;

/** The item starting at `at`, within `input` up to `end`; sets decodedEnd to where it ends. */
function decodeItem(input: Uint8Array, at: number, end: number): RlpDecoded {
  const first = input[at]!;
  if (first <= 0x7f) {
    decodedEnd = at + 1;
    return input.slice(at, at + 1);
  }
  if (first <= 0xb7) {
    const length = first - 0x80;
    const stop = at + 1 + length;
    if (stop > end || (length === 1 && input[at + 1]! < 0x80)) throw malformed;
    decodedEnd = stop;
    return input.slice(at + 1, stop);
  }
  if (first <= 0xbf) {
    const count = first - 0xb7;
    const length = readLength(input, at + 1, count, end);
    const start = at + 1 + count;
    if (length <= 55 || start + length > end) throw malformed;
    decodedEnd = start + length;
    return input.slice(start, start + length);
  }
  let start: number;
  let stop: number;
  if (first <= 0xf7) {
    start = at + 1;
    stop = start + first - 0xc0;
  } else {
    const count = first - 0xf7;
    const length = readLength(input, at + 1, count, end);
    if (length < 56) throw malformed;
    start = at + 1 + count;
    stop = start + length;
  }
  if (stop > end) throw malformed;
  const items: RlpDecoded[] = [];
  let next = start;
  while (next < stop) {
    items.push(decodeItem(input, next, stop));
    next = decodedEnd;
  }
  decodedEnd = stop;
  return items;
}

/** The package's own codec, kept for comparison and for the errors of malformed input. */
export const packageRlpEncode = RLP.encode;
export const packageRlpDecode = RLP.decode;

/** RLP-decodes `input` as @ethereumjs/rlp's decode does (copies of the bytes; its errors). */
export function decodeRlp(input: Uint8Array, stream = false): RlpDecoded | { data: RlpDecoded; remainder: Uint8Array } {
  if (stream || !(input instanceof Uint8Array) || input.length === 0) return packageRlpDecode(input as never, stream as never) as RlpDecoded;
  try {
    const decoded = decodeItem(input, 0, input.length);
    if (decodedEnd === input.length) return decoded;
  } catch (error) {
    if (error !== malformed) throw error;
  }
  return packageRlpDecode(input) as RlpDecoded;
}

/** Makes every user of @ethereumjs/rlp's `RLP` object encode and decode here. */
export function installFastRlp(): void {
  const shared = RLP as unknown as { encode: typeof encodeRlp; decode: typeof decodeRlp };
  shared.encode = encodeRlp;
  shared.decode = decodeRlp;
}

/** Where an RLP item at `offset` keeps its payload, and where it ends; whether it is a list. */
function rlpItemAt(encoded: Uint8Array, offset: number): { payload: number; end: number; list: boolean } {
  const first = encoded[offset];
  if (first === undefined) throw new Error("RLP: item past the end");
  let payload = offset + 1;
  let length: number;
  const list = first >= 0xc0;
  if (first < 0x80) [payload, length] = [offset, 1];
  else if (first <= 0xb7 || (first >= 0xc0 && first <= 0xf7)) length = first - (list ? 0xc0 : 0x80);
  else {
    const lengthBytes = first - (list ? 0xf7 : 0xb7);
    length = 0;
    for (let index = 0; index < lengthBytes; index++) length = length * 256 + (encoded[offset + 1 + index] ?? Number.NaN);
    payload = offset + 1 + lengthBytes;
  }
  const end = payload + length;
  if (!(end <= encoded.length)) throw new Error("RLP: item runs past the end");
  return { payload, end, list };
}

/**
 * The items of the RLP list `encoded`, each left encoded (nothing nested is decoded): for counting
 * a block's transactions or receipts, or reaching one of them, without decoding all of them.
 * Throws on input that is not one well-formed list.
 */
export function rlpListItems(encoded: Uint8Array): Uint8Array[] {
  const items: Uint8Array[] = [];
  forEachRlpListItem(encoded, (start, end) => items.push(encoded.subarray(start, end)));
  return items;
}

/** The bytes the RLP byte string `encoded` holds (throws on a list or on bytes that are not one item). */
export function rlpByteStringPayload(encoded: Uint8Array): Uint8Array {
  const item = rlpItemAt(encoded, 0);
  if (item.list || item.end !== encoded.length) throw new Error("RLP: not one byte string");
  return encoded.subarray(item.payload, item.end);
}

/** How many items the RLP list `encoded` holds, nothing nested decoded (throws as rlpListItems). */
export function rlpListLength(encoded: Uint8Array): number {
  let count = 0;
  forEachRlpListItem(encoded, () => count++);
  return count;
}

/** Calls `visit` with where each item of the RLP list `encoded` starts and ends (throws as rlpListItems). */
export function forEachRlpListItem(encoded: Uint8Array, visit: (start: number, end: number) => void): void {
  const list = rlpItemAt(encoded, 0);
  if (!list.list || list.end !== encoded.length) throw new Error("RLP: not one list");
  for (let offset = list.payload; offset < list.end; ) {
    const item = rlpItemAt(encoded, offset);
    if (item.end > list.end) throw new Error("RLP: item runs past its list");
    visit(offset, item.end);
    offset = item.end;
  }
}

/** The RLP list whose items are `items`, each already an RLP encoding (as rlpListItems answers them). */
export function encodeRlpListOfEncoded(items: readonly Uint8Array[]): Uint8Array {
  let payloadLength = 0;
  for (const item of items) payloadLength += item.length;
  let lengthByteCount = 0;
  if (payloadLength >= 56) for (let rest = payloadLength; rest > 0; rest = Math.floor(rest / 256)) lengthByteCount++;
  const prefixLength = 1 + lengthByteCount;
  const encoded = new Uint8Array(prefixLength + payloadLength);
  if (lengthByteCount === 0) encoded[0] = 0xc0 + payloadLength;
  else {
    encoded[0] = 0xf7 + lengthByteCount;
    for (let index = lengthByteCount, rest = payloadLength; index >= 1; index--, rest = Math.floor(rest / 256)) encoded[index] = rest % 256;
  }
  let offset = prefixLength;
  for (const item of items) {
    encoded.set(item, offset);
    offset += item.length;
  }
  return encoded;
}

/**
 * The RLP list `list` with `items` (each already an RLP encoding) appended, its items copied as
 * they are, not itemized: a header's base fields followed by its merged-mining fields.
 */
export function appendToRlpList(list: Uint8Array, items: readonly Uint8Array[]): Uint8Array {
  const first = list[0]!;
  if (first < 0xc0) throw new Error("RLP: not a list");
  const payloadStart = first <= 0xf7 ? 1 : 1 + first - 0xf7;
  const payload = list.subarray(payloadStart);
  return encodeRlpListOfEncoded([payload, ...items]);
}

/** Bytes of RLP of the byte string `bytes`: its prefix and the bytes (a lone byte below 0x80 is its own encoding). */
export function rlpBytesLength(bytes: Uint8Array): number {
  if (bytes.length === 1 && bytes[0]! < 0x80) return 1;
  return rlpPrefixLength(bytes.length) + bytes.length;
}

/** Bytes of the prefix of an RLP string or list of `length` bytes. */
export function rlpPrefixLength(length: number): number {
  return length < 56 ? 1 : 1 + lengthByteCount(length);
}

/** Writes the prefix of a string (offset 0x80) or list (0xc0) of `length` bytes into `out` at `at`; answers where it ends. */
export function writeRlpPrefix(out: Uint8Array, at: number, length: number, offset: number): number {
  if (length < 56) {
    out[at] = offset + length;
    return at + 1;
  }
  const count = lengthByteCount(length);
  out[at] = offset + 55 + count;
  for (let index = count, rest = length; index >= 1; index--, rest = Math.floor(rest / 256)) out[at + index] = rest % 256;
  return at + 1 + count;
}

/** The prefix of an RLP list whose items take `payloadLength` bytes. */
export function rlpListPrefix(payloadLength: number): Uint8Array {
  const prefix = new Uint8Array(rlpPrefixLength(payloadLength));
  writeRlpPrefix(prefix, 0, payloadLength, 0xc0);
  return prefix;
}

/** Where the items of the RLP list `list` start (the length of its prefix). */
export function rlpListPayloadStart(list: Uint8Array): number {
  const first = list[0]!;
  if (!(first >= 0xc0)) throw new Error("RLP: not a list");
  return first <= 0xf7 ? 1 : 1 + first - 0xf7;
}

/**
 * The RLP list `list` with the byte strings `strings` appended as items, written once into one
 * buffer (appendToRlpList with items to encode): the miner's header with its merged-mining fields.
 */
export function appendBytesToRlpList(list: Uint8Array, strings: readonly Uint8Array[]): Uint8Array {
  const payloadStart = rlpListPayloadStart(list);
  let payloadLength = list.length - payloadStart;
  for (const bytes of strings) payloadLength += rlpBytesLength(bytes);
  const encoded = new Uint8Array(rlpPrefixLength(payloadLength) + payloadLength);
  let offset = writeRlpPrefix(encoded, 0, payloadLength, 0xc0);
  encoded.set(list.subarray(payloadStart), offset);
  offset += list.length - payloadStart;
  for (const bytes of strings) {
    if (bytes.length === 1 && bytes[0]! < 0x80) {
      encoded[offset++] = bytes[0]!;
      continue;
    }
    offset = writeRlpPrefix(encoded, offset, bytes.length, 0x80);
    encoded.set(bytes, offset);
    offset += bytes.length;
  }
  return encoded;
}
