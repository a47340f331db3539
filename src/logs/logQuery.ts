// Logs of blocks that match criteria: the header bloom first, then each receipt's bloom, then the
// logs themselves, from the recent-block index (or the chain's decoded receipts below it). Used by
// eth_getLogs, eth_getFilterLogs and the delivery of new blocks to log filters.
import type { ChainLog } from "../chain/receipts.js";
import { heldWithoutLogs, type BlockLogIndex } from "./blockLogIndex.js";
import type { BlockLogs, TransactionLogs } from "./blockLogs.js";
import type { LogMatcher } from "./logCriteria.js";

/** A log with its place in the chain (shared block and transaction records, nothing copied). */
export interface LocatedLog {
  readonly log: ChainLog;
  readonly block: BlockLogs;
  readonly transaction: TransactionLogs;
  /** Position among all logs of the block. */
  readonly logIndex: number;
  /** true when the block left the canonical chain after the log was delivered. */
  readonly removed: boolean;
}

export interface LogQueryLimits {
  /** Most blocks one query may cover. */
  readonly blockRangeLimit: number;
  /** Most logs one query may answer. */
  readonly resultLimit: number;
}

/** A query over more blocks than the limit allows; nothing was read. */
export class LogBlockRangeExceededError extends Error {
  constructor(readonly limit: number) {
    super(`Cannot query more than ${limit} blocks at once`);
  }
}

/** A query matching more logs than the limit allows. */
export class LogResultLimitExceededError extends Error {
  constructor(readonly limit: number) {
    super(`Filter returned more than ${limit} logs.`);
  }
}

/** One end of a block range: the head when the query runs, or a fixed number. */
export type BlockBound = { readonly kind: "head" } | { readonly kind: "number"; readonly number: bigint };

/** fromBlock after toBlock. */
export class InvalidBlockRangeError extends Error {
  constructor(
    readonly from: bigint,
    readonly to: bigint,
  ) {
    super(`fromBlock ${from} is after toBlock ${to}`);
  }
}

/**
 * The blocks a range covers at a head: `to` past the head is cut to the head, and a range that
 * starts after the head covers nothing (undefined), as geth answers. Two numbers in the wrong order
 * are an error; a number against the head bound is judged at the head (a filter from block 100
 * installed at block 10 waits for block 100).
 */
export function resolveBlockRange(from: BlockBound, to: BlockBound, head: bigint): { from: bigint; to: bigint } | undefined {
  if (from.kind === "number" && to.kind === "number" && from.number > to.number) throw new InvalidBlockRangeError(from.number, to.number);
  const first = from.kind === "head" ? head : from.number;
  const last = to.kind === "head" || to.number > head ? head : to.number;
  return first > last ? undefined : { from: first, to: last };
}

/** Whether a block number lies within the bounds, the head bound being open (any new block). */
export function isWithinBounds(blockNumber: bigint, from: BlockBound, to: BlockBound): boolean {
  return (from.kind === "head" || blockNumber >= from.number) && (to.kind === "head" || blockNumber <= to.number);
}

/**
 * Appends the block's logs that match to `found`, in block order. With `shared`, a log already
 * located for another filter of the same delivery is the same object.
 */
export function collectBlockLogs(matcher: LogMatcher, block: BlockLogs, removed: boolean, found: LocatedLog[], shared?: Map<ChainLog, LocatedLog>): void {
  if (block.transactions.length === 0 || !matcher.bloomMayMatch(block.bloom)) return;
  for (const transaction of block.transactions) {
    // A block's only transaction with logs shares the block's bloom (compactBlockLogs): tested already.
    if (transaction.bloom !== block.bloom && !matcher.bloomMayMatch(transaction.bloom)) continue;
    const logs = transaction.logs;
    for (let offset = 0; offset < logs.length; offset++) {
      const log = logs[offset]!;
      if (!matcher.matches(log)) continue;
      let located = shared?.get(log);
      if (located === undefined) {
        located = { log, block, transaction, logIndex: transaction.firstLogIndex + offset, removed };
        shared?.set(log, located);
      }
      found.push(located);
    }
  }
}

/**
 * The matching logs of canonical blocks `from`..`to` (inclusive, within the head), in chain order.
 * Refuses a range longer than the limit before reading, and stops as soon as the result is over it.
 */
export async function queryLogRange(index: BlockLogIndex, matcher: LogMatcher, from: bigint, to: bigint, limits: LogQueryLimits): Promise<LocatedLog[]> {
  if (to - from + 1n > BigInt(limits.blockRangeLimit)) throw new LogBlockRangeExceededError(limits.blockRangeLimit);
  const found: LocatedLog[] = [];
  for (let number = from; number <= to; number++) {
    const held = index.held(number);
    if (held === heldWithoutLogs) continue;
    const block = held ?? (await index.canonical(number));
    // The head moved back under the query (a revert): the rest of the range is gone.
    if (block === undefined) break;
    collectBlockLogs(matcher, block, false, found);
    if (found.length > limits.resultLimit) throw new LogResultLimitExceededError(limits.resultLimit);
  }
  return found;
}

/** The matching logs of one block (any block, canonical or not). */
export function queryBlockLogs(block: BlockLogs, matcher: LogMatcher, limits: LogQueryLimits): LocatedLog[] {
  const found: LocatedLog[] = [];
  collectBlockLogs(matcher, block, false, found);
  if (found.length > limits.resultLimit) throw new LogResultLimitExceededError(limits.resultLimit);
  return found;
}
