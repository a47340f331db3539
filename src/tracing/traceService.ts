// Tracing as the RPC layer asks for it: a transaction or a block replayed with the struct logger,
// the callTracer or flat traces, and flat traces over a block range with sender/recipient filters.
import type { Common } from "@ethereumjs/common";
import type { Block } from "../chain/block.js";
import type { Chain } from "../chain/chain.js";
import type { ChainTransaction } from "../chain/transactions.js";
import { ConcurrencyGate, GateWaitTimeoutError } from "../common/concurrencyGate.js";
import { bigIntToMinimalBytes, bytesToUnprefixedHex } from "../common/hex.js";
import { callTracerError } from "./errors.js";
import { OffloadLostError } from "../execution/callService.js";
import { ExecutionTimeoutError } from "../execution/engine.js";
import { loadEnginePackages } from "../execution/enginePackages.js";
import type { StateDatabase } from "../state/stateDatabase.js";
import { Address, generateAddress } from "@ethereumjs/util";
import type { MessageCall, StateOverrides } from "../execution/messageCall.js";
import { AccessListTracer, sameAccessList, type RecordedAccessList } from "./accessListTracer.js";
import { traceCall, type CallTraceDependencies } from "./callTrace.js";
import { CallTracer, type CallFrame, type CallTracerOptions } from "./callTracer.js";
import type { FlatTrace } from "./flatTraces.js";
import type { ReplayDependencies } from "./replay.js";
import { runReplayPlan, type ReplayOutput, type ReplayPlan } from "./replayPlan.js";
import { createStructLogBudget, defaultStructLogLimit, StructLogger, StructLogTraceJson, type StructLogLimit, type StructLogOptions } from "./structLogger.js";

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
   * Most requests replaying at once; the others wait, within their time limit. Replays share one
   * thread (the offload's, else the main one) in 5 ms slices, so more at once finish none sooner:
   * each turn of the event loop would run a slice of every one, and on the main thread other
   * requests wait for all of those slices.
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

/** eth_createAccessList's answer before formatting: the list, the gas the call uses with it, its error. */
export interface CreatedAccessList {
  accessList: RecordedAccessList;
  gasUsed: bigint;
  /** The call's failure in geth's words (the list is still the one it made). */
  error: string | undefined;
}

/**
 * Runs replays of stored blocks somewhere else (the call worker's thread: node/callWorkers.ts),
 * where they do not hold up the thread that answers every request. Answers undefined when it
 * cannot take the replay now; rejects with OffloadLostError when it took it and cannot finish it:
 * either way the service replays the block itself.
 */
export interface ReplayOffload {
  /** `deadline`: performance.now() of this thread past which the replay answers ExecutionTimeoutError. */
  replay(block: Block, plan: ReplayPlan, deadline: number): Promise<ReplayOutput[]> | undefined;
}

export const defaultTraceServiceOptions: TraceServiceOptions = { maxTracesPerRequest: 10_000, timeLimitMs: 5_000, maxConcurrent: 1 };

export class TraceService {
  private readonly replay: ReplayDependencies;
  private readonly calls: CallTraceDependencies;
  private readonly gate: ConcurrencyGate;
  private offload: ReplayOffload | undefined;

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
    this.calls = { common, state, canonicalHash: this.replay.canonicalHash };
  }

  /** From now on, replays go to `offload` when it takes them (the gate and the time limit stay here). */
  offloadTo(offload: ReplayOffload): void {
    this.offload = offload;
  }

  /** The traces of `plan` on `block`: replayed by the offload when it takes the work, else here. */
  private async replayPlan(block: Block, plan: ReplayPlan, deadline: number): Promise<ReplayOutput[]> {
    const sent = this.offload?.replay(block, plan, deadline);
    if (sent !== undefined) {
      try {
        return await sent;
      } catch (error) {
        if (!(error instanceof OffloadLostError)) throw error;
      }
    }
    return runReplayPlan(this.replay, block, plan, deadline);
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

  private traceOne(transactionHash: Uint8Array, tracer: ReplayPlan["tracer"]): Promise<ReplayOutput | undefined> {
    return this.inTurn(async (deadline) => {
      const located = await this.locate(transactionHash);
      if (located === undefined) return undefined;
      const [trace] = await this.replayPlan(located.block, { tracer, traced: [located.index] }, deadline);
      return trace;
    });
  }

  /**
   * debug_traceTransaction: undefined when the transaction is not in the main chain. Struct logs
   * may hold at most `limit` of text (past it StructLogTooLargeError).
   */
  async debugTraceTransaction(transactionHash: Uint8Array, options: DebugTracerOptions, limit = defaultStructLogLimit): Promise<StructLogTraceJson | CallFrame | undefined> {
    return this.traceOne(transactionHash, tracerChoice(options, limit)) as Promise<StructLogTraceJson | CallFrame | undefined>;
  }

  /** debug_traceBlockByHash: one trace per transaction, in block order; the struct logs of all share `limit`. */
  debugTraceBlock(block: Block, options: DebugTracerOptions, limit = defaultStructLogLimit): Promise<StructLogTraceJson | BlockCallTrace[]> {
    return this.inTurn((deadline) => this.traceBlockUntil(block, options, limit, deadline));
  }

  private async traceBlockUntil(block: Block, options: DebugTracerOptions, limit: StructLogLimit, deadline: number): Promise<StructLogTraceJson | BlockCallTrace[]> {
    const plan: ReplayPlan = { tracer: tracerChoice(options, limit), traced: block.transactions.map((_transaction, index) => index) };
    if (options.tracer === "structLogTracer") {
      const traces = (await this.replayPlan(block, plan, deadline)) as StructLogTraceJson[];
      const parts: (string | Uint8Array)[] = ["["];
      let byteLength = 2 + Math.max(0, traces.length - 1);
      traces.forEach((trace, index) => {
        if (index > 0) parts.push(",");
        for (const part of trace.parts) parts.push(part);
        byteLength += trace.byteLength;
      });
      parts.push("]");
      return new StructLogTraceJson(parts, byteLength);
    }
    const frames = (await this.replayPlan(block, plan, deadline)) as CallFrame[];
    return frames.map((result, index) => ({ txHash: `0x${bytesToUnprefixedHex(block.transactions[index]!.hash)}`, result }));
  }

  /**
   * debug_traceCall: `call` run after `block` as debug_traceTransaction would trace it sent, under
   * the same time limit and turn as the other traces.
   */
  debugTraceCall(block: Block, call: MessageCall, overrides: StateOverrides | undefined, options: DebugTracerOptions, limit = defaultStructLogLimit): Promise<StructLogTraceJson | CallFrame> {
    return this.inTurn(async (deadline) => {
      const tracer = options.tracer === "callTracer" ? new CallTracer(options) : new StructLogger(options, createStructLogBudget(limit));
      return (await traceCall<StructLogTraceJson | CallFrame>(this.calls, block, call, overrides, tracer, deadline)).trace;
    });
  }

  /**
   * eth_createAccessList, as geth makes it: the call is run with the list found so far until a
   * run finds the same list (a list can change what the code does: gas left, warm accounts).
   * The sender, the recipient (or the created contract) and the precompiles are left out.
   */
  createAccessList(block: Block, call: MessageCall): Promise<CreatedAccessList> {
    return this.inTurn(async (deadline) => {
      const sender = bytesToUnprefixedHex(call.from);
      const { getActivePrecompiles } = (await loadEnginePackages()).evm;
      const excluded = new Set([sender, ...[...getActivePrecompiles(this.calls.common).keys()].map((address) => address.replace(/^0x/, ""))]);
      if (call.to !== undefined) excluded.add(bytesToUnprefixedHex(call.to));
      else excluded.add(bytesToUnprefixedHex(generateAddress(call.from, bigIntToMinimalBytes(await this.nonceAt(block, call.from)))));
      let previous = new AccessListTracer(excluded, fromCallAccessList(call)).finish();
      for (;;) {
        const withList = { ...call, accessList: toCallAccessList(previous) };
        const { trace, result } = await traceCall(this.calls, block, withList, undefined, new AccessListTracer(excluded, previous), deadline);
        const error = result.execResult.exceptionError?.error;
        if (sameAccessList(trace, previous)) return { accessList: trace, gasUsed: result.totalGasSpent, error: error === undefined ? undefined : callTracerError(error) };
        previous = trace;
      }
    });
  }

  private async nonceAt(block: Block, address: Uint8Array): Promise<bigint> {
    const view = this.calls.state.reader(block.header.fields.stateRoot);
    return (await view?.getAccount(new Address(address)))?.nonce ?? 0n;
  }

  /** trace_transaction: undefined when the transaction is not in the main chain. */
  flatTransaction(transactionHash: Uint8Array): Promise<FlatTrace[] | undefined> {
    return this.inTurn(async (deadline) => {
      const located = await this.locate(transactionHash);
      if (located === undefined) return undefined;
      const [traces] = (await this.replayPlan(located.block, { tracer: { kind: "flat" }, traced: [located.index] }, deadline)) as FlatTrace[][];
      return traces ?? [];
    });
  }

  /** trace_block: the traces of every transaction of the block, in order. */
  flatBlock(block: Block): Promise<FlatTrace[]> {
    return this.inTurn(async (deadline) => {
      const perTransaction = (await this.replayPlan(block, { tracer: { kind: "flat" }, traced: block.transactions.map((_transaction, index) => index) }, deadline)) as FlatTrace[][];
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
      const traced: number[] = [];
      block.transactions.forEach((transaction, index) => {
        if (matches(filter, transaction)) traced.push(index);
      });
      if (traced.length === 0) continue;
      const perTransaction = (await this.replayPlan(block, { tracer: { kind: "flat" }, traced }, deadline)) as FlatTrace[][];
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

function fromCallAccessList(call: MessageCall): RecordedAccessList {
  return new Map((call.accessList ?? []).map((entry) => [bytesToUnprefixedHex(entry.address), new Set(entry.storageKeys.map((key) => bytesToUnprefixedHex(key).padStart(64, "0")))]));
}

/** The recorded list as a call carries it, accounts and slots in ascending order (as geth sorts them). */
export function toCallAccessList(list: RecordedAccessList): NonNullable<MessageCall["accessList"]> {
  return [...list.keys()].sort().map((address) => ({ address: Buffer.from(address, "hex"), storageKeys: [...list.get(address)!].sort().map((slot) => Buffer.from(slot, "hex")) }));
}

function tracerChoice(options: DebugTracerOptions, limit: StructLogLimit): ReplayPlan["tracer"] {
  if (options.tracer === "callTracer") return { kind: "call", options: { onlyTopCall: options.onlyTopCall, withLog: options.withLog } };
  const { disableStack, enableMemory, disableStorage, enableReturnData } = options;
  return { kind: "structLog", options: { disableStack, enableMemory, disableStorage, enableReturnData, limit: options.limit }, limit };
}

function matches(filter: FlatTraceFilter, transaction: ChainTransaction): boolean {
  if (filter.fromAddresses.size > 0 && !filter.fromAddresses.has(bytesToUnprefixedHex(transaction.sender))) return false;
  if (filter.toAddresses.size > 0) {
    const to = transaction.tx.to;
    if (to === undefined || !filter.toAddresses.has(bytesToUnprefixedHex(to.bytes))) return false;
  }
  return true;
}
