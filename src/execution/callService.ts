// Calls and gas estimates against any stored block or the pending block. Each stored state root
// that is called gets an engine of its own (kept for the few most recent roots), and calls on one
// engine run one after another: the engine's state manager holds one checkpoint at a time.
import type { Block as EngineBlock } from "@ethereumjs/block";
import type { Common } from "@ethereumjs/common";
import { Address } from "@ethereumjs/util";
import type { Block } from "../chain/block.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { OverlayStateManager } from "../state/overlayStateManager.js";
import type { StateDatabase } from "../state/stateDatabase.js";
import { createExecutionBlock, createExecutionEngine, ExecutionTimeoutError, type CanonicalHashLookup, type ExecutionBlockContext, type ExecutionEngine } from "./engine.js";
import { CallNotExecutableError, runMessageCall, type MessageCall, type MessageCallResult, type RunMeasurements, type StateOverrides } from "./messageCall.js";
import { runSynchronousCall } from "./synchronousCalls.js";

export interface CallLimits {
  /** Largest gas a call may ask for; also the gas of calls that name none. */
  gasCap: bigint;
  /** Longest a call (or a whole estimate) may run, in milliseconds. */
  timeLimitMs: number;
}

/** Where a call runs: on the state after a stored block, in that block's context, or on the pending block. */
export type CallTarget = { kind: "block"; block: Block } | { kind: "pending" };

/** Runs work on the pending block's engine (see PendingState.execute). */
export interface PendingExecution {
  execute<T>(run: (engine: ExecutionEngine, context: ExecutionBlockContext) => Promise<T>): Promise<T>;
}

/** A call asks for more gas than the node allows. */
export class CallGasCapExceededError extends Error {
  constructor(
    readonly gas: bigint,
    readonly cap: bigint,
  ) {
    super(`gas ${gas} exceeds the call gas cap of ${cap}`);
  }
}

/** The estimate's simulation fails at the upper bound (not by a revert: that is a MessageCallResult). */
export class GasEstimationError extends Error {}

/** The simulation reverts at the upper bound of the estimate. */
export class EstimateRevertedError extends Error {
  constructor(readonly payload: Uint8Array) {
    super("execution reverted");
  }
}

/**
 * Runs calls and estimates on stored blocks somewhere else (another thread: node/callWorkers.ts).
 * Each method answers undefined when it cannot take the work now; the service then runs it itself.
 */
export interface CallOffload {
  call(block: Block, call: MessageCall, overrides: StateOverrides | undefined): Promise<MessageCallResult> | undefined;
  estimateGas(block: Block, call: EstimateCall): Promise<bigint> | undefined;
  /**
   * Whether a call arriving now would be quicker run here: it comes alone (no other call in this
   * turn of the event loop, none outstanding), so the trip to the other thread and back is all
   * latency. Counts the call.
   */
  callComesAlone(): boolean;
}

/**
 * How long a call or estimate that comes alone runs here before it goes to the offload instead: a
 * small one (a token's balanceOf, some 0.3 ms) answers sooner than after the trip to the other
 * thread, one of a few milliseconds runs on this thread's warm compiled code (the other thread's
 * is cold for code it has not run yet: a 400,000-gas estimate's first 20 runs took a median of
 * 21-29 ms there against 16-18 ms here), and a heavy one holds the thread that answers every
 * request and builds every block no longer than this. Cut off, it runs again on the offload, from
 * the start (a call changes nothing).
 */
const aloneCallFirstTryMs = 50;

/**
 * A call whose state override writes more accounts and slots than this goes to the offload even
 * when it comes alone: the first try here would write them all and undo them all on this thread
 * (the undo in one go), before and whatever the call's own run. 1,000 accounts with 10,000 slots
 * held the main thread for 30-40 ms a call (make bench, bounds, CPU profile: putStorage,
 * applyStateOverrides, revert), some 3 µs an entry; 1,000 entries stay near the 5 ms slices
 * the node works in.
 */
const aloneOverrideEntriesLimit = 1_000;

