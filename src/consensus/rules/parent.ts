// The rules a header must pass against its parent's header, needing neither execution nor the
// proof of work (rskj: co/rsk/validators/PrevMinGasPriceRule.java, BlockParentNumberRule.java,
// BlockTimeStampValidationRule.java, BlockDifficultyRule.java, BlockParentGasLimitRule.java), in
// the order of the reference's BlockHeaderParentCompositeRule. The same set checks a block and
// each of its uncles against their own parents.
import type { HeaderFields } from "../../chain/header.js";
import type { ConsensusConstants } from "../constants.js";
import { calculateDifficulty } from "../difficulty.js";
import { firstRefusal, passed, refused, type RuleVerdict } from "../verdict.js";

export type ParentRule = "minimumGasPrice" | "parentNumber" | "timestampAfterParent" | "difficulty" | "parentGasLimit";

/** What the rules read of a header. */
export type RuleHeader = Pick<HeaderFields, "number" | "difficulty" | "gasLimit" | "gasUsed" | "timestamp" | "extraData" | "minimumGasPrice" | "uncleCount">;

export interface RuleContext {
  readonly constants: ConsensusConstants;
  /** The local clock, in seconds (injected: the dev clock, or a fixed time in tests). */
  readonly now: bigint;
}

/** A closed range of values, both ends allowed. */
export interface InclusiveRange {
  readonly lowest: bigint;
  readonly highest: bigint;
}

/**
 * The minimum gas prices a block may carry after `parentMinimumGasPrice` (rskj:
 * co/rsk/mine/BlockGasPriceRange.java): ±1 %, at least 1 wei either way so that a price of 0 (or
 * below 100 wei) can still move, never below 0.
 */
export function minimumGasPriceRange(parentMinimumGasPrice: bigint): InclusiveRange {
  const percentOfParent = parentMinimumGasPrice / 100n;
  const step = percentOfParent === 0n ? 1n : percentOfParent;
  const lowest = parentMinimumGasPrice - step;
  return { lowest: lowest < 0n ? 0n : lowest, highest: parentMinimumGasPrice + step };
}

/** The gas limits a block may carry after `parentGasLimit`: parent·(d−1)/d to parent·(d+1)/d, rounded down. */
export function gasLimitRange(parentGasLimit: bigint, boundDivisor: bigint): InclusiveRange {
  return { lowest: (parentGasLimit * (boundDivisor - 1n)) / boundDivisor, highest: (parentGasLimit * (boundDivisor + 1n)) / boundDivisor };
}

const outside = (value: bigint, range: InclusiveRange) => value < range.lowest || value > range.highest;

export function checkHeaderAgainstParent(header: RuleHeader, parent: RuleHeader, context: RuleContext): RuleVerdict<ParentRule> {
  const { constants } = context;
  return firstRefusal<ParentRule>([
    () => {
      const range = minimumGasPriceRange(parent.minimumGasPrice);
      return outside(header.minimumGasPrice, range)
        ? refused("minimumGasPrice", `minimum gas price ${header.minimumGasPrice} is outside ${range.lowest}..${range.highest} (the parent's ${parent.minimumGasPrice} ±1 %)`)
        : passed;
    },
    () => (header.number !== parent.number + 1n ? refused("parentNumber", `number ${header.number} does not follow the parent's ${parent.number}`) : passed),
    // Off with the future limit (regtest): the reference switches both with the one constant.
    () =>
      constants.newBlockMaxSecondsInTheFuture !== 0n && header.timestamp <= parent.timestamp
        ? refused("timestampAfterParent", `timestamp ${header.timestamp} is not after the parent's ${parent.timestamp}`)
        : passed,
    () => {
      const expected = calculateDifficulty(header, parent, constants);
      return header.difficulty !== expected ? refused("difficulty", `difficulty ${header.difficulty} is not the computed ${expected}`) : passed;
    },
    () => {
      const range = gasLimitRange(parent.gasLimit, constants.gasLimitBoundDivisor);
      return outside(header.gasLimit, range)
        ? refused("parentGasLimit", `gas limit ${header.gasLimit} is outside ${range.lowest}..${range.highest} (the parent's ${parent.gasLimit} ±1/${constants.gasLimitBoundDivisor})`)
        : passed;
    },
  ]);
}
