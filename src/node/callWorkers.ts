// eth_call and eth_estimateGas on a second thread. The node's main thread parses, dispatches and
// answers every request and builds every block; on a machine with a core to spare, the execution
// of calls on stored blocks moves to a worker thread (node/callWorker.ts) that reads the same
// LevelDB. The worker is started at node start, once the server listens (startAndWarm), or else by
// the first call; it first runs a few hundred small calls of its own so that a burst of calls on a
// fresh node does not find both threads compiling the same code. It takes work only when:
//   - it is ready (if it cannot start, calls run on the main thread; while it starts, a call that
//     comes alone runs there, and calls that come together wait for it, up to defaultStartWaitMs);
//   - LevelDB holds every batch the store has acknowledged (the worker does not see the batches
//     still on their way from the write-ahead log, so while blocks are being written calls stay
//     on the main thread);
//   - the call or estimate does not come alone: with the worker idle, the first of a turn of the
//     event loop is first tried on the main thread for up to 50 ms (the trip there and back would
//     double a small call's latency), and comes here only if that was not enough (CallService);
//     within burstWindowMs of a burst of calls (the worker holding two at once), none comes alone;
//   - it holds fewer than `maxOutstanding` calls (past that the main thread runs calls as well).
// Results and the execution errors come back as the same values and error classes; work the worker
// held when it stopped on its own goes back to the main thread (OffloadLostError), work it held
// when the node closes it fails.
// Trace replays (TraceService) go there too, on other terms: a replay is long (tens of milliseconds
// to seconds of struct logs, their garbage and their text), so it always goes, waiting for the
// worker to start and for LevelDB to take the latest batches rather than run on the main thread
// meanwhile; the worker reads the block from LevelDB itself. The traces-at-once gate and the time
// limit stay on the main thread (TraceService), which hands over what time is left.
import { Worker } from "node:worker_threads";
import type { Block } from "../chain/block.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { CodeCacheUse } from "../common/codeCache.js";
import type { Logger } from "../common/logger.js";
import { EstimateRevertedError, GasEstimationError, OffloadLostError, type CallLimits, type CallOffload, type EstimateCall } from "../execution/callService.js";
import { ExecutionTimeoutError } from "../execution/engine.js";
import { CallNotExecutableError, type MessageCall, type MessageCallResult, type StateOverrides } from "../execution/messageCall.js";
import type { LevelStore } from "../storage/levelStore.js";
import { isPlainCall, PlainCallWriter, readPlainResults } from "./callWire.js";
import { leftOrTerminated } from "./workerExit.js";
import { replayOutputsFromWire, ReplayFailedError, ReplayStateMissingError, StructLogTooLargeError, type ReplayOffload, type ReplayOutput, type ReplayOutputOnWire, type ReplayPlan } from "../tracing/index.js";

export interface CallWorkerData {
  /** The LevelDB directory the main thread has open. */
  directory: string;
  chainId: bigint;
  limits: CallLimits;
  /** Whether the worker first tries plain calls synchronously (execution/synchronousCalls.ts). */
  synchronousCalls: boolean;
  /** The block the worker warms its call path up on as soon as it is ready (see startAndWarm). */
  warmOn?: BlockReference;
}

/** The block a call runs on: its hash (hex, what the worker keeps decoded headers by) and its header. */
export interface BlockReference {
  hash: string;
  header: Uint8Array;
}

/** Messages each way are arrays of these (see RequestBatcher). */
export type CallWorkerRequest =
  | { id: number; kind: "call"; block: BlockReference; call: MessageCall; overrides: StateOverrides | undefined }
  /** Plain calls packed (node/callWire.ts); each names its block by its index in `blocks`. */
  | { kind: "calls"; blocks: BlockReference[]; packed: Uint8Array }
  | { id: number; kind: "estimate"; block: BlockReference; call: EstimateCall }
  /** `timeLeftMs`: the request's time left when it was sent (each thread has a clock of its own). */
  | { id: number; kind: "replay"; blockHash: Uint8Array; plan: ReplayPlan; timeLeftMs: number }
  /** Warm the call path up: small calls of the worker's own on this block (see warmUpCalls in callWorker.ts). */
  | { kind: "warm"; block: BlockReference }
  | { kind: "close" };

