// What the reference's regtest miner does for each block (co/rsk/mine/MinerClientImpl.mineBlock,
// MinerUtils): make up a parent-chain block whose only transaction is a coinbase committing to the
// block's hashForMergedMining, and count the header's nonce up until its hash meets the block's
// target. The answer is the three merged-mining fields the block header carries.
import { randomBytes, randomInt } from "node:crypto";
import { sha256 } from "@noble/hashes/sha2.js";
import type { HeaderFields } from "../chain/header.js";
import { compressCoinbaseWithTxid } from "../consensus/compressedCoinbase.js";
import { difficultyToParentTarget, encodeParentHeader, isHashWithinTargetBytes, ParentHeaderHasher, parentRegtestMaxTarget, targetToCompact, targetToLittleEndian } from "../consensus/parentChain.js";
import { createParentCoinbase } from "./parentCoinbase.js";

export type MergedMiningFields = Pick<HeaderFields, "mergedMiningHeader" | "mergedMiningMerkleProof" | "mergedMiningCoinbaseTransaction">;

export interface ParentBlockSolution {
  fields: MergedMiningFields;
  /** The full coinbase (the fields carry it compressed). */
  coinbase: Uint8Array;
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

export function createBuiltinParentMiner(options: BuiltinParentMinerOptions = defaultBuiltinParentMinerOptions): BuiltinParentMiner {
  // One counter for all blocks, as the reference's nextNonceToUse: a new search goes on from it.
  let nextNonce = 0;

  function startSearch(hashForMergedMining: Uint8Array, difficulty: bigint): ParentBlockSearch {
    const target = targetFor(difficulty);
    let attempts = 0;
    let coinbase: Uint8Array = new Uint8Array(0);
    let compressedCoinbase: Uint8Array = new Uint8Array(0);
    let header: Uint8Array = new Uint8Array(0);
    let hasher: ParentHeaderHasher | undefined;
    let noncesLeftForCoinbase = 0;
    const hash = new Uint8Array(32);
    let solution: ParentBlockSolution | undefined;

    // A new coinbase (new prefix, so a new merkle root) once all 2^32 nonces of one have failed.
    function takeNewCoinbase(): void {
      const prefix = options.random.bytes(options.random.integerBelow(options.prefixLengthBound ?? referencePrefixLengthBound));
      coinbase = createParentCoinbase(prefix, hashForMergedMining);
      // The compressed form the header will carry, and the txid the rule computes from it.
      const { compressed, txid } = compressCoinbaseWithTxid(coinbase);
      compressedCoinbase = compressed;
      header = encodeParentHeader({ version: parentBlockVersion, prevHash: new Uint8Array(32), merkleRoot: txid, time: options.nowSeconds(), bits: regtestBits, nonce: 0 });
      hasher = new ParentHeaderHasher(header);
      noncesLeftForCoinbase = nonceCount;
    }

    takeNewCoinbase();
    return {
      get attempts() {
        return attempts;
      },
      tryNonces(maxAttempts) {
        for (let tried = 0; solution === undefined && tried < maxAttempts; tried++) {
          if (noncesLeftForCoinbase === 0) takeNewCoinbase();
          const nonce = nextNonce;
          nextNonce = (nextNonce + 1) % nonceCount;
          noncesLeftForCoinbase--;
          attempts++;
          hasher!.hashWithNonce(nonce, hash);
          if (isHashWithinTargetBytes(hash, target)) {
            new DataView(header.buffer, header.byteOffset, header.byteLength).setUint32(76, nonce, true);
            const fields = { mergedMiningHeader: header, mergedMiningMerkleProof: new Uint8Array(0), mergedMiningCoinbaseTransaction: compressedCoinbase };
            solution = { fields, coinbase, parentHeaderHash: hash.slice(), attempts };
          }
        }
        return solution;
      },
    };
  }

  return {
    startSearch,
    mine(hashForMergedMining, difficulty) {
      const search = startSearch(hashForMergedMining, difficulty);
      for (;;) {
        const solution = search.tryNonces(nonceCount);
        if (solution !== undefined) return solution;
      }
    },
  };
}