/** Accounts and slots an override set writes. */
function overrideEntries(overrides: StateOverrides | undefined): number {
  let entries = 0;
  for (const [, override] of overrides ?? []) entries += 1 + (override.replaceStorage?.size ?? 0) + (override.storageChanges?.size ?? 0);
  return entries;
}

/** The offload lost work it had taken (its thread stopped): the service runs that work itself. */
export class OffloadLostError extends Error {}

/** Gas of a value transfer to an account without code. */
const transferGas = 21_000n;
/** Gas a CALL with value hands to the callee for free; part of geth's optimistic first guess. */
const callStipend = 2_300n;
/** Stored roots with an engine kept ready. */
const engineCount = 4;

/** How far a call on a stored block runs synchronously (execution/synchronousCalls.ts) before it gives up and takes the engine's path. */
export interface SynchronousCallLimits {
  readonly steps: number;
  readonly ms: number;
}

/**
 * A token's balanceOf is some 200 steps and 10-20 µs, a swap's quote a few thousand; 20,000 steps
 * of cheap opcodes take a millisecond or two, and the time bound caps steps that read the disk. It
 * holds the thread that answers every request no longer than the first try of a call that comes
 * alone (aloneCallFirstTryMs).
 */
const defaultSynchronousCallLimits: SynchronousCallLimits = { steps: 20_000, ms: 3 };

interface StoredRootEngine {
  /** The engine's state, made first: the synchronous path reads its stored state without the engine. */
  readonly overlay: OverlayStateManager;
  /** Made when the first call needs it (the synchronous path does not). */
  engine: Promise<ExecutionEngine> | undefined;
  /** Calls on this engine, one after another. */
  queue: Promise<unknown>;
}

/** See CallService's `synchronousCalls`. */
export type SynchronousCallsHere = "all" | "alone" | "none";

export type EstimateCall = Omit<MessageCall, "gasLimit"> & { gasLimit: bigint | undefined };

export class CallService {
  private readonly engines = new Map<string, StoredRootEngine>();
  private readonly executionBlocks = new Map<string, EngineBlock>();
  /** A stored block's context, and the engine's blocks for it (free calls, paid calls): calls come on the same few blocks. */
  private readonly contexts = new WeakMap<Block, { context: ExecutionBlockContext; stateRootKey: string }>();
  private readonly blocksOfContext = new WeakMap<ExecutionBlockContext, { free?: EngineBlock; paid?: EngineBlock }>();
  private offload: CallOffload | undefined;

  constructor(
    private readonly common: Common,
    private readonly state: StateDatabase,
    private readonly canonicalHash: CanonicalHashLookup,
    private readonly pending: PendingExecution,
    readonly limits: CallLimits,
    /**
     * Which plain calls on stored blocks are first tried synchronously (synchronousCalls.ts): all
     * of them, only those that come alone (see CallOffload.callComesAlone; the others go to the
     * offload, which tries them there), or none.
     */
    private readonly synchronousCalls: SynchronousCallsHere = "none",
    /** How far the synchronous path runs before it gives up. */
    private readonly synchronousLimits: SynchronousCallLimits = defaultSynchronousCallLimits,
  ) {}

  /** From now on, calls and estimates on stored blocks go to `offload` when it takes them. */
  offloadTo(offload: CallOffload): void {
    this.offload = offload;
  }

  /**
   * A plain call on a stored block run at once on the synchronous path, when this service tries
   * every such call there ("all"); undefined when it does not or gives up (call() then runs it,
   * told so by `synchronousTried`).
   */
  callAtOnce(block: Block, call: MessageCall): MessageCallResult | undefined {
    if (this.synchronousCalls !== "all" || call.gasLimit > this.limits.gasCap) return undefined;
    return this.runSynchronously(block, call);
  }

