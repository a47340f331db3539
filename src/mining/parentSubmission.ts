// The three forms a pool submits a parent-chain proof in (the mnr_submitParentBlock* methods), made
// into one ParentChainProof for the merged-mining server: a whole block; header, coinbase and every
// txid; header, coinbase and the coinbase's merkle branch. Parsing is consensus/parentBlock.ts's;
// what does not parse is a refusal naming the part, for the caller to name its parameter.
import { parseParentBlock, parseParentTransaction } from "../consensus/parentBlock.js";
import { merkleBranchOfCoinbase } from "../consensus/parentMerkleBranch.js";
import type { ParentChainProof } from "./mergedMiningServer.js";

export type SubmissionPart = "block" | "coinbase" | "transactionCount";

export type ProofAssembly = { ok: true; proof: ParentChainProof } | { ok: false; part: SubmissionPart; reason: string };

const hashSize = 32;

export function proofFromParentBlock(bytes: Uint8Array): ProofAssembly {
  const parsed = parseParentBlock(bytes);
  if (!parsed.ok) return { ok: false, part: "block", reason: `not a parent-chain block: ${parsed.reason}` };
  return { ok: true, proof: { parentHeader: parsed.header, coinbase: parsed.coinbase, merkleBranch: merkleBranchOfCoinbase(parsed.txids) } };
}

/** `txids`: every transaction's, coinbase first, in internal byte order (at least one). */
export function proofFromTransactionIds(parentHeader: Uint8Array, coinbaseBytes: Uint8Array, txids: readonly Uint8Array[]): ProofAssembly {
  const coinbase = coinbaseWithoutWitness(coinbaseBytes);
  if (!coinbase.ok) return coinbase;
  return { ok: true, proof: { parentHeader, coinbase: coinbase.bytes, merkleBranch: merkleBranchOfCoinbase(txids) } };
}

/**
 * `siblings`: the coinbase's branch bottom-up, internal byte order. The reference ignores the
 * transaction count; here it must fit the branch (as many hashes as a tree of that many
 * transactions has levels), so an inconsistent submission is named rather than taken.
 */
export function proofFromMerkleBranch(parentHeader: Uint8Array, coinbaseBytes: Uint8Array, siblings: readonly Uint8Array[], transactionCount: bigint): ProofAssembly {
  if (transactionCount === 0n) return { ok: false, part: "transactionCount", reason: "0; a parent block holds at least its coinbase" };
  const levels = merkleTreeLevels(transactionCount);
  if (levels !== siblings.length) {
    return { ok: false, part: "transactionCount", reason: `a parent block of ${transactionCount} transactions has a coinbase merkle branch of ${levels} hashes, but the branch holds ${siblings.length}` };
  }
  const coinbase = coinbaseWithoutWitness(coinbaseBytes);
  if (!coinbase.ok) return coinbase;
  const merkleBranch = new Uint8Array(siblings.length * hashSize);
  siblings.forEach((sibling, index) => merkleBranch.set(sibling, index * hashSize));
  return { ok: true, proof: { parentHeader, coinbase: coinbase.bytes, merkleBranch } };
}

/** One parent-chain transaction, taken without its witness (the form its txid hashes); nothing after it. */
function coinbaseWithoutWitness(bytes: Uint8Array): { ok: true; bytes: Uint8Array } | { ok: false; part: SubmissionPart; reason: string } {
  const parsed = parseParentTransaction(bytes);
  if (!parsed.ok) return { ok: false, part: "coinbase", reason: `not a parent-chain transaction: ${parsed.reason}` };
  if (parsed.end !== bytes.length) return { ok: false, part: "coinbase", reason: `${bytes.length - parsed.end} bytes after its transaction` };
  return { ok: true, bytes: parsed.withoutWitness };
}

/** Levels of a merkle tree over `count` leaves: the length of any leaf's branch. */
function merkleTreeLevels(count: bigint): number {
  let levels = 0;
  for (let width = count; width > 1n; width = (width + 1n) / 2n) levels++;
  return levels;
}
