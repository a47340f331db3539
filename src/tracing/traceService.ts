// Tracing as the RPC layer asks for it: a transaction or a block replayed with the struct logger,
// the callTracer or flat traces, and flat traces over a block range with sender/recipient filters.
import type { Common } from "@ethereumjs/common";
import type { Block } from "../chain/block.js";
import type { Chain } from "../chain/chain.js";
import type { ChainTransaction } from "../chain/transactions.js";
import { ConcurrencyGate, GateWaitTimeoutError } from "../common/concurrencyGate.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import { ExecutionTimeoutError } from "../execution/engine.js";
import type { StateDatabase } from "../state/stateDatabase.js";
import { CallTracer, type CallFrame, type CallTracerOptions } from "./callTracer.js";
import { FlatTracer, type FlatTrace } from "./flatTraces.js";
import { replayBlock, type ReplayDependencies, type TransactionTracer } from "./replay.js";
import { createStructLogBudget, maxStructLogBytes, StructLogger, StructLogTraceJson, type StructLogOptions } from "./structLogger.js";

export type DebugTracerOptions = ({ tracer: "structLogTracer" } & StructLogOptions) | ({ tracer: "callTracer" } & CallTracerOptions);

export interface BlockCallTrace {
  txHash: string;
  result: CallFrame;
}

export interface TraceServiceOptions {
  /** Most traces trace_filter returns, and the largest `after` it accepts. */
  maxTracesPerRequest: number;
  /** Longest one request may replay, in milliseconds (past it: ExecutionTimeoutError). */
  timeLimitMs: number;
  /**
   * Most requests replaying at once; the others wait, within their time limit. Replays share the
   * main thread in 5 ms slices, so more at once finish none sooner: each turn of the event loop
   * would run a slice of every one, and other requests wait for all of those slices.
   */
  maxConcurrent: number;
}

/** trace_filter's selection, validated: blocks inclusive, addresses as lower-case hex without 0x. */
export interface FlatTraceFilter {
  fromBlock: bigint;
  toBlock: bigint;
  /** Top-level senders to keep; empty keeps all. */
  fromAddresses: ReadonlySet<string>;
  /** Top-level recipients to keep; empty keeps all. */
  toAddresses: ReadonlySet<string>;
  after: number;
  count: number;
}

export const defaultTraceServiceOptions: TraceServiceOptions = { maxTracesPerRequest: 10_000, timeLimitMs: 5_000, maxConcurrent: 1 };

export class TraceService {
  private readonly replay: ReplayDependencies;
  private readonly gate: ConcurrencyGate;

  constructor(
    common: Common,
    state: StateDatabase,
    private readonly chain: Chain,
    readonly options: TraceServiceOptions = defaultTraceServiceOptions,
  ) {
    this.gate = new ConcurrencyGate(options.maxConcurrent);
    this.replay = {
      common,
      state,
      getBlockByHash: (hash) => chain.getBlockByHash(hash),
      canonicalHash: (blockNumber) => chain.getCanonicalHash(blockNumber),
    };
  }

  /** Runs `work` with the deadline of a request that starts now, once fewer than maxConcurrent others run. */
  private async inTurn<T>(work: (deadline: number) => Promise<T>): Promise<T> {
    const deadline = performance.now() + this.options.timeLimitMs;
    try {
      return await this.gate.run(deadline, () => work(deadline));
    } catch (error) {
      if (error instanceof GateWaitTimeoutError) throw new ExecutionTimeoutError("tracing time limit reached while waiting for other traces");
      throw error;
    }
  }

  /** The block and position of a transaction of the main chain; undefined when it is not there. */
  private async locate(transactionHash: Uint8Array): Promise<{ block: Block; index: number } | undefined> {
    const location = await this.chain.getTransactionLocation(transactionHash);
    if (location === undefined) return undefined;
    const block = await this.chain.getBlockByHash(location.blockHash);
    if (block === undefined || block.transactions[location.index] === undefined) return undefined;
    return { block, index: location.index };
  }

  private traceOne<T>(transactionHash: Uint8Array, makeTracer: () => TransactionTracer<T>): Promise<T | undefined> {
    return this.inTurn(async (deadline) => {
      const located = await this.locate(transactionHash);
      if (located === undefined) return undefined;
      const [trace] = await replayBlock(this.replay, located.block, located.index, (_transaction, index) => (index === located.index ? makeTracer() : undefined), deadline);
      return trace;
    });
  }

