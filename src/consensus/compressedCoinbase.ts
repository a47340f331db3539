// The parent-chain coinbase as a block header stores it (`mergedMiningCoinbaseTransaction`): the
// SHA-256 state after the whole 64-byte blocks before the last merged-mining tag, then the bytes
// from there on (reference: MinerServerImpl.compressCoinbase, ProofOfWorkRule). A block stays small
// whatever the pool put in its coinbase, and the txid can still be computed from it.
import { bytesToWords, finishSha256, sha256OfStateDigest, sha256StateAfter, type Sha256State, type Sha256Words, stateToWords, wordsToBytes, writeSha256State } from "./sha256Midstate.js";

/** `RSKBLOCK:`, the reference's tag; the block's hashForMergedMining follows it in the coinbase. */
export const mergedMiningTag = new TextEncoder().encode("RSKBLOCK:");

/** u64 byte count then eight u32 words, big-endian: BouncyCastle's encoded state, bytes 8 to 48. */
export const compressedCoinbaseStateSize = 40;

export interface CompressedCoinbase {
  /** How many coinbase bytes the state has consumed: a multiple of 64 when honest, unchecked here. */
  byteCountBefore: bigint;
  midstate: Sha256Words;
  /** The coinbase from byte `byteCountBefore` to its end. */
  tail: Uint8Array;
}

/** Where `needle` last occurs in `haystack`, or -1 (Java's Collections.lastIndexOfSubList). */
export function lastIndexOfBytes(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let start = haystack.length - needle.length; start >= 0; start--) {
    for (let index = 0; index < needle.length; index++) {
      if (haystack[start + index] !== needle[index]) continue outer;
    }
    return start;
  }
  return -1;
}

/**
 * Compresses a full coinbase (serialized without witness). The cut is at the 64-byte boundary at or
 * before the last tag; without a tag the reference's `-1 / 64` is 0 in Java, so nothing is hashed
 * ahead (the rule then refuses the block for the missing tag).
 */
export function compressCoinbase(coinbase: Uint8Array): Uint8Array {
  return compressCoinbaseWithTxid(coinbase).compressed;
}

/**
 * compressCoinbase, and the coinbase's txid computed as the rule computes it, from the compressed
 * form's state and tail (coinbaseTxidFromCompressed): the built-in miner needs both for every
 * block, and the state then serves twice.
 */
export function compressCoinbaseWithTxid(coinbase: Uint8Array): { compressed: Uint8Array; txid: Uint8Array } {
  const compressed = new Uint8Array(compressedCoinbaseLength(coinbase));
  const txid = new Uint8Array(32);
  writeCompressedCoinbaseWithTxid(coinbase, compressed, 0, txid, 0);
  return { compressed, txid };
}

/** Where compressCoinbase cuts `coinbase`: the 64-byte boundary at or before its last tag (0 without a tag). */
function compressionCut(coinbase: Uint8Array): number {
  const tagPosition = lastIndexOfBytes(coinbase, mergedMiningTag);
  return tagPosition < 0 ? 0 : tagPosition - (tagPosition % 64);
}

/** Bytes of compressCoinbase's answer for `coinbase`. */
export function compressedCoinbaseLength(coinbase: Uint8Array): number {
  return compressedCoinbaseStateSize + coinbase.length - compressionCut(coinbase);
}

/** The state the txid is finished in: nothing yields between writing and reading it. */
const txidState = new Int32Array(8);

/**
 * compressCoinbaseWithTxid writing into buffers of the caller's: the compressed form at `at` in
 * `out` (compressedCoinbaseLength bytes), the txid at `txidAt` in `txidOut` (the built-in miner's
 * parent header, which holds it as its merkle root).
 */
export function writeCompressedCoinbaseWithTxid(coinbase: Uint8Array, out: Uint8Array, at: number, txidOut: Uint8Array, txidAt: number): void {
  const cut = compressionCut(coinbase);
  const before = stateBefore(coinbase, cut);
  const tail = coinbase.subarray(cut);
  out.set(before.encoded, at);
  out.set(tail, at + compressedCoinbaseStateSize);
  const state = txidState;
  state.set(before.state);
  finishSha256(state, cut, tail);
  sha256OfStateDigest(state);
  writeSha256State(state, txidOut, txidAt);
}

/**
 * The state after the coinbase's first `cut` bytes and its stored form (byte count and words), for
 * the last bytes asked for: the built-in miner's coinbases all begin with the same 64 bytes, so
 * comparing them costs less than hashing them again. Never handed out: callers copy the state.
 */
let lastStateBefore: { bytes: Uint8Array; state: Sha256State; encoded: Uint8Array } | undefined;

function stateBefore(coinbase: Uint8Array, cut: number): { state: Sha256State; encoded: Uint8Array } {
  if (lastStateBefore !== undefined && lastStateBefore.bytes.length === cut && startsWith(coinbase, lastStateBefore.bytes)) return lastStateBefore;
  const bytes = coinbase.slice(0, cut);
  const state = sha256StateAfter(bytes);
  const encoded = encodeCompressedCoinbase({ byteCountBefore: BigInt(cut), midstate: stateToWords(state), tail: new Uint8Array(0) });
  lastStateBefore = { bytes, state, encoded };
  return lastStateBefore;
}

function startsWith(bytes: Uint8Array, start: Uint8Array): boolean {
  for (let index = 0; index < start.length; index++) if (bytes[index] !== start[index]) return false;
  return true;
}

export function encodeCompressedCoinbase(compressed: CompressedCoinbase): Uint8Array {
  const bytes = new Uint8Array(compressedCoinbaseStateSize + compressed.tail.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt.asUintN(64, compressed.byteCountBefore), false);
  bytes.set(wordsToBytes(compressed.midstate), 8);
  bytes.set(compressed.tail, compressedCoinbaseStateSize);
  return bytes;
}

/**
 * Reads the stored form; undefined when it is too short to hold the state. The byte count is read
 * as the reference reads it, a signed 64-bit number (a huge count is negative there).
 */
export function decodeCompressedCoinbase(bytes: Uint8Array): CompressedCoinbase | undefined {
  if (bytes.length < compressedCoinbaseStateSize) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    byteCountBefore: view.getBigInt64(0, false),
    midstate: bytesToWords(bytes.subarray(8, compressedCoinbaseStateSize)),
    tail: bytes.subarray(compressedCoinbaseStateSize),
  };
}

/** The coinbase's txid in internal byte order: the second SHA-256 over the resumed first one. */
export function coinbaseTxidFromCompressed(compressed: CompressedCoinbase): Uint8Array {
  const state = Int32Array.from(compressed.midstate);
  finishSha256(state, compressed.byteCountBefore, compressed.tail);
  sha256OfStateDigest(state);
  const txid = new Uint8Array(32);
  writeSha256State(state, txid);
  return txid;
}
