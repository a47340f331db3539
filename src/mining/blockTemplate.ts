// The next block's template, and the refusals of a time a block cannot take.
import type { Block } from "../chain/block.js";
import type { BlockHeader } from "../chain/header.js";
import { calculateDifficulty, type DifficultyConstants } from "../consensus/difficulty.js";
import type { UncleLimits } from "../consensus/uncles.js";
import type { BlockTemplate } from "../execution/blockBuilder.js";
import { maxBlockTimestamp } from "./clock.js";

/** The miner's own fields of a block. */
export interface BlockFields {
  coinbase: Uint8Array;
  extraData: Uint8Array;
}

/** An exact timestamp (evm_mine, evm_setNextBlockTimestamp) not after the parent's: those always increase. */
export class TimestampNotAfterParentError extends Error {
  constructor(
    readonly timestamp: bigint,
    readonly parentTimestamp: bigint,
  ) {
    super(`timestamp ${timestamp} is not greater than the parent block's timestamp ${parentTimestamp}`);
  }
}

/** No block can follow the parent: its timestamp is the largest a block may carry (clock.ts). */
export class BlockTimeExhaustedError extends Error {
  constructor(readonly parentTimestamp: bigint) {
    super(`no block can follow the head: its timestamp ${parentTimestamp} is the largest a block can carry; go back with evm_revert or evm_reset`);
  }
}

/** The network's rules a template follows (consensus/constants.ts). */
export interface TemplateRules {
  /** Whether a block may share its parent's timestamp (regtest). */
  sameTimestampAllowed?: boolean;
  /** The difficulty rule's constants; without them the block copies its parent's difficulty. */
  difficulty?: DifficultyConstants;
  /** How many uncles a block may include and from how far back; without them blocks include none. */
  uncles?: UncleLimits;
}

/**
 * The next block on `parent`: `now` (at most the largest block timestamp), the parent's limits, our
 * miner fields, the uncles it includes, the difficulty the rule gives for that time and uncle count. The time is at least the parent's where the network's rules let a block share its
 * parent's timestamp (regtest: a burst of blocks then stays on the clock instead of running ahead
 * of it one second a block), else at least parent + 1. After a parent at the largest timestamp
 * the template's time is past it: the miner refuses to build such a block (a simulation of the
 * pending state may run it).
 */
export function nextBlockTemplate(parent: Block, fields: BlockFields, now: bigint, rules: TemplateRules = {}, uncles: readonly BlockHeader[] = []): BlockTemplate {
  const parentFields = parent.header.fields;
  const clockTime = now < maxBlockTimestamp ? now : maxBlockTimestamp;
  const earliest = rules.sameTimestampAllowed === true && parentFields.timestamp < maxBlockTimestamp ? parentFields.timestamp : parentFields.timestamp + 1n;
  const timestamp = clockTime > earliest ? clockTime : earliest;
  return {
    parent,
    coinbase: fields.coinbase,
    timestamp,
    gasLimit: parentFields.gasLimit,
    minimumGasPrice: parentFields.minimumGasPrice,
    difficulty: rules.difficulty === undefined ? parentFields.difficulty : calculateDifficulty({ timestamp, uncleCount: uncles.length }, parentFields, rules.difficulty),
    extraData: fields.extraData,
    uncles,
  };
}
