// The checks of a long sync that need no state, made in batches on a thread of their own: the
// senders of a peer's bodies answer (sync/networkPeer.ts) and the proofs of work of a chunk's
// headers (sync/longSync.ts). The main thread of a syncing node is the whole sync's bottleneck
// (busy 97 % of a 10,000-block sync here); sender recovery was its largest single piece (1.4 s of
// 11) and the proofs of work the next (0.55 s). A batch goes over in one message and comes back in
// one; the main thread meanwhile imports the chunk before. The ring of node/recoveryOffload.ts
// serves single sends, answered in arrival order within a turn of the event loop; a batch of
// hundreds would not fit it, and its worker sleeps on shared memory, deaf to messages.
//
// The thread starts with the first batch, or earlier when asked (prepare(): a long sync begins),
// never keeps the process alive, and is closed with the chain's services. When it cannot start,
// fails or has stopped, batches are checked on the main thread with the same functions: nothing
// asked is lost, only slower.
import { Worker } from "node:worker_threads";
import type { Logger } from "../common/logger.js";
import { recoverSignerKeyIfAny, type RecoverableSignature, type SignatureBatchRecovery } from "../common/signatures.js";
import { checkMergedMiningProof, type MergedMiningProof, type MergedMiningProofBatchCheck, type MergedMiningProofCheck } from "../consensus/mergedMiningProof.js";
import { packSignatures, signerKeysBytes, unpackSignerKeys, type BatchCheckReply, type BatchCheckRequest } from "./batchChecksWire.js";
import { leftOrTerminated } from "./workerExit.js";

/** How long a closing thread has to leave before it is terminated. */
const closeGraceMs = 1_000;

/** A check leaves a few hundred bytes of young garbage and nothing that lives on. */
const workerYoungGenerationMiB = 1;

type PendingBatch =
  | { readonly kind: "signatures"; readonly signatures: readonly RecoverableSignature[]; resolve(keys: (Uint8Array | undefined)[]): void }
  | { readonly kind: "proofs"; readonly proofs: readonly MergedMiningProof[]; resolve(checks: MergedMiningProofCheck[]): void };

export class BatchCheckThread implements SignatureBatchRecovery, MergedMiningProofBatchCheck {
  private worker: Worker | undefined;
  /** Shared with the thread: set to 1 when it must leave. */
  private readonly closing = new Int32Array(new SharedArrayBuffer(4));
  private status: "unstarted" | "running" | "stopped" = "unstarted";
  private nextBatchId = 0;
  private readonly pending = new Map<number, PendingBatch>();
  private checkedHere = 0;

  constructor(private readonly log: Logger) {}

  recoverAll(signatures: readonly RecoverableSignature[]): Promise<(Uint8Array | undefined)[]> {
    if (signatures.length === 0) return Promise.resolve([]);
    return new Promise((resolve) => {
      const packed = packSignatures(signatures);
      this.send({ kind: "signatures", signatures, resolve }, (id) => ({ message: { kind: "signatures", id, input: packed.buffer }, transfer: [packed.buffer] }));
    });
  }

  checkAll(proofs: readonly MergedMiningProof[]): Promise<MergedMiningProofCheck[]> {
    if (proofs.length === 0) return Promise.resolve([]);
    return new Promise((resolve) => this.send({ kind: "proofs", proofs, resolve }, (id) => ({ message: { kind: "proofs", id, proofs }, transfer: [] })));
  }

  /**
   * Starts the thread ahead of the first batch (a long sync about to ask its first headers): some
   * 100 ms of a thread's start then pass while the requests are out, not after the first answer.
   */
  prepare(): void {
    if (this.status === "unstarted") this.start();
  }

  /** Items of batches checked on the main thread so far (the thread could not take them). */
  get checkedOnMainThread(): number {
    return this.checkedHere;
  }

  /**
   * Stops the thread; batches from then on, and those it had not answered, are checked here. The
   * thread is asked to leave (between two items of a batch) and terminated only if it has not
   * within a second: terminated during a native signature recovery, it can abort the process.
   * Answers how the thread ended ("none": it never started or had stopped already).
   */
  async close(): Promise<"left" | "terminated" | "none"> {
    const worker = this.worker;
    // Raised before the batches it had not answered are checked here (that takes a while): a
    // thread in a batch sees the flag at its next item, one waiting for messages gets the close.
    Atomics.store(this.closing, 0, 1);
    worker?.postMessage({ kind: "close" });
    this.stop();
    if (this.checkedHere > 0) this.log.debug({ checkedOnMainThread: this.checkedHere }, "batch checks done on the main thread");
    if (worker === undefined) return "none";
    // In the same turn as the request to leave (its exit cannot have come yet), and after the
    // checks above: the grace starts once this thread can see the exit.
    const ended = await leftOrTerminated(worker, closeGraceMs);
    if (ended === "terminated") this.log.warn({ graceMs: closeGraceMs }, "the batch-check thread did not leave when asked: terminated");
    return ended;
  }

  private send(batch: PendingBatch, request: (id: number) => { message: BatchCheckRequest; transfer: ArrayBuffer[] }): void {
    if (this.status === "unstarted") this.start();
    const worker = this.worker;
    if (worker === undefined) {
      this.checkHere(batch);
      return;
    }
    const id = this.nextBatchId++;
    this.pending.set(id, batch);
    const { message, transfer } = request(id);
    worker.postMessage(message, transfer);
  }

  private start(): void {
    let worker: Worker;
    try {
      worker = new Worker(new URL("./batchChecksWorker.js", import.meta.url), { workerData: this.closing.buffer, resourceLimits: { maxYoungGenerationSizeMb: workerYoungGenerationMiB } });
    } catch (error) {
      this.log.warn({ err: error }, "the batch-check thread cannot start; batches are checked on the main thread");
      this.stop();
      return;
    }
    worker.unref();
    worker.on("message", (reply: BatchCheckReply) => {
      const batch = this.pending.get(reply.id);
      if (batch === undefined) return;
      this.pending.delete(reply.id);
      // A reply that is not the batch's answer (a bug of the thread's) is checked here instead: a
      // throw in this listener would end the process and leave the batch unanswered.
      if (batch.kind === "signatures" && reply.kind === "signatures" && reply.output.byteLength === signerKeysBytes(batch.signatures.length)) batch.resolve(unpackSignerKeys(new Uint8Array(reply.output), batch.signatures.length));
      else if (batch.kind === "proofs" && reply.kind === "proofs" && reply.checks.length === batch.proofs.length) batch.resolve(reply.checks);
      else this.checkHere(batch);
    });
    worker.on("error", (error) => {
      this.log.error({ err: error }, "the batch-check thread failed; batches are checked on the main thread");
      this.stop();
    });
    worker.on("exit", () => {
      if (this.worker === worker) this.stop();
    });
    this.worker = worker;
    this.status = "running";
  }

  /** From now on batches are checked here, those in flight first. */
  private stop(): void {
    this.status = "stopped";
    this.worker = undefined;
    const unanswered = [...this.pending.values()];
    this.pending.clear();
    for (const batch of unanswered) this.checkHere(batch);
  }

  private checkHere(batch: PendingBatch): void {
    if (batch.kind === "signatures") {
      this.checkedHere += batch.signatures.length;
      batch.resolve(batch.signatures.map(recoverSignerKeyIfAny));
    } else {
      this.checkedHere += batch.proofs.length;
      batch.resolve(batch.proofs.map(checkMergedMiningProof));
    }
  }
}
