// Hex codecs of the JSON-RPC wire format (QUANTITY and DATA), and the words used to explain a
// malformed value. Pure functions; nothing here knows about JSON-RPC errors.

/** How a hex value is written: a QUANTITY of at most maxBits, any DATA, or DATA of a fixed length. */
export type HexFormat =
  | { readonly kind: "quantity"; readonly maxBits: number }
  | { readonly kind: "data" }
  | { readonly kind: "bytes"; readonly length: number };

const hexDigits = /^[0-9a-fA-F]*$/;

/**
 * Says what is wrong with `value` as a hex string of the given format, or undefined when it is
 * well formed. The wording follows the reference clients ("hex string without 0x prefix", ...).
 */
export function describeHexProblem(value: string, format: HexFormat): string | undefined {
  if (!value.startsWith("0x")) {
    return value.startsWith("0X") ? 'hex string with upper-case "0X" prefix (use "0x")' : "hex string without 0x prefix";
  }
  const digits = value.slice(2);
  if (!hexDigits.test(digits)) return "invalid hex string";
  switch (format.kind) {
    case "quantity":
      if (digits.length === 0) return 'hex number "0x" has no digits (zero is "0x0")';
      if (digits.length > 1 && digits.startsWith("0")) return "hex number with leading zero digits";
      if (digits.length > format.maxBits / 4) return `hex number larger than ${format.maxBits} bits`;
      return undefined;
    case "data":
      return digits.length % 2 === 1 ? "hex string of odd length" : undefined;
    case "bytes":
      if (digits.length % 2 === 1) return "hex string of odd length";
      if (digits.length !== format.length * 2) {
        return `wrong length: want ${format.length} bytes, got ${digits.length / 2}`;
      }
      return undefined;
  }
}

/**
 * Node's hex encoder called on the array itself: `Buffer.prototype.hexSlice` is what a Buffer's
 * toString("hex") calls, and it reads any Uint8Array. Buffer.from(...).toString("hex") first made
 * a Buffer over the bytes, more than half of a conversion's time (some 360 against 150 ns for 32
 * bytes here); the node converts hashes, addresses and trie keys dozens of times a transaction.
 * Where the method is missing, or answers otherwise for a sample (another Node.js), the Buffer way.
 */
const hexSliceOfBuffer = (Buffer.prototype as unknown as { hexSlice?: (this: Uint8Array, start: number, end: number) => string }).hexSlice;
const sampleBytes = Uint8Array.from({ length: 33 }, (_, index) => (index * 37 + 5) & 0xff);
const nodeHexSlice =
  typeof hexSliceOfBuffer === "function" && hexSliceOfBuffer.call(sampleBytes.subarray(1), 0, 32) === Buffer.from(sampleBytes.subarray(1)).toString("hex") ? hexSliceOfBuffer : undefined;

const byteToHex: string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/**
 * Longer arrays are converted by Buffer in one piece. A text appended a byte at a time is a rope
 * of one string per byte: a 532-byte trie node became 533 objects, the proofs of 1,024 storage
 * slots millions, which the young generation copied and the answer's encoding flattened again
 * (eth_getProof: collections of 50-100 ms, make bench, bounds). Without nodeHexSlice, short ones
 * (addresses, hashes) stay on the append, which allocates no Buffer.
 */
const appendedHexMaxBytes = 64;

/**
 * Bytes to DATA: "0x" followed by two lower-case digits per byte. Node's encoder (nodeHexSlice,
 * above) takes arrays of every length: one flat string, no Buffer, 2-3 times quicker than the
 * append for a hash once it is used as a key.
 */
export function bytesToHex(bytes: Uint8Array): string {
  if (nodeHexSlice !== undefined || bytes.length > appendedHexMaxBytes) return `0x${bytesToUnprefixedHex(bytes)}`;
  let out = "0x";
  for (const byte of bytes) out += byteToHex[byte];
  return out;
}

