// Sender recovery of whole batches on a thread of their own: the transactions of a peer's bodies
// answer during a long sync (sync/networkPeer.ts). The main thread of a syncing node is the whole
// sync's bottleneck (busy 97 % of a 10,000-block sync here), and recovering senders was its largest
// single piece (1.4 s of 11). A batch goes over in one message and comes back in one; the main
// thread meanwhile imports the chunk before. The ring of node/recoveryOffload.ts serves single
// sends, answered in arrival order within a turn of the event loop; a batch of hundreds of
// signatures would not fit it, and its worker sleeps on shared memory, deaf to messages.
//
// The thread starts with the first batch, never keeps the process alive, and is closed with the
// chain's services. When it cannot start, fails or has stopped, batches are recovered on the main
// thread: nothing asked is lost, only slower.
import { Worker } from "node:worker_threads";
import type { Logger } from "../common/logger.js";
import { recoverSignerKeyIfAny, type RecoverableSignature, type SignatureBatchRecovery } from "../common/signatures.js";
import { packSignatures, unpackSignerKeys } from "./batchRecoveryWire.js";

/** A recovery leaves a few hundred bytes of young garbage and nothing that lives on. */
const workerYoungGenerationMiB = 1;

interface PendingBatch {
  readonly signatures: readonly RecoverableSignature[];
  resolve(keys: (Uint8Array | undefined)[]): void;
}

export class BatchRecoveryThread implements SignatureBatchRecovery {
  private worker: Worker | undefined;
  private status: "unstarted" | "running" | "stopped" = "unstarted";
  private nextBatchId = 0;
  private readonly pending = new Map<number, PendingBatch>();
  private recoveredHere = 0;

  constructor(private readonly log: Logger) {}

  recoverAll(signatures: readonly RecoverableSignature[]): Promise<(Uint8Array | undefined)[]> {
    if (signatures.length === 0) return Promise.resolve([]);
    if (this.status === "unstarted") this.start();
    const worker = this.worker;
    if (worker === undefined) return Promise.resolve(this.recoverHere(signatures));
    const id = this.nextBatchId++;
    return new Promise((resolve) => {
      this.pending.set(id, { signatures, resolve });
      const input = packSignatures(signatures);
      worker.postMessage({ id, input: input.buffer }, [input.buffer]);
    });
  }

  /** Signatures recovered on the main thread so far (the thread could not take them). */
  get recoveredOnMainThread(): number {
    return this.recoveredHere;
  }

  /** Stops the thread; batches from then on, and those it had not answered, are recovered here. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.stop();
    if (this.recoveredHere > 0) this.log.debug({ recoveredOnMainThread: this.recoveredHere }, "batch recoveries done on the main thread");
    await worker?.terminate();
  }

  private start(): void {
    let worker: Worker;
    try {
      worker = new Worker(new URL("./batchRecoveryWorker.js", import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: workerYoungGenerationMiB } });
    } catch (error) {
      this.log.warn({ err: error }, "the batch sender-recovery thread cannot start; senders are recovered on the main thread");
      this.stop();
      return;
    }
    worker.unref();
    worker.on("message", (reply: { id: number; output: ArrayBuffer }) => {
      const batch = this.pending.get(reply.id);
      if (batch === undefined) return;
      this.pending.delete(reply.id);
      batch.resolve(unpackSignerKeys(new Uint8Array(reply.output), batch.signatures.length));
    });
    worker.on("error", (error) => {
      this.log.error({ err: error }, "the batch sender-recovery thread failed; senders are recovered on the main thread");
      this.stop();
    });
    worker.on("exit", () => {
      if (this.worker === worker) this.stop();
    });
    this.worker = worker;
    this.status = "running";
  }

  /** From now on batches are recovered here, those in flight first. */
  private stop(): void {
    this.status = "stopped";
    this.worker = undefined;
    const unanswered = [...this.pending.values()];
    this.pending.clear();
    for (const batch of unanswered) batch.resolve(this.recoverHere(batch.signatures));
  }

  private recoverHere(signatures: readonly RecoverableSignature[]): (Uint8Array | undefined)[] {
    this.recoveredHere += signatures.length;
    return signatures.map(recoverSignerKeyIfAny);
  }
}
