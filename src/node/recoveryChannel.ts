// The memory the main thread and the sender-recovery thread (recoveryWorker.ts) share: a ring of
// slots, each holding one signature to recover and, once recovered, the signer's public key. No
// message crosses between the threads: the main thread writes a signature into a free slot and
// counts it as submitted; the worker, woken by that count, takes the slots in order, recovers and
// marks each one done. The main thread reads a slot when the transaction's turn comes, and never
// waits for a job the worker has not started: it takes such a slot back and recovers it itself.
//
// Slot states, and who moves them:
//   free --main--> queued --worker--> working --worker--> done | failed --main--> free
//   queued --main--> free (the main thread recovers it itself)
//   working --main, tired of waiting--> abandoned --worker--> free
import type { RecoverableSignature } from "../common/signatures.js";

const enum SlotState {
  Free = 0,
  Queued = 1,
  Working = 2,
  Done = 3,
  Failed = 4,
  Abandoned = 5,
}

/** More than the sends one turn of the event loop reads from 8 busy connections. */
const slotCount = 64;
const hashBytes = 32;
const rsBytes = 64;
const inputBytes = hashBytes + rsBytes + 1;
const keyBytes = 64;

/**
 * control[]: how many signatures were submitted (wrapping 32-bit); whether the worker is to stop;
 * and the word the worker sleeps on, which every submission and the close change (so neither can
 * slip in between the worker's last look and its sleep).
 */
const submittedIndex = 0;
const closingIndex = 1;
const wakeIndex = 2;
const controlInts = 3;

export class RecoveryChannel {
  private readonly control: Int32Array;
  private readonly states: Int32Array;
  private readonly inputs: Uint8Array;
  private readonly keys: Uint8Array;
  /** Main thread: the sequence number of the next submission. */
  private submitted = 0;

  /** The channel over `buffer` (from RecoveryChannel.allocate, on either thread). */
  constructor(readonly buffer: SharedArrayBuffer) {
    let offset = 0;
    this.control = new Int32Array(buffer, offset, controlInts);
    offset += controlInts * 4;
    this.states = new Int32Array(buffer, offset, slotCount);
    offset += slotCount * 4;
    this.inputs = new Uint8Array(buffer, offset, slotCount * inputBytes);
    offset += slotCount * inputBytes;
    this.keys = new Uint8Array(buffer, offset, slotCount * keyBytes);
  }

  static allocate(): RecoveryChannel {
    return new RecoveryChannel(new SharedArrayBuffer((controlInts + slotCount) * 4 + slotCount * (inputBytes + keyBytes)));
  }

  // --- main thread ---

  /**
   * Hands `signature` to the worker: answers its slot, or undefined when the next slot is still in
   * use (the main thread recovers this one itself).
   */
  submit(signature: RecoverableSignature): number | undefined {
    const slot = (this.submitted >>> 0) % slotCount;
    if (Atomics.load(this.states, slot) !== SlotState.Free) return undefined;
    const input = slot * inputBytes;
    this.inputs.set(signature.messageHash, input);
    this.inputs.set(signature.rs, input + hashBytes);
    this.inputs[input + hashBytes + rsBytes] = signature.recovery;
    Atomics.store(this.states, slot, SlotState.Queued);
    this.submitted = (this.submitted + 1) | 0;
    Atomics.store(this.control, submittedIndex, this.submitted);
    this.wakeWorker();
    return slot;
  }

  /**
   * The public key the worker recovered in `slot`, which the slot then gives up; undefined when the
   * main thread is to recover it itself: the worker had not started it, the signature has no signer
   * (the main thread's own recovery then throws the error), or the worker was still at it after
   * `waitLimitMs` (it lost its core, stopped or is stuck: the main thread's own recovery is then
   * the shorter wait).
   */
  take(slot: number, waitLimitMs: number): Uint8Array | undefined {
    let state = Atomics.compareExchange(this.states, slot, SlotState.Queued, SlotState.Free);
    if (state === SlotState.Queued) return undefined;
    if (state === SlotState.Working) {
      Atomics.wait(this.states, slot, SlotState.Working, waitLimitMs);
      state = Atomics.compareExchange(this.states, slot, SlotState.Working, SlotState.Abandoned);
      if (state === SlotState.Working) return undefined;
    }
    const key = state === SlotState.Done ? this.keys.slice(slot * keyBytes, (slot + 1) * keyBytes) : undefined;
    Atomics.store(this.states, slot, SlotState.Free);
    return key;
  }

  /** Tells the worker to stop after the recovery it is doing (the main thread takes back the rest). */
  close(): void {
    Atomics.store(this.control, closingIndex, 1);
    this.wakeWorker();
  }

  private wakeWorker(): void {
    Atomics.add(this.control, wakeIndex, 1);
    Atomics.notify(this.control, wakeIndex, 1);
  }

  // --- worker thread ---

  /** Recovers the submitted signatures with `recover` (the signer's 64-byte key) until closed. */
  serve(recover: (signature: RecoverableSignature) => Uint8Array): void {
    let next = 0;
    for (;;) {
      const wake = Atomics.load(this.control, wakeIndex);
      const submitted = Atomics.load(this.control, submittedIndex);
      if (Atomics.load(this.control, closingIndex) !== 0) return;
      while (next !== submitted) {
        if (Atomics.load(this.control, closingIndex) !== 0) return;
        const slot = (next >>> 0) % slotCount;
        next = (next + 1) | 0;
        // A slot the main thread took back, or refilled with a later submission (which is then
        // recovered now: any queued slot holds a signature waiting for its key).
        if (Atomics.compareExchange(this.states, slot, SlotState.Queued, SlotState.Working) !== SlotState.Queued) continue;
        const finished = this.recoverSlot(slot, recover) ? SlotState.Done : SlotState.Failed;
        if (Atomics.compareExchange(this.states, slot, SlotState.Working, finished) !== SlotState.Working) Atomics.store(this.states, slot, SlotState.Free);
        Atomics.notify(this.states, slot);
      }
      Atomics.wait(this.control, wakeIndex, wake);
    }
  }

  private recoverSlot(slot: number, recover: (signature: RecoverableSignature) => Uint8Array): boolean {
    const input = slot * inputBytes;
    const signature: RecoverableSignature = {
      messageHash: this.inputs.slice(input, input + hashBytes),
      rs: this.inputs.slice(input + hashBytes, input + hashBytes + rsBytes),
      recovery: this.inputs[input + hashBytes + rsBytes] === 0 ? 0 : 1,
    };
    try {
      this.keys.set(recover(signature), slot * keyBytes);
      return true;
    } catch {
      return false;
    }
  }
}