/** An error of the worker's call service or replay, as it crosses threads. */
export interface CallWorkerFailure {
  /** "blockNotStored": the worker did not find the block to replay (the main thread replays it). */
  kind: "timeout" | "estimateReverted" | "estimation" | "notExecutable" | "replayStateMissing" | "replayFailed" | "structLogTooLarge" | "blockNotStored" | "internal";
  message: string;
  /** estimateReverted: the revert payload; replayStateMissing: the block's hash. */
  payload?: Uint8Array;
  /** structLogTooLarge: the limit passed, and the flag that sets it. */
  limitBytes?: number;
  limitFlag?: string;
  stack?: string;
}

export type CallWorkerReply =
  /** `codeCache`: how V8's code cache served the worker's bundle (common/codeCache.ts). */
  | { ready: true; codeCache: CodeCacheUse | undefined }
  /** The warm-up is over: how many of its calls succeeded. */
  | { warmed: number }
  | { failed: string }
  | { id: number; result: MessageCallResult | bigint | ReplayOutputOnWire[] }
  /** Results of plain calls packed (node/callWire.ts). */
  | { results: Uint8Array }
  | { id: number; failure: CallWorkerFailure };

/**
 * Messages for the other thread, posted together once per turn of the event loop: under load
 * several requests arrive in one turn, and each message costs both threads a structured clone and
 * an event dispatch (about a tenth of the worker's time when each call went alone). Plain calls go
 * packed as bytes (node/callWire.ts), with the blocks they run on listed once.
 */
class RequestBatcher {
  private waiting: CallWorkerRequest[] = [];
  private readonly plainCalls = new PlainCallWriter();
  private blocks: BlockReference[] = [];
  private scheduled = false;

  constructor(private readonly post: (batch: CallWorkerRequest[], transfer: ArrayBuffer[]) => void) {}

  push(request: CallWorkerRequest): void {
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    if (request.kind === "call" && isPlainCall(request.call, request.overrides)) {
      let blockIndex = this.blocks.indexOf(request.block);
      if (blockIndex < 0) blockIndex = this.blocks.push(request.block) - 1;
      this.plainCalls.add(request.id, blockIndex, request.call);
      return;
    }
    this.waiting.push(request);
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.waiting;
    this.waiting = [];
    const transfer: ArrayBuffer[] = [];
    if (!this.plainCalls.empty) {
      const packed = this.plainCalls.take();
      batch.push({ kind: "calls", blocks: this.blocks, packed });
      transfer.push(packed.buffer as ArrayBuffer);
      this.blocks = [];
    }
    if (batch.length > 0) this.post(batch, transfer);
  }
}

/**
 * How long after a burst of calls (the worker holding two or more at once) no call counts as
 * coming alone, from the burst's last answer. Under a load of many connections the worker answers
 * a turn's calls together, and the first call of the next turn found it idle: it ran on the main
 * thread, which then also loaded, ran and had V8 compile the EVM, for about one call in 30
 * (balanceOf at 32 connections: the main thread's CPU a call 51-55 µs with it, 43-44 µs without,
 * V8's compiler thread 12 against 5-7 µs). A client that waits for each answer never has two calls
 * out, and keeps the main thread's quicker answer.
 */
const burstWindowMs = 100;
/**
 * How long calls and estimates that come together (not alone, see callComesAlone) wait for a
 * starting worker, from their arrival, before they run on the main thread after all. A fresh
 * node's first burst of calls that ran on the main thread until the worker was ready had V8
 * compile the call path there too (the synchronous interpreter's loop alone is some 150 ms of its
 * optimizing compiler), on the core the worker was starting on: the burst's CPU a call was 220-300
 * µs against 76 warm. The worker is ready some 150-300 ms after the node starts it.
 */
