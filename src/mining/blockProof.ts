// The proof of work of a block the node mines itself, as the reference's regtest miner gives it
// (MinerServerImpl.buildBlockToMine, then MinerClientImpl.mineBlock): once the block is built its
// hashForMergedMining is known; the built-in parent miner makes a parent-chain block whose coinbase
// commits to it and searches the nonce until the parent header's hash meets the block's difficulty
// target; the three merged-mining fields go into the header, whose hash (RSKIP92) then covers the
// parent header.
import { Block } from "../chain/block.js";
import type { BlockHeader } from "../chain/header.js";
import { parentHeaderSize } from "../consensus/parentChain.js";
import { createBuiltinParentMiner, ParentBlockInPlace, type ParentMinerRandom } from "./builtinParentMiner.js";

/**
 * Where the coinbase's random prefix of a block comes from, given its hashForMergedMining. The
 * reference draws it from SecureRandom; the node seeds it from the block's hash for merged mining
 * instead, so that the same chain mined twice has the same block hashes (a dev chain, tests).
 */
export type ParentMinerRandomSource = (hashForMergedMining: Uint8Array) => ParentMinerRandom;

/**
 * The default source: xoshiro128** seeded with the first 16 bytes of the block's hashForMergedMining.
 * Not a cryptographic generator, nor need it be: nothing reads the prefix, it only varies the
 * coinbase. builtinParentMiner's createSeededParentMinerRandom (SHA-256 of seed and counter) and an
 * AES-CTR keystream took 65 and 13 µs a block for the average 500-byte prefix, 2-10 % of an
 * automined transfer's time. `integerBelow` takes a u32 modulo the bound, as there.
 */
export const seededFromBlock: ParentMinerRandomSource = (hashForMergedMining) => new Xoshiro128StarStar(hashForMergedMining);

/** xoshiro128** as a class: made for every mined block, a literal of closures cost more than its numbers. */
class Xoshiro128StarStar implements ParentMinerRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: Uint8Array) {
    this.a = readUint32BigEndian(seed, 0);
    this.b = readUint32BigEndian(seed, 4);
    this.c = readUint32BigEndian(seed, 8);
    // A state of all zeros would stay zero.
    this.d = readUint32BigEndian(seed, 12) | 1;
  }

  private next(): number {
    const result = Math.imul(rotateLeft(Math.imul(this.b, 5), 7), 9) >>> 0;
    const shifted = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= shifted;
    this.d = rotateLeft(this.d, 11);
    return result;
  }

  integerBelow(bound: number): number {
    return this.next() % bound;
  }

  bytes(length: number): Uint8Array {
    const out = new Uint8Array(length);
    for (let offset = 0; offset < length; offset += 4) {
      const word = this.next();
      for (let byte = 0; byte < 4 && offset + byte < length; byte++) out[offset + byte] = word >>> (24 - 8 * byte);
    }
    return out;
  }
}

function readUint32BigEndian(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;
}

function rotateLeft(value: number, bits: number): number {
  return (value << bits) | (value >>> (32 - bits));
}

/**
 * The node's own blocks take a coinbase prefix of 0 to 27 bytes, not the reference's 0 to 999: the
 * prefix only varies the coinbase, and its bytes cost hashing (the midstate, the txid) on every
 * automined block, some 60 µs for the average 500 bytes, a tenth of a transfer's time. The tag then
 * starts between bytes 100 and 127, in the coinbase's second 64-byte block: the compressed coinbase's
 * midstate is that of the first block, the same for every block (compressCoinbase keeps it).
 */
export const blockProofPrefixLengthBound = 28;

/** A parent header's time is a u32: a block stamped later (evm_increaseTime far ahead) gives the largest. */
const largestParentTime = 0xffffffffn;

/**
 * The block with its proof of work: a new header carrying the three merged-mining fields, the same
 * transactions and uncles. The parent header's time is the block's timestamp (the RSKIP179 link
 * between the two then holds), and its nonce search starts at 0 for each block: both keep the proof
 * a function of the block alone. The parent block is written straight into the new header's
 * encoding (ParentBlockInPlace); the built-in miner's search in full makes the same fields, and
 * takes over when the first coinbase's nonces all fail (a difficulty beyond some 2^31).
 */
export function proveBlock(block: Block, randomFor: ParentMinerRandomSource = seededFromBlock): Block {
  const header = block.header;
  const fields = header.fields;
  const hashForMergedMining = header.hashForMergedMining;
  const time = Number(fields.timestamp < largestParentTime ? fields.timestamp : largestParentTime);
  let proven: BlockHeader | undefined;
  if (fields.mergedMiningHeader.length === 0 && fields.mergedMiningMerkleProof.length === 0 && fields.mergedMiningCoinbaseTransaction.length === 0) {
    const random = randomFor(hashForMergedMining);
    const parentBlock = new ParentBlockInPlace(random.bytes(random.integerBelow(blockProofPrefixLengthBound)), hashForMergedMining, fields.difficulty, time);
    proven = header.withMergedMiningWrittenIn(parentHeaderSize, parentBlock.compressedCoinbaseLength, (encoded, headerAt, coinbaseAt) => parentBlock.writeInto(encoded, headerAt, coinbaseAt));
  }
  if (proven === undefined) {
    const parentMiner = createBuiltinParentMiner({ random: randomFor(hashForMergedMining), nowSeconds: () => time, prefixLengthBound: blockProofPrefixLengthBound });
    proven = header.withMergedMining(parentMiner.mine(hashForMergedMining, fields.difficulty).fields);
  }
  return new Block(proven, block.transactions, block.uncles);
}
