// Replays a stored block's transactions on the state its parent committed, so that any of them can
// be traced as it ran: same block context, same order, same block gas, same miner credit.
import type { Common } from "@ethereumjs/common";
import { Address } from "@ethereumjs/util";
import type { RunTxResult } from "@ethereumjs/vm";
import { enginePackages, loadEnginePackages } from "../execution/enginePackages.js";
import type { Block } from "../chain/block.js";
import type { ChainTransaction } from "../chain/transactions.js";
import {
  createExecutionBlock,
  createExecutionEngine,
  creditMinimumGasPriceShare,
  ExecutionClock,
  ExecutionTimeoutError,
  type CanonicalHashLookup,
  type ExecutionEngine,
} from "../execution/engine.js";
import type { StateDatabase } from "../state/stateDatabase.js";

/** What running one transaction again produced. */
export interface ReplayedTransaction {
  readonly transaction: ChainTransaction;
  /** Position in its block. */
  readonly index: number;
  readonly result: RunTxResult;
}

/** Where a replay runs. */
export interface ReplayContext {
  /**
   * The number of storage slots of an account in the parent block's state (read from the stored
   * tries, not through the engine, whose uncommitted changes a count would flush). It counts
   * within the replay's time limit and lets the event loop turn while it walks.
   */
  countStorageSlots(address: Uint8Array): Promise<number>;
}

/** Watches one transaction while it runs again, then makes its trace. */
export interface TransactionTracer<T> {
  /** Before the transaction runs: subscribe to the engine. */
  start(engine: ExecutionEngine, transaction: ChainTransaction, context: ReplayContext): void | Promise<void>;
  /** After it ran: unsubscribe (also called when the run failed) and make the trace. */
  finish(replayed: ReplayedTransaction | undefined): T | Promise<T>;
}

/** The state a block was built on is not stored any more (or never was). */
export class ReplayStateMissingError extends Error {
  constructor(
    /** The block that cannot be replayed. */
    readonly blockHash: Uint8Array,
  ) {
    super("the state of the block's parent is not stored");
  }
}

/** A stored transaction that the engine now refuses: the chain and its state disagree. */
export class ReplayFailedError extends Error {}

export interface ReplayDependencies {
  common: Common;
  state: StateDatabase;
  /** Parent block by hash. */
  getBlockByHash(hash: Uint8Array): Promise<Block | undefined>;
  canonicalHash: CanonicalHashLookup;
}

/**
 * Runs `block`'s transactions up to `lastIndex` on its parent's state and asks `tracerFor` for a
 * tracer for each: the traces come back in transaction order. Engine events are only subscribed
 * around traced transactions, so the ones before run at full speed.
 */
/** The engine's view of a stored block (its number, coinbase, time, gas limit and difficulty), with the base fee given. */
export function executionBlockOf(common: Common, block: Block, baseFee: bigint) {
  const { number, coinbase, timestamp, gasLimit, difficulty } = block.header.fields;
  return createExecutionBlock(common, { number, coinbase, timestamp, gasLimit, baseFee, difficulty });
}

export async function replayBlock<T>(
  deps: ReplayDependencies,
  block: Block,
  lastIndex: number,
  tracerFor: (transaction: ChainTransaction, index: number) => TransactionTracer<T> | undefined,
  /** performance.now() past which the replay stops with ExecutionTimeoutError. */
  deadline: number,
): Promise<T[]> {
  const traces: T[] = [];
  if (block.transactions.length === 0 || lastIndex < 0) return traces;
  const parent = await deps.getBlockByHash(block.header.fields.parentHash);
  const parentRoot = parent?.header.fields.stateRoot;
  if (parentRoot === undefined || !deps.state.hasRoot(parentRoot)) throw new ReplayStateMissingError(block.hash);
  const clock = new ExecutionClock("tracing time limit reached");
  clock.startUntil(deadline);
  const context: ReplayContext = {
    countStorageSlots: (address) => deps.state.countStorageSlots(parentRoot, address, () => clock.check()),
  };
  // The overlay state: a replay's changes are thrown away, so none is encoded or hashed.
  const engine = await createExecutionEngine(deps.common, deps.state.overlayAt(parentRoot), deps.canonicalHash);
  const fields = block.header.fields;
  const executionBlock = executionBlockOf(deps.common, block, fields.minimumGasPrice);
  const coinbase = new Address(fields.coinbase);
  let blockGasUsed = 0n;
  const last = Math.min(lastIndex, block.transactions.length - 1);
  // One checkpoint around the whole replay, never committed: each transaction still sees the ones
  // before it, and the engine is dropped afterwards.
  await engine.state.checkpoint();
  try {
    for (let index = 0; index <= last; index++) {
      const transaction = block.transactions[index]!;
      const tracer = tracerFor(transaction, index);
      if (tracer !== undefined) await tracer.start(engine, transaction, context);
      let result: RunTxResult;
      try {
        const timeLeft = deadline - performance.now();
        if (timeLeft <= 0) throw new ExecutionTimeoutError("tracing time limit reached");
        const { runTx } = (enginePackages ?? (await loadEnginePackages())).vm;
        result = await engine.withTimeLimit(timeLeft, () => runTx(engine.vm, { tx: transaction.tx, block: executionBlock, blockGasUsed, skipHardForkValidation: true }));
      } catch (error) {
        if (tracer !== undefined) await tracer.finish(undefined);
        if (error instanceof ExecutionTimeoutError) throw error;
        throw new ReplayFailedError(`transaction ${index} of block ${block.number} cannot run again: ${(error as Error).message}`);
      }
      if (tracer !== undefined) traces.push(await tracer.finish({ transaction, index, result }));
      blockGasUsed += result.totalGasSpent;
      await creditMinimumGasPriceShare(engine.state, coinbase, result.totalGasSpent, fields.minimumGasPrice);
    }
  } finally {
    await engine.state.revert();
  }
  return traces;
}
