// SHA-256 (FIPS 180-4) stopped after whole 64-byte blocks and resumed later: the compressed
// coinbase carries the state after its first bytes instead of the bytes (reference:
// MinerServerImpl.compressCoinbase, BouncyCastle's SHA256Digest state), and the built-in miner hashes
// its 80-byte parent headers from the state after their first 64 bytes. The compression function is
// written here, on 32-bit integers and buffers allocated once: the miner hashes a few blocks for
// every block it makes, and node:crypto's one-shot hash (some 3 µs a call for 80 bytes, mostly the
// call) or @noble/hashes (a new hasher and digest each time) cost several times one compression.
// Nothing here yields: the shared scratch buffers cannot be read by two hashes at once.

/** The eight 32-bit state words H0..H7 (unsigned). */
export type Sha256Words = [number, number, number, number, number, number, number, number];

/** The state words as the compression function keeps them (signed 32-bit). */
export type Sha256State = Int32Array;

const blockSize = 64;

/** FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const roundConstants = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
  0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
  0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
  0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** FIPS 180-4 5.3.3: the state before the first block (never written: newSha256State copies it). */
export const initialSha256State: Readonly<Sha256State> = Int32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/** The message schedule, shared by every compression. */
const schedule = new Int32Array(64);

/** A state set to SHA-256's initial one. */
export function newSha256State(): Sha256State {
  return initialSha256State.slice();
}

