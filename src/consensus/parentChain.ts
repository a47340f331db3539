// The parent chain's (Bitcoin's) block header and its proof of work, as the merged-mining rule reads
// them (reference: ProofOfWorkRule, DifficultyUtils). Hashes stay in internal byte order, the order
// SHA-256 produces and the header stores; explorers show them reversed ("display order").
import { hash } from "node:crypto";
import { plainBytes } from "../common/plainBytes.js";
import { compressSha256Block, initialSha256State, sha256OfStateDigest, writeSha256State } from "./sha256Midstate.js";

export const parentHeaderSize = 80;

export interface ParentHeader {
  version: number;
  prevHash: Uint8Array;
  merkleRoot: Uint8Array;
  /** Seconds since 1970. */
  time: number;
  /** The compact target; the merged-mining rule does not read it (facts 1.5). */
  bits: number;
  nonce: number;
}

/**
 * SHA-256 of SHA-256: Bitcoin's hash of headers, transactions and merkle nodes. Through node:crypto's
 * one-shot hash: the built-in miner hashes a coinbase of up to a kilobyte for every block, several
 * times faster than @noble/hashes or createHash here. A plain Uint8Array, not the Buffer digest() gives.
 */
export function sha256d(data: Uint8Array): Uint8Array {
  return plainBytes(hash("sha256", hash("sha256", data, "buffer"), "buffer"));
}

/**
 * SHA-256d of one 80-byte header at any nonce, for a nonce search: the state after the header's
 * first 64 bytes (version, previous hash, most of the merkle root) is computed once, so a nonce
 * costs two compressions and no allocation, against two node:crypto calls (some 3 µs each) for
 * sha256d. The header's nonce bytes are not read.
 */
export class ParentHeaderHasher {
  private readonly firstBlockState = new Int32Array(8);
  /** The header's last 16 bytes, then SHA-256's padding for an 80-byte message. */
  private readonly lastBlock = new Uint8Array(64);
  private readonly state = new Int32Array(8);

  constructor(header: Uint8Array) {
    if (header.length !== parentHeaderSize) throw new RangeError(`a parent-chain header of ${header.length} bytes, not 80`);
    this.lastBlock[16] = 0x80;
    // 640 bits
    this.lastBlock[62] = 0x02;
    this.lastBlock[63] = 0x80;
    this.load(header, 0);
  }

  /** Hashes the 80-byte header at `offset` in `bytes` from now on: one hasher serves header after header. */
  load(bytes: Uint8Array, offset: number): void {
    if (offset < 0 || offset + parentHeaderSize > bytes.length) throw new RangeError(`a parent-chain header at byte ${offset} of ${bytes.length}`);
    this.firstBlockState.set(initialSha256State);
    compressSha256Block(this.firstBlockState, bytes, offset);
    for (let index = 0; index < 12; index++) this.lastBlock[index] = bytes[offset + 64 + index]!;
  }

  /** Writes SHA-256d of the header with `nonce` (a u32, stored little-endian) into `out` (32 bytes, internal order). */
  hashWithNonce(nonce: number, out: Uint8Array): void {
    const block = this.lastBlock;
    block[12] = nonce;
    block[13] = nonce >>> 8;
    block[14] = nonce >>> 16;
    block[15] = nonce >>> 24;
    const state = this.state;
    state.set(this.firstBlockState);
    compressSha256Block(state, block, 0);
    sha256OfStateDigest(state);
    writeSha256State(state, out);
  }
}

/** The six fields of an 80-byte header (little-endian integers); undefined for any other length. */
export function decodeParentHeader(bytes: Uint8Array): ParentHeader | undefined {
  if (bytes.length !== parentHeaderSize) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    version: view.getUint32(0, true),
    prevHash: bytes.slice(4, 36),
    merkleRoot: bytes.slice(36, 68),
    time: view.getUint32(68, true),
    bits: view.getUint32(72, true),
    nonce: view.getUint32(76, true),
  };
}

export function encodeParentHeader(header: ParentHeader): Uint8Array {
  // Written byte by byte: a DataView per header showed in the built-in miner's time per block.
  const bytes = new Uint8Array(parentHeaderSize);
  writeUint32LittleEndian(bytes, 0, header.version);
  bytes.set(header.prevHash, 4);
  bytes.set(header.merkleRoot, 36);
  writeUint32LittleEndian(bytes, 68, header.time);
  writeUint32LittleEndian(bytes, 72, header.bits);
  writeUint32LittleEndian(bytes, 76, header.nonce);
  return bytes;
}

/** Writes the low 32 bits of `value` at `offset`, least significant byte first. */
export function writeUint32LittleEndian(out: Uint8Array, offset: number, value: number): void {
  out[offset] = value;
  out[offset + 1] = value >>> 8;
  out[offset + 2] = value >>> 16;
  out[offset + 3] = value >>> 24;
}

const twoTo256 = 1n << 256n;

/**
 * `2^256 / max(difficulty, 3)`: the highest header hash that proves `difficulty`. Below 3 the
 * target would need bit 255 (or more), so the reference treats 0, 1 and 2 as 3 (DifficultyUtils).
 */
export function difficultyToParentTarget(difficulty: bigint): bigint {
  return twoTo256 / (difficulty < 3n ? 3n : difficulty);
}

/** A hash read as Bitcoin reads it for proof of work: byte 0 is the least significant. */
export function littleEndianToBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let index = bytes.length - 1; index >= 0; index--) value = (value << 8n) | BigInt(bytes[index]!);
  return value;
}

/** Whether a header hash (internal order) is at or below the target. */
export function isHashWithinTarget(hash: Uint8Array, target: bigint): boolean {
  return littleEndianToBigInt(hash) <= target;
}

/** A target below 2^256 as 32 little-endian bytes, the form `isHashWithinTargetBytes` compares. */
export function targetToLittleEndian(target: bigint): Uint8Array {
  const bytes = new Uint8Array(32);
  for (let index = 0, rest = target; index < 32; index++, rest >>= 8n) bytes[index] = Number(rest & 0xffn);
  return bytes;
}

/** isHashWithinTarget without BigInt, for a nonce search: half the cost of each try at 80 bytes. */
export function isHashWithinTargetBytes(hash: Uint8Array, targetLittleEndian: Uint8Array): boolean {
  for (let index = 31; index >= 0; index--) {
    if (hash[index] !== targetLittleEndian[index]) return hash[index]! < targetLittleEndian[index]!;
  }
  return true;
}

/** The regtest parent network's highest target (compact 0x207fffff): every regtest block may use it. */
export const parentRegtestMaxTarget = 0x7fffffn << 232n;

/**
 * Bitcoin's compact form of a target (`nBits`, bitcoinj `Utils.encodeCompactBits`): a byte count
 * and the three most significant bytes; the mantissa's top bit would read as a sign, so a mantissa
 * with it set moves one byte down.
 */
export function targetToCompact(target: bigint): number {
  let size = target === 0n ? 0 : Math.ceil(target.toString(16).length / 2);
  let mantissa = size <= 3 ? target << BigInt(8 * (3 - size)) : target >> BigInt(8 * (size - 3));
  if ((mantissa & 0x800000n) !== 0n) {
    mantissa >>= 8n;
    size += 1;
  }
  return ((size << 24) | Number(mantissa)) >>> 0;
}

/** A hash as explorers show it (reversed, hex), for messages and logs. */
export function hashToDisplayHex(hash: Uint8Array): string {
  return Buffer.from(hash).reverse().toString("hex");
}
