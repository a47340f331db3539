// What the reference's regtest miner does for each block (co/rsk/mine/MinerClientImpl.mineBlock,
// MinerUtils): make up a parent-chain block whose only transaction is a coinbase committing to the
// block's hashForMergedMining, and count the header's nonce up until its hash meets the block's
// target. The answer is the three merged-mining fields the block header carries.
import { randomBytes, randomInt } from "node:crypto";
import { sha256 } from "@noble/hashes/sha2.js";
import type { HeaderFields } from "../chain/header.js";
import { compressCoinbaseWithTxid, compressedCoinbaseLength, writeCompressedCoinbaseWithTxid } from "../consensus/compressedCoinbase.js";
import {
  difficultyToParentTarget,
  encodeParentHeader,
  isHashWithinTargetBytes,
  ParentHeaderHasher,
  parentHeaderSize,
  parentRegtestMaxTarget,
  targetToCompact,
  targetToLittleEndian,
  writeUint32LittleEndian,
} from "../consensus/parentChain.js";
import { createParentCoinbase, parentCoinbaseLength, writeParentCoinbase } from "./parentCoinbase.js";

export type MergedMiningFields = Pick<HeaderFields, "mergedMiningHeader" | "mergedMiningMerkleProof" | "mergedMiningCoinbaseTransaction">;

export interface ParentBlockSolution {
  fields: MergedMiningFields;
  /** The full coinbase (the fields carry it compressed); made when read. */
  readonly coinbase: Uint8Array;
  parentHeaderHash: Uint8Array;
  /** Header hashes tried for this block. */
  attempts: number;
}

/** Where the coinbase's random prefix comes from: the reference's SecureRandom, or a seed in tests. */
export interface ParentMinerRandom {
  integerBelow(bound: number): number;
  bytes(length: number): Uint8Array;
}

export interface BuiltinParentMinerOptions {
  random: ParentMinerRandom;
  nowSeconds: () => number;
  /** The random prefix is shorter than this many bytes (default: the reference's 1000). */
  prefixLengthBound?: number;
}

export const defaultBuiltinParentMinerOptions: BuiltinParentMinerOptions = {
  random: { integerBelow: (bound) => randomInt(bound), bytes: (length) => new Uint8Array(randomBytes(length)) },
  nowSeconds: () => Math.floor(Date.now() / 1000),
};

/**
 * A reproducible source: SHA-256 of `seed ‖ counter`, 32 bytes at a time. `integerBelow` takes a
 * u32 modulo the bound (a bias below 1e-6 for the miner's bound of 1000, irrelevant to a prefix).
 */
export function createSeededParentMinerRandom(seed: Uint8Array): ParentMinerRandom {
  let counter = 0;
  const bytes = (length: number): Uint8Array => {
    const out = new Uint8Array(length);
    for (let offset = 0; offset < length; offset += 32) {
      const input = new Uint8Array(seed.length + 4);
      input.set(seed);
      new DataView(input.buffer).setUint32(seed.length, counter++, false);
      out.set(sha256(input).subarray(0, Math.min(32, length - offset)), offset);
    }
    return out;
  };
  return { bytes, integerBelow: (bound) => new DataView(bytes(4).buffer).getUint32(0, false) % bound };
}

export interface ParentBlockSearch {
  /** Tries up to `maxAttempts` more nonces: the solution (once found, always it), or undefined to be called again. */
  tryNonces(maxAttempts: number): ParentBlockSolution | undefined;
  readonly attempts: number;
}

export interface BuiltinParentMiner {
  /** A search in slices, for a caller that must not hold the event loop at a high difficulty. */
  startSearch(hashForMergedMining: Uint8Array, difficulty: bigint): ParentBlockSearch;
  /** The whole search at once: a few hashes at regtest's difficulty 1. */
  mine(hashForMergedMining: Uint8Array, difficulty: bigint): ParentBlockSolution;
}

/** The reference's prefix is 0 to 999 random bytes (MinerUtils.generateRandomPrefix). */
const referencePrefixLengthBound = 1000;
/** BIP9's base version; the rule reads no field of the header but its merkle root. */
const parentBlockVersion = 0x20000000;
const regtestBits = targetToCompact(parentRegtestMaxTarget);
const nonceCount = 2 ** 32;

