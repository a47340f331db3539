// Which of two blocks heads the chain (rskj: co/rsk/core/bc/SelectionRule.java shouldWeAddThisBlock).
// The heavier chain wins: total difficulty counts each block's difficulty plus its uncles' (uncles
// are work the network did, and counting them makes a chain that merges its forks the heavier).
// At equal weight the reference breaks the tie so that a miner cannot displace the head cheaply:
// a block paying more than twice the head's fees wins outright; otherwise a block whose fees are
// more than half the head's wins only with the smaller hash; anything else leaves the head alone.
import type { Block } from "../chain/block.js";

/** A chain's weight up to `block`: its parent's total difficulty plus the block's and its uncles' difficulty. */
export function totalDifficultyOf(parentTotalDifficulty: bigint, block: Pick<Block, "cumulativeDifficulty">): bigint {
  return parentTotalDifficulty + block.cumulativeDifficulty;
}

/** A block competing for the head: its chain's total difficulty, its fees and its hash. */
export interface HeadCandidate {
  readonly totalDifficulty: bigint;
  readonly paidFees: bigint;
  readonly hash: Uint8Array;
}

/** Why the selection rule decided as it did (for logs and tests). */
export type HeadSelection =
  | { readonly becomesHead: true; readonly because: "heavier" | "moreThanTwiceTheFees" | "smallerHashWithOverHalfTheFees" }
  | { readonly becomesHead: false; readonly because: "lighter" | "tieKeepsHead" };

/** The multiple of the other block's fees the tie-breaks compare against. */
const paidFeesMultiplier = 2n;

export function selectHead(candidate: HeadCandidate, head: HeadCandidate): HeadSelection {
  if (candidate.totalDifficulty > head.totalDifficulty) return { becomesHead: true, because: "heavier" };
  if (candidate.totalDifficulty < head.totalDifficulty) return { becomesHead: false, because: "lighter" };
  if (candidate.paidFees > head.paidFees * paidFeesMultiplier) return { becomesHead: true, because: "moreThanTwiceTheFees" };
  if (head.paidFees < candidate.paidFees * paidFeesMultiplier && isHashSmaller(candidate.hash, head.hash)) {
    return { becomesHead: true, because: "smallerHashWithOverHalfTheFees" };
  }
  return { becomesHead: false, because: "tieKeepsHead" };
}

/** Whether `hash` comes before `other` as unsigned bytes (the reference's FastByteComparisons). */
export function isHashSmaller(hash: Uint8Array, other: Uint8Array): boolean {
  return Buffer.compare(hash, other) < 0;
}