  /**
   * debug_traceTransaction: undefined when the transaction is not in the main chain. Struct logs
   * may hold at most `structLogBytes` of text (past it StructLogTooLargeError).
   */
  async debugTraceTransaction(transactionHash: Uint8Array, options: DebugTracerOptions, structLogBytes = maxStructLogBytes): Promise<StructLogTraceJson | CallFrame | undefined> {
    return this.traceOne<StructLogTraceJson | CallFrame>(transactionHash, () =>
      options.tracer === "callTracer" ? new CallTracer(options) : new StructLogger(options, createStructLogBudget(structLogBytes)),
    );
  }

  /** debug_traceBlockByHash: one trace per transaction, in block order; the struct logs of all share `structLogBytes`. */
  debugTraceBlock(block: Block, options: DebugTracerOptions, structLogBytes = maxStructLogBytes): Promise<StructLogTraceJson | BlockCallTrace[]> {
    return this.inTurn((deadline) => this.traceBlockUntil(block, options, structLogBytes, deadline));
  }

  private async traceBlockUntil(block: Block, options: DebugTracerOptions, structLogBytes: number, deadline: number): Promise<StructLogTraceJson | BlockCallTrace[]> {
    if (options.tracer === "structLogTracer") {
      const budget = createStructLogBudget(structLogBytes);
      const traces = await replayBlock(this.replay, block, block.transactions.length - 1, () => new StructLogger(options, budget), deadline);
      const parts = ["["];
      traces.forEach((trace, index) => {
        if (index > 0) parts.push(",");
        for (const part of trace.parts) parts.push(part);
      });
      parts.push("]");
      return new StructLogTraceJson(parts);
    }
    const frames = await replayBlock(this.replay, block, block.transactions.length - 1, () => new CallTracer(options), deadline);
    return frames.map((result, index) => ({ txHash: `0x${bytesToUnprefixedHex(block.transactions[index]!.hash)}`, result }));
  }

  /** trace_transaction: undefined when the transaction is not in the main chain. */
  flatTransaction(transactionHash: Uint8Array): Promise<FlatTrace[] | undefined> {
    return this.inTurn(async (deadline) => {
      const located = await this.locate(transactionHash);
      if (located === undefined) return undefined;
      const [traces] = await replayBlock(this.replay, located.block, located.index, (_transaction, index) => (index === located.index ? new FlatTracer(located.block) : undefined), deadline);
      return traces ?? [];
    });
  }

  /** trace_block: the traces of every transaction of the block, in order. */
  flatBlock(block: Block): Promise<FlatTrace[]> {
    return this.inTurn(async (deadline) => {
      const perTransaction = await replayBlock(this.replay, block, block.transactions.length - 1, () => new FlatTracer(block), deadline);
      return perTransaction.flat();
    });
  }

  /**
   * trace_filter: traces of the matching transactions of the blocks in range (beyond the head
   * ignored), in chain order, after skipping `after` of them; stops once `count` are found.
   */
  flatFilter(filter: FlatTraceFilter): Promise<FlatTrace[]> {
    return this.inTurn((deadline) => this.flatFilterUntil(filter, deadline));
  }

  private async flatFilterUntil(filter: FlatTraceFilter, deadline: number): Promise<FlatTrace[]> {
    const found: FlatTrace[] = [];
    let toSkip = filter.after;
    const lastBlock = filter.toBlock < this.chain.head.number ? filter.toBlock : this.chain.head.number;
    for (let number = filter.fromBlock; number <= lastBlock && found.length < filter.count; number++) {
      if (performance.now() > deadline) throw new ExecutionTimeoutError("tracing time limit reached");
      const block = await this.chain.getBlockByNumber(number);
      if (block === undefined) break;
      const matching = block.transactions.map((transaction) => matches(filter, transaction));
      const lastMatch = matching.lastIndexOf(true);
      if (lastMatch === -1) continue;
      const perTransaction = await replayBlock(this.replay, block, lastMatch, (_transaction, index) => (matching[index] ? new FlatTracer(block) : undefined), deadline);
      for (const traces of perTransaction) {
        for (const trace of traces) {
          if (toSkip > 0) toSkip--;
          else if (found.length < filter.count) found.push(trace);
        }
      }
    }
    return found;
  }
}

function matches(filter: FlatTraceFilter, transaction: ChainTransaction): boolean {
  if (filter.fromAddresses.size > 0 && !filter.fromAddresses.has(bytesToUnprefixedHex(transaction.sender))) return false;
  if (filter.toAddresses.size > 0) {
    const to = transaction.tx.to;
    if (to === undefined || !filter.toAddresses.has(bytesToUnprefixedHex(to.bytes))) return false;
  }
  return true;
}
