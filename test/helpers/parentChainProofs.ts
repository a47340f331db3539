// Parent-chain blocks for the merged-mining tests, built with bitcoinjs-lib (an implementation
// independent of the node's) wherever a Bitcoin structure is made, and solved at a given difficulty.
import { Transaction } from "bitcoinjs-lib";
import { mergedMiningTag } from "../../src/consensus/compressedCoinbase.js";
import { difficultyToParentTarget, encodeParentHeader, isHashWithinTarget, sha256d } from "../../src/consensus/parentChain.js";

export const zeroHash = new Uint8Array(32);

/** `RSKBLOCK: ‖ hash`. */
export function commitmentTo(hashForMergedMining: Uint8Array): Uint8Array {
  return Uint8Array.from([...mergedMiningTag, ...hashForMergedMining]);
}

export interface CoinbaseShape {
  /** The input's script (a pool's height, extranonces...). */
  scriptSig?: Uint8Array;
  /** Scripts of the outputs, in order; a pool puts the commitment in the last one. */
  outputScripts: Uint8Array[];
  /** A segwit coinbase: the 32-byte witness reserved value on its input. */
  witness?: boolean;
}

export function createCoinbaseTransaction(shape: CoinbaseShape): Transaction {
  const transaction = new Transaction();
  transaction.version = 1;
  transaction.addInput(zeroHash, 0xffffffff, 0xffffffff, shape.scriptSig ?? new Uint8Array(0));
  shape.outputScripts.forEach((script, index) => transaction.addOutput(script, index === 0 ? 625_000_000n : 0n));
  if (shape.witness === true) transaction.setWitness(0, [new Uint8Array(32)]);
  return transaction;
}

/** The serialization a txid hashes: without witness. */
export function serializeWithoutWitness(transaction: Transaction): Uint8Array {
  const stripped = transaction.clone();
  stripped.stripWitnesses();
  return stripped.toBuffer();
}

/** An OP_RETURN output carrying `data` in one push (a pool's usual commitment output). */
export function opReturnScript(data: Uint8Array): Uint8Array {
  if (data.length > 75) throw new RangeError("one direct push holds at most 75 bytes");
  return Uint8Array.from([0x6a, data.length, ...data]);
}

/** An 80-byte header over `merkleRoot` whose hash meets the difficulty: nonces counted from 0. */
export function solveParentHeader(merkleRoot: Uint8Array, difficulty: bigint, time = 1_700_000_000): Uint8Array {
  const target = difficultyToParentTarget(difficulty);
  for (let nonce = 0; ; nonce++) {
    const header = encodeParentHeader({ version: 0x20000000, prevHash: zeroHash, merkleRoot, time, bits: 0x207fffff, nonce });
    if (isHashWithinTarget(sha256d(header), target)) return header;
  }
}

/** An 80-byte header over `merkleRoot` whose hash does NOT meet the difficulty. */
export function unsolvedParentHeader(merkleRoot: Uint8Array, difficulty: bigint): Uint8Array {
  const target = difficultyToParentTarget(difficulty);
  for (let nonce = 0; ; nonce++) {
    const header = encodeParentHeader({ version: 0x20000000, prevHash: zeroHash, merkleRoot, time: 1_700_000_000, bits: 0x207fffff, nonce });
    if (!isHashWithinTarget(sha256d(header), target)) return header;
  }
}

/** Bytes from hex written in display order (as explorers and bitcoind print hashes). */
export function displayHexToHash(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex, "hex").reverse());
}