const defaultStartWaitMs = 500;
/**
 * From the server listening to the worker's start (startAndWarm). Started as soon as the chain was
 * open instead (before the server listened), the worker's start shared the machine with the rest
 * of the node's: spawn to first answer 240-328 ms against 214-285 (make bench-anvil, start-up, 3
 * alternating runs of 15 rounds, on a loaded 2-core machine).
 */
const warmStartDelayMs = 50;
/** Calls the worker may hold at once; past that the main thread runs calls too. */
const maxOutstanding = 256;
/**
 * The worker's young generation: a call's garbage is short-lived and small, and V8's default for a
 * thread (up to 48 MiB here) is resident memory. With 8 MiB its heap stays near 33 MiB over a long
 * run and the call load loses nothing measurable; the thread still adds about 50 MiB of resident
 * memory in all (bench-long, 3 minutes: 240 MiB without it, 289 MiB with it).
 */
const workerYoungGenerationMiB = 8;
/** How long a closing worker gets to close its database before it is terminated. */
const closeGraceMs = 2_000;

function toError(failure: CallWorkerFailure): Error {
  switch (failure.kind) {
    case "timeout":
      return new ExecutionTimeoutError(failure.message);
    case "estimateReverted":
      return new EstimateRevertedError(failure.payload ?? new Uint8Array(0));
    case "estimation":
      return new GasEstimationError(failure.message);
    case "notExecutable":
      return new CallNotExecutableError(failure.message);
    case "replayStateMissing":
      return new ReplayStateMissingError(failure.payload ?? new Uint8Array(0));
    case "replayFailed":
      return new ReplayFailedError(failure.message);
    case "structLogTooLarge":
      return new StructLogTooLargeError(failure.limitBytes ?? 0, failure.limitFlag ?? "");
    case "blockNotStored":
      return new OffloadLostError(failure.message);
    case "internal": {
      const error = new Error(`call worker: ${failure.message}`);
      if (failure.stack !== undefined) error.stack = failure.stack;
      return error;
    }
  }
}

/** References made, by block: calls come on the same few blocks (the head, mostly). */
const references = new WeakMap<Block, BlockReference>();

function referenceTo(block: Block): BlockReference {
  let reference = references.get(block);
  if (reference === undefined) {
    reference = { hash: bytesToUnprefixedHex(block.hash), header: block.header.encoded };
    references.set(block, reference);
  }
  return reference;
}

interface Outstanding {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class CallWorkers implements CallOffload, ReplayOffload {
  private worker: Worker | undefined;
  private status: "idle" | "starting" | "ready" | "stopped" = "idle";
  private lastId = 0;
  private readonly outstanding = new Map<number, Outstanding>();
  private requests: RequestBatcher | undefined;
  private readonly readiness: Promise<boolean>;
  private settleReadiness!: (ready: boolean) => void;
  /** Calls offered in the current turn of the event loop. */
  private callsThisTurn = 0;
  /** Calls and estimates waiting for the starting worker (see defaultStartWaitMs). */
  private waitingForStart = 0;
  /** When the worker last took a call while holding others, or answered one of such a burst (performance.now(); see burstWindowMs). */
  private concurrentAt = Number.NEGATIVE_INFINITY;
  /** Whether the calls the worker holds came in a burst (two or more at once since it was last idle). */
  private inBurst = false;
  /** Calls, estimates and replays the worker answered (results and execution errors alike). */
  answered = 0;
  /** The warm-up's calls that succeeded, once it is over (startAndWarm). */
  warmedUp: number | undefined;

  constructor(
    private readonly data: CallWorkerData,
    private readonly store: LevelStore,
    private readonly log: Logger,
    /** See defaultStartWaitMs. */
    private readonly startWaitMs = defaultStartWaitMs,
  ) {
    this.readiness = new Promise((resolve) => (this.settleReadiness = resolve));
  }

