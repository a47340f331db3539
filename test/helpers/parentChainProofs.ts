// Parent-chain blocks for the merged-mining tests, built with bitcoinjs-lib (an implementation
// independent of the node's) wherever a Bitcoin structure is made, and solved at a given difficulty.
import { Block, Transaction } from "bitcoinjs-lib";
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

/** A parent-chain block a pool found for a template, in every form the mnr_ submissions take. */
export interface PoolBlock {
  /** The whole block, with witness data (hex, no 0x). */
  blockHex: string;
  headerHex: string;
  /** The coinbase with its witness, as a pool holds it. */
  coinbaseHex: string;
  /** Every txid, coinbase first, display order: mnr_submitParentBlockTransactions' list. */
  txidsDisplayHex: string[];
  /** The coinbase's id, then its branch's siblings bottom-up, internal order: mnr_submitParentBlockPartialMerkle's list. */
  merkleHashesHex: string[];
  transactionCount: number;
  /** Header hashes tried until one met the target. */
  attempts: number;
}

export interface PoolBlockShape {
  hashForMergedMining: Uint8Array;
  /** 2^256 / difficulty, as mnr_getWork gives it. */
  target: bigint;
  /** Other transactions after the coinbase (legacy and segwit mixed). */
  otherTransactions: number;
  /** Prefer a header that does NOT meet the target (a refusal test). */
  missTarget?: boolean;
  /** Coinbase output scripts after the payout: default an OP_RETURN with the commitment. */
  commitmentScripts?: Uint8Array[];
  seed?: number;
}

/**
 * What a pool does with mnr_getWork's work: a segwit coinbase paying several outputs with the
 * commitment in an OP_RETURN output last, some other transactions, and the header's nonce searched
 * until its hash meets the target. Built with bitcoinjs-lib only.
 */
export function minePoolBlock(shape: PoolBlockShape): PoolBlock {
  let seed = shape.seed ?? 1;
  const nextBytes = (length: number) => Uint8Array.from({ length }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24);
  const coinbase = createCoinbaseTransaction({
    scriptSig: Uint8Array.from([0x03, 0x12, 0x34, 0x56, ...nextBytes(8)]),
    outputScripts: [Uint8Array.from([0x00, 0x14, ...nextBytes(20)]), Uint8Array.from([0x76, 0xa9, 0x14, ...nextBytes(20), 0x88, 0xac]), ...(shape.commitmentScripts ?? [opReturnScript(commitmentTo(shape.hashForMergedMining))])],
    witness: true,
  });
  const transactions = [coinbase];
  for (let index = 0; index < shape.otherTransactions; index++) {
    const transaction = new Transaction();
    transaction.version = 2;
    transaction.addInput(nextBytes(32), index, 0xfffffffe, index % 2 === 0 ? Uint8Array.from([0x47, ...nextBytes(0x47)]) : new Uint8Array(0));
    transaction.addOutput(Uint8Array.from([0x00, 0x14, ...nextBytes(20)]), BigInt(1000 + index));
    if (index % 2 === 1) transaction.setWitness(0, [nextBytes(71), nextBytes(33)]);
    transactions.push(transaction);
  }
  const block = new Block();
  block.version = 0x20000000;
  block.prevHash = nextBytes(32);
  block.merkleRoot = Block.calculateMerkleRoot(transactions);
  block.timestamp = 1_700_000_000;
  block.bits = 0x207fffff;
  block.transactions = transactions;
  let attempts = 0;
  for (block.nonce = 0; ; block.nonce++) {
    attempts++;
    if (isHashWithinTarget(block.getHash(), shape.target) !== (shape.missTarget === true)) break;
  }
  const txids = transactions.map((transaction) => transaction.getHash());
  return {
    blockHex: Buffer.from(block.toBuffer()).toString("hex"),
    headerHex: Buffer.from(block.toBuffer(true)).toString("hex"),
    coinbaseHex: Buffer.from(coinbase.toBuffer()).toString("hex"),
    txidsDisplayHex: txids.map((txid) => Buffer.from(txid).reverse().toString("hex")),
    merkleHashesHex: [txids[0]!, ...coinbaseBranch(txids)].map((hash) => Buffer.from(hash).toString("hex")),
    transactionCount: transactions.length,
    attempts,
  };
}

/** The coinbase's merkle siblings, bottom-up (internal order), by the textbook construction. */
function coinbaseBranch(txids: Uint8Array[]): Uint8Array[] {
  const siblings: Uint8Array[] = [];
  let level = txids;
  while (level.length > 1) {
    if (level.length % 2 === 1) level = [...level, level[level.length - 1]!];
    siblings.push(level[1]!);
    const next: Uint8Array[] = [];
    for (let index = 0; index < level.length; index += 2) next.push(sha256d(Uint8Array.from([...level[index]!, ...level[index + 1]!])));
    level = next;
  }
  return siblings;
}
