// The next block's template, and the refusals of a time a block cannot take.
import type { Block } from "../chain/block.js";
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

/**
 * The next block on `parent`: `now` (at most the largest block timestamp), the parent's limits, our
 * miner fields. The time is at least the parent's where the network's rules let a block share its
 * parent's timestamp (regtest: a burst of blocks then stays on the clock instead of running ahead
 * of it one second a block), else at least parent + 1. After a parent at the largest timestamp
 * the template's time is past it: the miner refuses to build such a block (a simulation of the
 * pending state may run it).
 */
export function nextBlockTemplate(parent: Block, fields: BlockFields, now: bigint, sameTimestampAllowed = false): BlockTemplate {
  const parentFields = parent.header.fields;
  const clockTime = now < maxBlockTimestamp ? now : maxBlockTimestamp;
  const earliest = sameTimestampAllowed && parentFields.timestamp < maxBlockTimestamp ? parentFields.timestamp : parentFields.timestamp + 1n;
  return {
    parent,
    coinbase: fields.coinbase,
    timestamp: clockTime > earliest ? clockTime : earliest,
    gasLimit: parentFields.gasLimit,
    minimumGasPrice: parentFields.minimumGasPrice,
    difficulty: parentFields.difficulty,
    extraData: fields.extraData,
  };
}
