// SHA-256 stopped after whole 64-byte blocks and resumed later: the compressed coinbase carries the
// state after its first bytes instead of the bytes (reference: MinerServerImpl.compressCoinbase,
// BouncyCastle's SHA256Digest state). @noble/hashes keeps the eight state words behind protected
// get/set, which a subclass may call.
import { _SHA256 } from "@noble/hashes/sha2.js";

/** The eight 32-bit state words H0..H7. */
export type Sha256Words = [number, number, number, number, number, number, number, number];

const blockSize = 64;

class ResumableSha256 extends _SHA256 {
  static startingFrom(words: Sha256Words): ResumableSha256 {
    const hasher = new ResumableSha256();
    hasher.set(...words);
    return hasher;
  }

  /** The state words; only meaningful between blocks, when nothing is buffered. */
  words(): Sha256Words {
    if (this.pos !== 0) throw new RangeError("SHA-256 state read inside a 64-byte block");
    return this.get();
  }
}

/** The state after hashing `prefix`, whose length must be a multiple of 64 (the caller's choice). */
export function sha256MidstateAfter(prefix: Uint8Array): Sha256Words {
  if (prefix.length % blockSize !== 0) throw new RangeError(`SHA-256 midstate after ${prefix.length} bytes, not a multiple of 64`);
  return new ResumableSha256().update(prefix).words();
}

/**
 * SHA-256 of a message whose first `byteCountBefore` bytes left the state `words`, and whose
 * remaining bytes are `tail`. The padding is written here rather than by the library so that the
 * length field is exactly the reference's for any byte count a block may claim: BouncyCastle keeps
 * the count in a Java long and writes `count * 8` modulo 2^64.
 */
export function sha256FromMidstate(words: Sha256Words, byteCountBefore: bigint, tail: Uint8Array): Uint8Array {
  const paddedLength = Math.ceil((tail.length + 9) / blockSize) * blockSize;
  const padded = new Uint8Array(paddedLength);
  padded.set(tail);
  padded[tail.length] = 0x80;
  const bitLength = BigInt.asUintN(64, (byteCountBefore + BigInt(tail.length)) * 8n);
  new DataView(padded.buffer).setBigUint64(paddedLength - 8, bitLength, false);
  const finalWords = ResumableSha256.startingFrom(words).update(padded).words();
  return wordsToBytes(finalWords);
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