  /** Runs `call` (gas undefined: the cap) on the target's state; nothing it does is kept. */
  async call(target: CallTarget, call: Omit<MessageCall, "gasLimit"> & { gasLimit: bigint | undefined }, overrides?: StateOverrides, synchronousTried = false): Promise<MessageCallResult> {
    const gasLimit = call.gasLimit ?? this.limits.gasCap;
    if (gasLimit > this.limits.gasCap) throw new CallGasCapExceededError(gasLimit, this.limits.gasCap);
    const limited = { ...call, gasLimit };
    const synchronous = overrides === undefined && target.kind === "block" && this.synchronousCalls !== "none" && !synchronousTried;
    if (synchronous && (this.synchronousCalls === "all" || this.offload === undefined)) {
      const result = this.runSynchronously(target.block, limited);
      if (result !== undefined) return result;
    }
    // The time limit counts from when the call's turn on its engine comes, not from its arrival.
    const runHere = (timeLimitMs: number) => this.onTarget(target, (engine, context) => this.runOnce(engine, context, limited, overrides, performance.now() + timeLimitMs));
    const firstAlone = synchronous && this.synchronousCalls === "alone" ? (block: Block) => this.runSynchronously(block, limited) : undefined;
    return this.offloaded(target, (block) => this.offload?.call(block, limited, overrides), runHere, overrideEntries(overrides) > aloneOverrideEntriesLimit, firstAlone);
  }

  /**
   * The smallest gas limit with which `call` succeeds as a transaction, searched between its
   * intrinsic gas and the upper bound (its gas, else the block's gas limit; at most the cap).
   */
  async estimateGas(target: CallTarget, call: EstimateCall): Promise<bigint> {
    return this.offloaded(target, (block) => this.offload?.estimateGas(block, call), (timeLimitMs) => this.estimateHere(target, call, timeLimitMs));
  }

  /**
   * Work on a stored block goes to the offload when it takes it (and comes back here if the offload
   * loses it); work that comes alone is first tried here (see aloneCallFirstTryMs), unless it is
   * `heavyBeforeItRuns` (see aloneOverrideEntriesLimit), and before that with `firstAlone` when
   * given (the synchronous path; undefined when it gives up), which is also tried before this
   * thread's engine when the offload cannot take the work.
   */
  private offloaded<T>(
    target: CallTarget,
    send: (block: Block) => Promise<T> | undefined,
    runHere: (timeLimitMs: number) => Promise<T>,
    heavyBeforeItRuns = false,
    firstAlone?: (block: Block) => T | undefined,
  ): Promise<T> {
    const fullTime = this.limits.timeLimitMs;
    if (target.kind !== "block" || this.offload === undefined) return runHere(fullTime);
    const block = target.block;
    let triedFirst = false;
    // The offload cannot take it (not started yet, LevelDB behind, full), or lost it: the
    // synchronous path first here too, rather than this thread's engine.
    const runHereAfterAll = () => {
      const quick = triedFirst ? undefined : firstAlone?.(block);
      return quick !== undefined ? Promise.resolve(quick) : runHere(fullTime);
    };
    const sendOrRunHere = () => {
      const sent = send(block);
      if (sent === undefined) return runHereAfterAll();
      return sent.catch((error: unknown) => {
        if (error instanceof OffloadLostError) return runHereAfterAll();
        throw error;
      });
    };
    // Counted first: a call after this one in the same turn does not come alone either.
    const alone = this.offload.callComesAlone();
    if (!alone || heavyBeforeItRuns || aloneCallFirstTryMs >= fullTime) return sendOrRunHere();
    const quick = firstAlone?.(block);
    if (quick !== undefined) return Promise.resolve(quick);
    triedFirst = true;
    return runHere(aloneCallFirstTryMs).catch((error: unknown) => {
      if (!(error instanceof ExecutionTimeoutError)) throw error;
      return sendOrRunHere();
    });
  }