/** The last difficulty's target: a chain's blocks mostly share one (a division of 256-bit numbers a block). */
let lastTarget: { difficulty: bigint; target: Uint8Array } | undefined;

function targetFor(difficulty: bigint): Uint8Array {
  if (lastTarget?.difficulty !== difficulty) lastTarget = { difficulty, target: targetToLittleEndian(difficultyToParentTarget(difficulty)) };
  return lastTarget.target;
}

/**
 * Where the coinbase is written to be compressed and hashed: only its compressed form is kept, and
 * the full one is made again when a caller reads it (tests). Nothing yields between writing and
 * compressing it, so one buffer serves every search.
 */
let coinbaseScratch = new Uint8Array(parentCoinbaseLength(referencePrefixLengthBound));
const zeroHash = new Uint8Array(32);

export function createBuiltinParentMiner(options: BuiltinParentMinerOptions = defaultBuiltinParentMinerOptions): BuiltinParentMiner {
  return new Miner(options);
}

// Classes rather than object literals with getters: V8 makes each such literal's accessors anew, and
// made per block they kept the young objects they reach alive through minor collections (a
// half of a search's time went to the collector).

class Miner implements BuiltinParentMiner {
  /** One counter for all blocks, as the reference's nextNonceToUse: a new search goes on from it. */
  nextNonce = 0;

  constructor(readonly options: BuiltinParentMinerOptions) {}

  startSearch(hashForMergedMining: Uint8Array, difficulty: bigint): ParentBlockSearch {
    return new Search(this, hashForMergedMining, targetFor(difficulty));
  }

  mine(hashForMergedMining: Uint8Array, difficulty: bigint): ParentBlockSolution {
    const search = this.startSearch(hashForMergedMining, difficulty);
    for (;;) {
      const solution = search.tryNonces(nonceCount);
      if (solution !== undefined) return solution;
    }
  }
}

class Search implements ParentBlockSearch {
  private tried = 0;
  private prefix: Uint8Array = new Uint8Array(0);
  private compressedCoinbase: Uint8Array = new Uint8Array(0);
  private header: Uint8Array = new Uint8Array(0);
  private hasher: ParentHeaderHasher | undefined;
  private noncesLeftForCoinbase = 0;
  private readonly hash = new Uint8Array(32);
  private solution: ParentBlockSolution | undefined;

  constructor(
    private readonly miner: Miner,
    private readonly hashForMergedMining: Uint8Array,
    /** Little-endian, as isHashWithinTargetBytes reads it. */
    private readonly target: Uint8Array,
  ) {
    this.takeNewCoinbase();
  }

  get attempts(): number {
    return this.tried;
  }

  tryNonces(maxAttempts: number): ParentBlockSolution | undefined {
    const { miner, hash, target } = this;
    for (let tried = 0; this.solution === undefined && tried < maxAttempts; tried++) {
      if (this.noncesLeftForCoinbase === 0) this.takeNewCoinbase();
      const nonce = miner.nextNonce;
      miner.nextNonce = (nonce + 1) % nonceCount;
      this.noncesLeftForCoinbase--;
      this.tried++;
      this.hasher!.hashWithNonce(nonce, hash);
      if (isHashWithinTargetBytes(hash, target)) this.solution = this.solved(nonce);
    }
    return this.solution;
  }

  /** A new coinbase (new prefix, so a new merkle root), first and once all 2^32 nonces of one have failed. */
  private takeNewCoinbase(): void {
    const { random, prefixLengthBound, nowSeconds } = this.miner.options;
    this.prefix = random.bytes(random.integerBelow(prefixLengthBound ?? referencePrefixLengthBound));
    const length = parentCoinbaseLength(this.prefix.length, this.hashForMergedMining.length);
    if (coinbaseScratch.length < length) coinbaseScratch = new Uint8Array(length);
    writeParentCoinbase(coinbaseScratch, this.prefix, this.hashForMergedMining);
    // The compressed form the header will carry, and the txid the rule computes from it.
    const { compressed, txid } = compressCoinbaseWithTxid(coinbaseScratch.subarray(0, length));
    this.compressedCoinbase = compressed;
    this.header = encodeParentHeader({ version: parentBlockVersion, prevHash: zeroHash, merkleRoot: txid, time: nowSeconds(), bits: regtestBits, nonce: 0 });
    this.hasher = new ParentHeaderHasher(this.header);
    this.noncesLeftForCoinbase = nonceCount;
  }