/** Folds the 64 bytes of `data` at `offset` into `state` (FIPS 180-4 6.2.2). */
export function compressSha256Block(state: Sha256State, data: Uint8Array, offset: number): void {
  const w = schedule;
  for (let index = 0, at = offset; index < 16; index++, at += 4) w[index] = (data[at]! << 24) | (data[at + 1]! << 16) | (data[at + 2]! << 8) | data[at + 3]!;
  for (let index = 16; index < 64; index++) {
    const w15 = w[index - 15]!;
    const w2 = w[index - 2]!;
    const sigma0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const sigma1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    w[index] = (sigma1 + w[index - 7]! + sigma0 + w[index - 16]!) | 0;
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  let f = state[5]!;
  let g = state[6]!;
  let h = state[7]!;
  for (let index = 0; index < 64; index++) {
    const sum1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    // Ch(e, f, g) and Maj(a, b, c) in the forms with fewer operations.
    const t1 = (h + sum1 + (g ^ (e & (f ^ g))) + roundConstants[index]! + w[index]!) | 0;
    const sum0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (sum0 + ((a & b) | (c & (a | b)))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
  state[5] = (state[5]! + f) | 0;
  state[6] = (state[6]! + g) | 0;
  state[7] = (state[7]! + h) | 0;
}

/** Writes the state as 32 big-endian bytes (the digest, once the message is padded) at `offset`. */
export function writeSha256State(state: Sha256State, out: Uint8Array, offset = 0): void {
  for (let index = 0, at = offset; index < 8; index++, at += 4) {
    const word = state[index]!;
    out[at] = word >>> 24;
    out[at + 1] = word >>> 16;
    out[at + 2] = word >>> 8;
    out[at + 3] = word;
  }
}

/** The one block SHA-256 of a 32-byte message compresses: the message, 0x80, zeros, bit length 256. */
const digestBlock = new Uint8Array(blockSize);
digestBlock[32] = 0x80;
digestBlock[62] = 0x01;

/**
 * SHA-256 of the 32-byte digest `state` holds, left in `state`: the second pass of Bitcoin's
 * SHA-256d, one compression.
 */
export function sha256OfStateDigest(state: Sha256State): void {
  writeSha256State(state, digestBlock, 0);
  state.set(initialSha256State);
  compressSha256Block(state, digestBlock, 0);
}

/** Room for the last one or two blocks of a message: its last bytes, the padding and the length. */
const finalBlocks = new Uint8Array(2 * blockSize);

/**
 * Folds `tail` into `state` and finishes the hash: `state` then holds the digest. The state has
 * consumed `byteCountBefore` bytes. The padding is written here rather than by a library so that
 * the length field is exactly the reference's for any byte count a block may claim: BouncyCastle
 * keeps the count in a Java long and writes `count * 8` modulo 2^64.
 */
export function finishSha256(state: Sha256State, byteCountBefore: bigint | number, tail: Uint8Array): void {
  const wholeBlocks = tail.length - (tail.length % blockSize);
  for (let offset = 0; offset < wholeBlocks; offset += blockSize) compressSha256Block(state, tail, offset);
  const rest = tail.length - wholeBlocks;
  const finalLength = rest + 9 <= blockSize ? blockSize : 2 * blockSize;
  finalBlocks.fill(0, 0, finalLength);
  finalBlocks.set(tail.subarray(wholeBlocks), 0);
  finalBlocks[rest] = 0x80;
  if (typeof byteCountBefore === "number" && Number.isSafeInteger(byteCountBefore) && byteCountBefore >= 0 && byteCountBefore + tail.length < 2 ** 50) {
    // The bit count below 2^53: two 32-bit halves without a BigInt.
    const bitLength = (byteCountBefore + tail.length) * 8;
    const high = Math.floor(bitLength / 2 ** 32);
    const low = bitLength >>> 0;
    writeUint32BigEndian(finalBlocks, finalLength - 8, high);
    writeUint32BigEndian(finalBlocks, finalLength - 4, low);
  } else {
    const bitLength = BigInt.asUintN(64, (BigInt(byteCountBefore) + BigInt(tail.length)) * 8n);
    writeUint32BigEndian(finalBlocks, finalLength - 8, Number(bitLength >> 32n));
    writeUint32BigEndian(finalBlocks, finalLength - 4, Number(bitLength & 0xffffffffn));
  }
  compressSha256Block(state, finalBlocks, 0);
  if (finalLength > blockSize) compressSha256Block(state, finalBlocks, blockSize);
}

function writeUint32BigEndian(out: Uint8Array, offset: number, value: number): void {
  out[offset] = value >>> 24;
  out[offset + 1] = value >>> 16;
  out[offset + 2] = value >>> 8;
  out[offset + 3] = value;
}

/** The state after hashing `prefix`, whose length must be a multiple of 64 (the caller's choice). */
export function sha256StateAfter(prefix: Uint8Array): Sha256State {
  if (prefix.length % blockSize !== 0) throw new RangeError(`SHA-256 midstate after ${prefix.length} bytes, not a multiple of 64`);
  const state = newSha256State();
  for (let offset = 0; offset < prefix.length; offset += blockSize) compressSha256Block(state, prefix, offset);
  return state;
}

/** sha256StateAfter as the eight unsigned words. */
export function sha256MidstateAfter(prefix: Uint8Array): Sha256Words {
  return stateToWords(sha256StateAfter(prefix));
}

/**
 * SHA-256 of a message whose first `byteCountBefore` bytes left the state `words`, and whose
 * remaining bytes are `tail` (the length field as finishSha256 writes it).
 */
export function sha256FromMidstate(words: Sha256Words, byteCountBefore: bigint, tail: Uint8Array): Uint8Array {
  const state = Int32Array.from(words);
  finishSha256(state, byteCountBefore, tail);
  const digest = new Uint8Array(32);
  writeSha256State(state, digest);
  return digest;
}

export function stateToWords(state: Sha256State): Sha256Words {
  return Array.from(state, (word) => word >>> 0) as Sha256Words;
}

export function wordsToBytes(words: readonly number[]): Uint8Array {
  const bytes = new Uint8Array(words.length * 4);
  const view = new DataView(bytes.buffer);
  words.forEach((word, index) => view.setUint32(index * 4, word >>> 0, false));
  return bytes;
}

export function bytesToWords(bytes: Uint8Array): Sha256Words {
  const view = new DataView(bytes.buffer, bytes.byteOffset, 32);
  return Array.from({ length: 8 }, (_, index) => view.getUint32(index * 4, false)) as Sha256Words;
}