  private async estimateHere(target: CallTarget, call: EstimateCall, timeLimitMs: number): Promise<bigint> {
    return this.onTarget(target, async (engine, context) => {
      const deadline = performance.now() + timeLimitMs;
      // A gas below the smallest transaction's is no bound at all (geth likewise takes the block's).
      let upper = call.gasLimit !== undefined && call.gasLimit >= transferGas ? call.gasLimit : context.gasLimit;
      if (upper > this.limits.gasCap) upper = this.limits.gasCap;
      if (call.gasPrice > 0n) {
        // No more gas than the sender can pay for at the given price.
        const balance = (await engine.state.getAccount(new Address(call.from)))?.balance ?? 0n;
        const allowance = balance > call.value ? (balance - call.value) / call.gasPrice : 0n;
        if (upper > allowance) upper = allowance;
      }
      const run = (gasLimit: bigint, gasSlack = false) => this.runOnce(engine, context, { ...call, gasLimit }, undefined, deadline, { gasSlack, framesOutOfGas: true });

      // A value transfer to an account without code needs exactly the transfer gas.
      if (call.to !== undefined && call.data.length === 0 && (await engine.state.getCode(new Address(call.to))).length === 0) {
        const transfer = await this.tryRun(run, transferGas <= upper ? transferGas : upper);
        if (transfer?.kind === "success") return transferGas;
      }

      const atUpper = await this.tryRun((gasLimit) => run(gasLimit, true), upper);
      if (atUpper === undefined) throw new GasEstimationError(`gas required exceeds allowance (${upper})`);
      if (atUpper.kind === "revert") throw new EstimateRevertedError(atUpper.returnData);
      if (atUpper.kind === "halt") throw new GasEstimationError(atUpper.reason === "out of gas" ? `gas required exceeds allowance (${upper})` : atUpper.reason);

      // A limit is enough when the run succeeds with no more frames out of gas than at the upper
      // bound: a caller that catches a call's failure (try/catch, a low-level call) succeeds with
      // less gas than its work needs, and the work is silently not done (geth only asks for success).
      const framesOutOfGasAtUpper = atUpper.framesOutOfGas ?? 0;
      const enough = (result: MessageCallResult | undefined) => result?.kind === "success" && (result.framesOutOfGas ?? 0) <= framesOutOfGasAtUpper;
      // Less than what the run consumed (refunds included) is not enough, unless the code reads the
      // gas left: with less it may take another path that needs less (so the search starts below
      // the smallest transaction).
      const readsGasLeft = atUpper.slack?.readsGasLeft === true;
      let failing = readsGasLeft ? transferGas - 1n : atUpper.gasConsumed - 1n;
      let succeeding = upper;
      // Without other frames the run shows the smallest limit: the upper bound less the least gas
      // that was to spare (at the end, or above the sentry at an SSTORE).
      const slack = atUpper.slack;
      const guesses: bigint[] = [];
      if (slack !== undefined && !slack.nestedFrames) {
        const endSlack = upper - atUpper.gasConsumed;
        const least = slack.storageSentrySlack !== undefined && slack.storageSentrySlack < endSlack ? slack.storageSentrySlack : endSlack;
        // When nothing the code reads depends on the gas limit (it never reads the gas left, and at
        // a zero price the sender's balance does not depend on it either), a run with less gas
        // takes the same path with that much less left at every step: the smallest limit is exact.
        if (!slack.readsGasLeft && call.gasPrice === 0n) return upper - least;
        // Otherwise two runs confirm it.
        guesses.push(upper - least - 1n, upper - least);
      }
      // Otherwise: the gas consumed, then a guess with room for the 1/64 each call level keeps
      // back, then a binary search between the highest failing and the lowest succeeding limit.
      guesses.push(atUpper.gasConsumed, ((atUpper.gasConsumed + callStipend) * 64n) / 63n);
      for (const guess of guesses) {
        if (guess <= failing || guess >= succeeding) continue;
        if (enough(await this.tryRun(run, guess))) succeeding = guess;
        else failing = guess;
      }
      while (succeeding - failing > 1n) {
        const middle = (failing + succeeding) / 2n;
        if (enough(await this.tryRun(run, middle))) succeeding = middle;
        else failing = middle;
      }
      return succeeding;
    });
  }

  /** A run at `gasLimit`; undefined when the transaction cannot even start with that much gas. */
  private async tryRun(run: (gasLimit: bigint) => Promise<MessageCallResult>, gasLimit: bigint): Promise<MessageCallResult | undefined> {
    try {
      return await run(gasLimit);
    } catch (error) {
      if (error instanceof CallNotExecutableError && /gas limit|intrinsic/i.test(error.message)) return undefined;
      throw error;
    }
  }