/** Bytes as plain lower-case hex without 0x: a compact map key for hashes and addresses. */
export function bytesToUnprefixedHex(bytes: Uint8Array): string {
  if (nodeHexSlice !== undefined) return nodeHexSlice.call(bytes, 0, bytes.length);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

const stableHex = new WeakMap<Uint8Array, string>();

/**
 * bytesToUnprefixedHex of bytes that are never changed in place, kept by the array: an execution
 * frame passes the same address bytes to every read and write of its account and storage, and an
 * account's copies share their roots and hashes; converting them at every access showed in profiles.
 */
export function hexOfStableBytes(bytes: Uint8Array): string {
  let hex = stableHex.get(bytes);
  if (hex === undefined) stableHex.set(bytes, (hex = bytesToUnprefixedHex(bytes)));
  return hex;
}

let recentKeyBytes: Uint8Array | undefined;
let recentKeyHex = "";

/**
 * bytesToUnprefixedHex remembering its last answer by the array: one storage slot's key is looked
 * up in turn by SLOAD's or SSTORE's gas, the access journal, the original values and the state, as
 * one array (execution/interpreterFastPaths.ts), and converted once. For bytes never changed in
 * place; cheaper than hexOfStableBytes for the many short-lived keys of an execution.
 */
export function hexOfRecentKey(bytes: Uint8Array): string {
  if (bytes !== recentKeyBytes) {
    recentKeyHex = bytesToUnprefixedHex(bytes);
    recentKeyBytes = bytes;
  }
  return recentKeyHex;
}

/** Nibble values by character code, for hexadecimal digits of either case. */
const nibbleOfCharCode = new Uint8Array(128);
for (let nibble = 0; nibble < 16; nibble++) {
  nibbleOfCharCode[nibble.toString(16).charCodeAt(0)] = nibble;
  nibbleOfCharCode[nibble.toString(16).toUpperCase().charCodeAt(0)] = nibble;
}

/** DATA to bytes. The caller has validated the string (even length, hex digits, 0x prefix). */
export function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array((hex.length - 2) >>> 1);
  for (let index = 0, at = 2; index < bytes.length; index++, at += 2) {
    bytes[index] = (nibbleOfCharCode[hex.charCodeAt(at)]! << 4) | nibbleOfCharCode[hex.charCodeAt(at + 1)]!;
  }
  return bytes;
}

/**
 * A storage slot given as a hex number of up to 32 bytes (leading zeros or not, an odd count of
 * digits allowed) as the 32-byte key, left-padded. The caller has validated the string.
 */
export function storageSlotFromHex(hex: string): Uint8Array {
  const digits = hex.slice(2);
  const slot = new Uint8Array(32);
  writeHexDigits(digits, slot, 32 - ((digits.length + 1) >>> 1));
  return slot;
}

/**
 * Writes hex `digits` (no prefix, as bigint's toString(16) gives them; an odd count
 * starts with a lone nibble) into `target` from `offset` as big-endian bytes; returns how many.
 */
export function writeHexDigits(digits: string, target: Uint8Array, offset: number): number {
  let at = offset;
  let digit = 0;
  if (digits.length % 2 === 1) target[at++] = nibbleOfCharCode[digits.charCodeAt(digit++)]!;
  while (digit < digits.length) target[at++] = (nibbleOfCharCode[digits.charCodeAt(digit++)]! << 4) | nibbleOfCharCode[digits.charCodeAt(digit++)]!;
  return at - offset;
}

/**
 * `bytes` without its leading zero bytes, as @ethereumjs/util's unpadBytes gives them (`bytes`
 * itself when it has none, else the rest by slice). unpadBytes slices once per zero byte and
 * turns each byte into a string to compare it: a storage value of 1 in 32 bytes took 31 copies,
 * and the 10,000 slots of a state override 30 ms of the main thread (make bench, bounds).
 */
export function withoutLeadingZeroBytes(bytes: Uint8Array): Uint8Array {
  let first = 0;
  while (first < bytes.length && bytes[first] === 0) first++;
  return first === 0 ? bytes : bytes.slice(first);
}

/**
 * A non-negative integer as its shortest big-endian bytes (none for zero): @ethereumjs/util's
 * bigIntToUnpaddedBytes without its round trip through a prefixed string and a regular expression.
 */
export function bigIntToMinimalBytes(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError(`a negative integer has no unsigned encoding: ${value}`);
  if (value === 0n) return new Uint8Array(0);
  if (value < 0x100n) return Uint8Array.of(Number(value));
  const digits = value.toString(16);
  const bytes = new Uint8Array((digits.length + 1) >> 1);
  writeHexDigits(digits, bytes, 0);
  return bytes;
}

/** A non-negative integer as a QUANTITY: minimal lower-case hex, "0x0" for zero. */
export function toQuantity(value: bigint | number): string {
  if (value < 0) throw new RangeError(`a QUANTITY cannot be negative: ${value}`);
  return `0x${value.toString(16)}`;
}

/** A validated QUANTITY as a bigint. */
export function quantityToBigInt(quantity: string): bigint {
  return BigInt(quantity);
}

/**
 * The nibbles of `bytes`, high half of each byte first (trie paths). Pushed onto an empty array, as
 * @ethereumjs/mpt makes its paths: V8 gives such an array another hidden class (packed) than one
 * made with its length (holey), and the trie code that reads both kinds of paths (a node's key, a
 * batch's change) was compiled for one and thrown away when the other came.
 */
export function bytesToNibbles(bytes: Uint8Array): number[] {
  const nibbles: number[] = [];
  for (let index = 0; index < bytes.length; index++) nibbles.push(bytes[index]! >> 4, bytes[index]! & 0x0f);
  return nibbles;
}