  private solved(nonce: number): ParentBlockSolution {
    const header = this.header;
    writeUint32LittleEndian(header, 76, nonce);
    const fields = { mergedMiningHeader: header, mergedMiningMerkleProof: new Uint8Array(0), mergedMiningCoinbaseTransaction: this.compressedCoinbase };
    return new Solution(fields, this.hash.slice(), this.tried, this.prefix, this.hashForMergedMining);
  }
}

/** The hasher and hash of ParentBlockInPlace's searches (nothing yields inside one). */
const inPlaceHasher = new ParentHeaderHasher(new Uint8Array(parentHeaderSize));
const inPlaceHash = new Uint8Array(32);

/**
 * One block's parent block as `mine` on a fresh miner makes it (nonces from 0, its random source's
 * first prefix): the same header and compressed coinbase byte for byte, written where the caller
 * says (BlockHeader.withMergedMiningWrittenIn: into the block header's encoding) rather than into
 * arrays of their own, and without the search's objects: the miner's own block is proven this way
 * on every automined transaction. Made, then written at once: the coinbase waits in the shared
 * scratch between the two.
 */
export class ParentBlockInPlace {
  /** Bytes of the compressed coinbase writeInto writes. */
  readonly compressedCoinbaseLength: number;
  private readonly coinbase: Uint8Array;
  private readonly target: Uint8Array;

  constructor(
    prefix: Uint8Array,
    hashForMergedMining: Uint8Array,
    difficulty: bigint,
    private readonly time: number,
  ) {
    const length = parentCoinbaseLength(prefix.length, hashForMergedMining.length);
    if (coinbaseScratch.length < length) coinbaseScratch = new Uint8Array(length);
    writeParentCoinbase(coinbaseScratch, prefix, hashForMergedMining);
    this.coinbase = coinbaseScratch.subarray(0, length);
    this.compressedCoinbaseLength = compressedCoinbaseLength(this.coinbase);
    this.target = targetFor(difficulty);
  }

  /**
   * Writes the 80-byte parent header at `headerAt` and the compressed coinbase at `coinbaseAt` in
   * `out`; false when none of the coinbase's 2^32 nonces meets the target (`mine` would go on with
   * a new coinbase: the caller asks it then).
   */
  writeInto(out: Uint8Array, headerAt: number, coinbaseAt: number): boolean {
    // The header's fields as encodeParentHeader writes them, the coinbase's txid as its merkle root.
    writeUint32LittleEndian(out, headerAt, parentBlockVersion);
    out.fill(0, headerAt + 4, headerAt + 36);
    writeCompressedCoinbaseWithTxid(this.coinbase, out, coinbaseAt, out, headerAt + 36);
    writeUint32LittleEndian(out, headerAt + 68, this.time);
    writeUint32LittleEndian(out, headerAt + 72, regtestBits);
    const hasher = inPlaceHasher;
    const target = this.target;
    hasher.load(out, headerAt);
    for (let nonce = 0; nonce < nonceCount; nonce++) {
      hasher.hashWithNonce(nonce, inPlaceHash);
      if (isHashWithinTargetBytes(inPlaceHash, target)) {
        writeUint32LittleEndian(out, headerAt + 76, nonce);
        return true;
      }
    }
    return false;
  }
}

class Solution implements ParentBlockSolution {
  private fullCoinbase: Uint8Array | undefined;

  constructor(
    readonly fields: MergedMiningFields,
    readonly parentHeaderHash: Uint8Array,
    readonly attempts: number,
    private readonly prefix: Uint8Array,
    private readonly hashForMergedMining: Uint8Array,
  ) {}

  get coinbase(): Uint8Array {
    this.fullCoinbase ??= createParentCoinbase(this.prefix, this.hashForMergedMining);
    return this.fullCoinbase;
  }
}