  private async runOnce(engine: ExecutionEngine, context: ExecutionBlockContext, call: MessageCall, overrides: StateOverrides | undefined, deadline: number, measurements: RunMeasurements = {}) {
    const timeLeft = deadline - performance.now();
    if (timeLeft <= 0) throw new ExecutionTimeoutError("execution time limit reached");
    // A call that pays no gas price runs with a base fee of zero, as a free call must be able to.
    const free = call.gasPrice === 0n;
    let blocks = this.blocksOfContext.get(context);
    if (blocks === undefined) this.blocksOfContext.set(context, (blocks = {}));
    let block = free ? blocks.free : blocks.paid;
    if (block === undefined) {
      block = this.executionBlock({ ...context, baseFee: free ? 0n : context.baseFee });
      if (free) blocks.free = block;
      else blocks.paid = block;
    }
    return runMessageCall(engine, block, call, overrides, timeLeft, measurements);
  }

  /** The engine's block for a context; the few most recent are kept (building one costs a header). */
  private executionBlock(context: ExecutionBlockContext): EngineBlock {
    const key = `${context.number}:${context.timestamp}:${bytesToUnprefixedHex(context.coinbase)}:${context.gasLimit}:${context.baseFee}:${context.difficulty}`;
    let block = this.executionBlocks.get(key);
    if (block === undefined) {
      block = createExecutionBlock(this.common, context);
      this.executionBlocks.set(key, block);
      if (this.executionBlocks.size > engineCount * 2) this.executionBlocks.delete(this.executionBlocks.keys().next().value!);
    }
    return block;
  }

  /** `call` on `block` through the synchronous interpreter; undefined when it gives up. */
  private runSynchronously(block: Block, call: MessageCall): MessageCallResult | undefined {
    const { context, stateRootKey } = this.contextOf(block);
    const entry = this.entryOf(stateRootKey, block.header.fields.stateRoot);
    const budget = { steps: this.synchronousLimits.steps, deadline: performance.now() + this.synchronousLimits.ms };
    return runSynchronousCall(entry.overlay.storedReads(), context, call, this.common, budget);
  }

  private contextOf(block: Block): { context: ExecutionBlockContext; stateRootKey: string } {
    let known = this.contexts.get(block);
    if (known === undefined) {
      const fields = block.header.fields;
      const context = { number: block.number, coinbase: fields.coinbase, timestamp: fields.timestamp, gasLimit: fields.gasLimit, baseFee: fields.minimumGasPrice, difficulty: fields.difficulty };
      known = { context, stateRootKey: bytesToUnprefixedHex(fields.stateRoot) };
      this.contexts.set(block, known);
    }
    return known;
  }

  private entryOf(key: string, stateRoot: Uint8Array): StoredRootEngine {
    let entry = this.engines.get(key);
    if (entry === undefined) {
      entry = { overlay: this.state.overlayAt(stateRoot), engine: undefined, queue: Promise.resolve() };
      this.engines.set(key, entry);
      if (this.engines.size > engineCount) this.engines.delete(this.engines.keys().next().value!);
    }
    return entry;
  }

  private onTarget<T>(target: CallTarget, run: (engine: ExecutionEngine, context: ExecutionBlockContext) => Promise<T>): Promise<T> {
    if (target.kind === "pending") return this.pending.execute(run);
    const { block } = target;
    const { context, stateRootKey: key } = this.contextOf(block);
    const current = this.entryOf(key, block.header.fields.stateRoot);
    const engine = (current.engine ??= createExecutionEngine(this.common, current.overlay, this.canonicalHash));
    const job = current.queue.then(async () => {
      try {
        return await run(await engine, context);
      } catch (error) {
        // A timed-out run leaves the engine mid-checkpoint: the next call gets a fresh one.
        if (error instanceof ExecutionTimeoutError && this.engines.get(key) === current) this.engines.delete(key);
        throw error;
      }
    });
    current.queue = job.catch(() => undefined);
    return job;
  }
}