  /**
   * Starts the worker shortly (`delayMs`: the node's first answers do not share the machine with
   * the thread's start), and once it is ready has it warm its call path up on the head then.
   */
  startAndWarm(head: () => Block, delayMs = warmStartDelayMs): void {
    const timer = setTimeout(() => {
      if (this.status === "idle") {
        // The worker begins its warm-up by itself once ready, without waiting for this thread (busy
        // with the first requests, or the first transactions' execution) to read its ready message.
        this.start(referenceTo(head()));
        return;
      }
      void this.whenReady().then((ready) => {
        if (ready && this.worker !== undefined) this.worker.postMessage([{ kind: "warm", block: referenceTo(head()) }] satisfies CallWorkerRequest[]);
      });
    }, delayMs);
    timer.unref();
  }

  /** Starts the worker unless it was started; answers whether it became ready to take work. */
  whenReady(): Promise<boolean> {
    if (this.status === "idle") this.start();
    return this.readiness;
  }

  call(block: Block, call: MessageCall, overrides: StateOverrides | undefined): Promise<MessageCallResult> | undefined {
    return this.submit<MessageCallResult>((id) => ({ id, kind: "call", block: referenceTo(block), call, overrides }));
  }

  estimateGas(block: Block, call: EstimateCall): Promise<bigint> | undefined {
    return this.submit<bigint>((id) => ({ id, kind: "estimate", block: referenceTo(block), call }));
  }

  /**
   * A trace replay, on the worker unless it has stopped (or cannot start): see the top of this file.
   * Rejects with OffloadLostError when the worker cannot take it after all (TraceService then
   * replays on the main thread).
   */
  replay(block: Block, plan: ReplayPlan, deadline: number): Promise<ReplayOutput[]> | undefined {
    if (this.status === "stopped") return undefined;
    return this.replayOnWorker(block, plan, deadline);
  }

  private async replayOnWorker(block: Block, plan: ReplayPlan, deadline: number): Promise<ReplayOutput[]> {
    if (this.status !== "ready" && !(await this.whenReady())) throw new OffloadLostError("the call worker did not start");
    if (!this.store.settled) await this.store.whenSettled();
    const sent = this.submit<ReplayOutputOnWire[]>((id) => ({ id, kind: "replay", blockHash: block.hash, plan, timeLeftMs: deadline - performance.now() }));
    if (sent === undefined) throw new OffloadLostError("the call worker cannot take the replay now");
    return replayOutputsFromWire(plan.tracer, await sent);
  }

  /**
   * A call or estimate alone (the worker idle, no other in this turn of the event loop, nor a burst
   * of calls in the last burstWindowMs) is first tried on the main thread (CallService): a trip to
   * the other thread and back would double the latency of a small call (0.29 -> 0.45 ms, from a
   * client that waits for each answer).
   */
  callComesAlone(): boolean {
    if (this.callsThisTurn++ === 0) setImmediate(() => (this.callsThisTurn = 0));
    return (
      this.status === "ready" &&
      this.store.settled &&
      this.outstanding.size === 0 &&
      this.callsThisTurn === 1 &&
      performance.now() - this.concurrentAt > burstWindowMs
    );
  }

  /**
   * Stops the worker (it closes its database handle first) and waits until it has exited. Work it
   * still held fails: the node is stopping, and the store closes next.
   */
  async close(): Promise<void> {
    const worker = this.worker;
    this.stop(new Error("the node is stopping"));
    if (worker === undefined) return;
    worker.postMessage([{ kind: "close" }] satisfies CallWorkerRequest[]);
    await leftOrTerminated(worker, closeGraceMs);
  }

  private submit<T>(request: (id: number) => CallWorkerRequest): Promise<T> | undefined {
    if (this.status !== "ready") {
      if (this.status === "idle") this.start();
      // A call alone runs on the main thread at once; calls that come together wait for the worker.
      if (this.status === "starting" && (this.callsThisTurn > 1 || this.waitingForStart > 0)) return this.submitOnceStarted(request);
      return undefined;
    }
    if (this.outstanding.size >= maxOutstanding) return undefined;
    if (!this.store.settled) {
      // The worker reads LevelDB, which lacks the latest batches for a few milliseconds: this call
      // runs on the main thread, and the batches go to LevelDB at once for the calls after it.
      this.store.hurry();
      return undefined;
    }
    if (this.outstanding.size > 0) {
      this.inBurst = true;
      this.concurrentAt = performance.now();
    }
    const id = ++this.lastId;
    const requests = this.requests!;
    return new Promise<T>((resolve, reject) => {
      this.outstanding.set(id, { resolve: resolve as (value: unknown) => void, reject });
      requests.push(request(id));
    });
  }

