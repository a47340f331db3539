// Sender recovery on a second thread for sends that arrive together. Recovering a received
// transaction's sender (libsecp256k1, 55-90 µs here) is the largest single piece of a value
// transfer's work on the main thread. When several clients send at once, one turn of the event loop
// reads several sends; their transactions are then mined one after another, and while the main
// thread mines the first, the worker (recoveryWorker.ts) recovers the senders of the others.
//
// How a send's recovery goes:
//   - each waits for the next turn of the event loop (setImmediate), so that the sends read in the
//     same turn are all seen before the first is mined;
//   - the first of a turn is recovered on the main thread: handing it over would only make it wait;
//   - the others read in the same turn go to the worker through shared memory (RecoveryChannel: no
//     message, no event on the main thread); it recovers them while the main thread mines the first;
//   - they are answered in the order they arrived. The main thread recovers a signature itself if
//     the worker has not started it, and waits only for one it is working on.
// A send that comes alone (one client sending one transaction after another) waits one setImmediate
// and is recovered on the main thread, as before the worker. Until the worker is serving, and once
// it stops, recoveries run on the main thread (still in arrival order).
import { Worker } from "node:worker_threads";
import type { Logger } from "../common/logger.js";
import { recoverSignerKey, type RecoverableSignature, type RecoveryAhead, type SenderRecovery } from "../common/signatures.js";
import { RecoveryChannel } from "./recoveryChannel.js";
import type { RecoveryWorkerReply } from "./recoveryWorker.js";
import { leftOrTerminated } from "./workerExit.js";

/**
 * How long the main thread waits for a recovery the worker has under way before recovering it
 * itself: about three recoveries' time. Past it the worker has lost its core (or stopped), and
 * recovering here is the shorter wait.
 */
const workerWaitLimitMs = 0.25;

/**
 * The worker's young generation: a recovery leaves a few hundred bytes of garbage there, and none
 * of it lives on, so a small space serves. 400,000 recoveries grew the process by 10 MiB with V8's
 * default and by 7 MiB with this limit, against 4 MiB with every recovery on the main thread.
 */
const workerYoungGenerationMiB = 1;

/** How long a closing worker has to leave its loop before it is terminated. */
const closeGraceMs = 1_000;

interface WaitingRecovery {
  readonly signature: RecoverableSignature;
  /** The channel's slot, when the worker was given it. */
  readonly slot: number | undefined;
  resolve(key: Uint8Array): void;
  reject(error: unknown): void;
}

export interface RecoveryCounts {
  /** Signatures the worker recovered. */
  byWorker: number;
  /** Signatures the main thread recovered, or recovered again when the worker found no signer. */
  onMainThread: number;
}

export class RecoveryOffload implements SenderRecovery {
  private readonly channel = RecoveryChannel.allocate();
  private worker: Worker | undefined;
  /** Recoveries go to the worker only while it is serving. */
  private status: "unstarted" | "starting" | "serving" | "stopped" = "unstarted";
  /** Recoveries in arrival order, each with its own setImmediate. */
  private readonly waiting: WaitingRecovery[] = [];
  private readonly counts: RecoveryCounts = { byWorker: 0, onMainThread: 0 };
  /** Settles once the worker serves (true) or cannot (false). */
  readonly ready: Promise<boolean>;
  private settleReadiness!: (serving: boolean) => void;

  constructor(private readonly log: Logger) {
    this.ready = new Promise((resolve) => (this.settleReadiness = resolve));
  }

  /** The signer's 64-byte public key; rejects as recoverSignerKey throws. The first call starts the worker. */
  recover(signature: RecoverableSignature): Promise<Uint8Array> {
    const serving = this.status === "serving";
    if (!serving && this.waiting.length === 0) {
      if (this.status === "unstarted") this.start();
      try {
        return Promise.resolve(this.recoverHere(signature));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    // Behind others waiting for their turn (also when the worker has just stopped: order holds).
    const slot = this.waiting.length === 0 || !serving ? undefined : this.channel.submit(signature);
    return new Promise((resolve, reject) => {
      this.waiting.push({ signature, slot, resolve, reject });
      setImmediate(this.answerNext);
    });
  }

  /**
   * Hands `signature` to the worker now, for a send further down a JSON-RPC batch (a batch runs
   * one request at a time, so its later sends wait anyway); undefined when the worker is not
   * serving or its next slot is in use. The first call starts the worker.
   */
  recoverAhead(signature: RecoverableSignature): RecoveryAhead | undefined {
    if (this.status === "unstarted") this.start();
    if (this.status !== "serving") return undefined;
    const slot = this.channel.submit(signature);
    if (slot === undefined) return undefined;
    let settled = false;
    return {
      key: () => {
        if (settled) throw new Error("a recovery started ahead is read once");
        settled = true;
        const key = this.channel.take(slot, workerWaitLimitMs);
        if (key === undefined) return this.recoverHere(signature);
        this.counts.byWorker++;
        return key;
      },
      release: () => {
        if (settled) return;
        settled = true;
        this.channel.take(slot, 0);
      },
    };
  }

  /** How many recoveries each thread did so far. */
  get recoveryCounts(): Readonly<RecoveryCounts> {
    return { ...this.counts };
  }

  /** Stops the worker; recoveries from then on run on the main thread. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.stop();
    this.log.debug(this.recoveryCounts, "senders recovered on each thread");
    if (worker === undefined) return;
    // The worker leaves its loop after the recovery it is doing (the channel is closed).
    await leftOrTerminated(worker, closeGraceMs);
  }

  private readonly answerNext = (): void => {
    const next = this.waiting.shift()!;
    try {
      const key = next.slot === undefined ? undefined : this.channel.take(next.slot, workerWaitLimitMs);
      if (key !== undefined) this.counts.byWorker++;
      next.resolve(key ?? this.recoverHere(next.signature));
    } catch (error) {
      next.reject(error);
    }
  };

  private recoverHere(signature: RecoverableSignature): Uint8Array {
    this.counts.onMainThread++;
    return recoverSignerKey(signature);
  }

  /** Starts the worker now rather than at the first recovery. */
  start(): void {
    if (this.status !== "unstarted") return;
    this.status = "starting";
    let worker: Worker;
    try {
      worker = new Worker(new URL("./recoveryWorker.js", import.meta.url), { workerData: this.channel.buffer, resourceLimits: { maxYoungGenerationSizeMb: workerYoungGenerationMiB } });
    } catch (error) {
      this.log.warn({ err: error }, "the sender-recovery worker cannot start; senders are recovered on the main thread");
      this.stop();
      return;
    }
    // It never keeps the process alive: the node closes it, and a process leaving without that is gone anyway.
    worker.unref();
    worker.on("message", (reply: RecoveryWorkerReply) => {
      if ("serving" in reply && this.worker === worker) {
        this.status = "serving";
        this.settleReadiness(true);
      } else if ("failed" in reply) {
        this.log.warn({ reason: reply.failed }, "the sender-recovery worker cannot start; senders are recovered on the main thread");
        this.stop();
      }
    });
    worker.on("error", (error) => {
      this.log.error({ err: error }, "the sender-recovery worker failed; senders are recovered on the main thread");
      this.stop();
    });
    worker.on("exit", () => {
      if (this.worker === worker) this.stop();
    });
    this.worker = worker;
  }

  /** Recoveries from now on run on the main thread; those handed over are taken back as they come. */
  private stop(): void {
    this.status = "stopped";
    this.worker = undefined;
    this.channel.close();
    this.settleReadiness(false);
  }
}