  /** `request` once the worker is ready; OffloadLostError (the main thread runs it) if it is not within startWaitMs. */
  private async submitOnceStarted<T>(request: (id: number) => CallWorkerRequest): Promise<T> {
    this.waitingForStart++;
    let timer: NodeJS.Timeout | undefined;
    let ready: boolean;
    try {
      ready = await Promise.race([this.readiness, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.startWaitMs)))]);
    } finally {
      this.waitingForStart--;
      clearTimeout(timer);
    }
    const sent = ready ? this.submit<T>(request) : undefined;
    if (sent === undefined) throw new OffloadLostError(ready ? "the call worker cannot take the call now" : "the call worker is not ready yet");
    return sent;
  }

  private start(warmOn?: BlockReference): void {
    this.status = "starting";
    let worker: Worker;
    try {
      const workerData: CallWorkerData = { ...this.data, warmOn };
      worker = new Worker(new URL("./callWorker.js", import.meta.url), { workerData, resourceLimits: { maxYoungGenerationSizeMb: workerYoungGenerationMiB } });
    } catch (error) {
      this.log.warn({ err: error }, "the call worker cannot start; calls run on the main thread");
      this.stop();
      return;
    }
    // It never keeps the process alive: the node closes it, and a process leaving without that is gone anyway.
    worker.unref();
    this.requests = new RequestBatcher((batch, transfer) => worker.postMessage(batch, transfer));
    worker.on("message", (replies: CallWorkerReply[]) => {
      for (const reply of replies) this.receive(reply);
    });
    worker.on("error", (error) => {
      this.log.error({ err: error }, "the call worker failed; calls run on the main thread");
      this.stop();
    });
    worker.on("exit", () => {
      if (this.worker === worker) this.stop();
    });
    this.worker = worker;
  }

  private receive(reply: CallWorkerReply): void {
    if ("ready" in reply) {
      if (this.status !== "starting") return;
      this.status = "ready";
      this.log.info({ threadId: this.worker?.threadId, codeCache: reply.codeCache }, "call worker ready: calls and trace replays on stored blocks run on it");
      this.settleReadiness(true);
      return;
    }
    if ("warmed" in reply) {
      this.warmedUp = reply.warmed;
      this.log.debug({ calls: reply.warmed }, "call worker warmed up");
      return;
    }
    if ("failed" in reply) {
      this.log.warn({ reason: reply.failed }, "the call worker cannot start; calls run on the main thread");
      this.stop();
      return;
    }
    if ("results" in reply) {
      readPlainResults(reply.results, (id, result) => this.settle(id, result, undefined));
      return;
    }
    if ("result" in reply) this.settle(reply.id, reply.result, undefined);
    else this.settle(reply.id, undefined, reply.failure);
  }

  private settle(id: number, result: unknown, failure: CallWorkerFailure | undefined): void {
    const waiting = this.outstanding.get(id);
    if (waiting === undefined) return;
    // The window counts from a burst's last answer: its calls can take longer than the window.
    if (this.inBurst) {
      this.concurrentAt = performance.now();
      if (this.outstanding.size === 1) this.inBurst = false;
    }
    this.outstanding.delete(id);
    this.answered++;
    if (failure === undefined) waiting.resolve(result);
    else waiting.reject(toError(failure));
  }

  /**
   * No more work goes to the worker. What it held comes back to the main thread, or fails with
   * `reason` when one is given.
   */
  private stop(reason?: Error): void {
    this.status = "stopped";
    this.worker = undefined;
    this.settleReadiness(false);
    const lost = [...this.outstanding.values()];
    this.outstanding.clear();
    for (const waiting of lost) waiting.reject(reason ?? new OffloadLostError("the call worker stopped"));
  }
}
