// Sender recovery on a second thread: signatures submitted together are recovered by the worker,
// answered in order with exactly the main thread's keys and refusals; the channel gives back what
// the worker has not started, waits for what it has, and gives up on a worker that does not finish.
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { Worker } from "node:worker_threads";
import { createLogger } from "../../../src/common/logger.js";
import { recoverSignerKey } from "../../../src/common/signatures.js";
import { RecoveryChannel } from "../../../src/node/recoveryChannel.js";
import { RecoveryOffload } from "../../../src/node/recoveryOffload.js";
import { randomSignatures, withoutSigner } from "../../helpers/signatures.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** Blocks this thread for `ms` (the worker goes on meanwhile). */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The key `recover` gives, or its refusal's message. */
async function outcome(recover: () => Uint8Array | Promise<Uint8Array>): Promise<string> {
  try {
    return hex(await recover());
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

describe("node/recoveryOffload: sender recovery on a second thread", function () {
  this.timeout(20_000);
  let offload: RecoveryOffload;

  beforeEach(async () => {
    offload = new RecoveryOffload(createLogger("error"));
    offload.start();
    expect(await offload.ready, "the worker serves").to.equal(true);
  });
  afterEach(() => offload.close());

  it("recovers on the worker the signatures after the first of a turn, and answers each in order with the main thread's key", async () => {
    const submitted = randomSignatures(40, 1);
    const answeredOrder: number[] = [];
    const recoveries = submitted.map((signature, index) => offload.recover(signature).then((key) => (answeredOrder.push(index), key)));
    // The turn goes on for a while: the worker recovers what it was given.
    blockFor(300);
    const keys = await Promise.all(recoveries);
    expect(keys.map(hex)).to.deep.equal(submitted.map((signature) => hex(recoverSignerKey(signature))));
    expect(answeredOrder).to.deep.equal(submitted.map((_, index) => index));
    expect(offload.recoveryCounts).to.deep.equal({ byWorker: 39, onMainThread: 1 });
  });

  it("recovers a send that comes alone on the main thread", async () => {
    for (const signature of randomSignatures(5, 2)) expect(hex(await offload.recover(signature))).to.equal(hex(recoverSignerKey(signature)));
    expect(offload.recoveryCounts).to.deep.equal({ byWorker: 0, onMainThread: 5 });
  });

  it("refuses a signature without a signer as the main thread does, between others it recovers", async () => {
    const submitted = randomSignatures(6, 3);
    submitted.splice(3, 0, withoutSigner(randomSignatures(1, 99)[0]!));
    const recoveries = submitted.map((signature) => outcome(() => offload.recover(signature)));
    blockFor(200);
    const expected = await Promise.all(submitted.map((signature) => outcome(() => recoverSignerKey(signature))));
    expect(expected[3]).to.match(/^refused: /);
    expect(await Promise.all(recoveries)).to.deep.equal(expected);
    // The worker's failure is recovered again on the main thread, which gives the refusal.
    expect(offload.recoveryCounts).to.deep.equal({ byWorker: 5, onMainThread: 2 });
  });

  it("answers on the main thread what the worker held when it was closed, in order, and every recovery after", async () => {
    const submitted = randomSignatures(31, 4);
    const answeredOrder: number[] = [];
    const recover = (index: number) => offload.recover(submitted[index]!).then((key) => (answeredOrder.push(index), key));
    const recoveries = submitted.slice(0, 30).map((_, index) => recover(index));
    const closed = offload.close();
    // Asked for after the close, while the others still wait for their turn: answered after them.
    recoveries.push(recover(30));
    const keys = await Promise.all(recoveries);
    await closed;
    expect(keys.map(hex)).to.deep.equal(submitted.map((signature) => hex(recoverSignerKey(signature))));
    expect(answeredOrder).to.deep.equal(submitted.map((_, index) => index));
    const [later] = randomSignatures(1, 5);
    expect(hex(await offload.recover(later!))).to.equal(hex(recoverSignerKey(later!)));
    const { byWorker, onMainThread } = offload.recoveryCounts;
    expect(byWorker + onMainThread).to.equal(32);
    expect(onMainThread).to.be.greaterThan(1);
  });
  it("recovers ahead on the worker what a batch will send, reads each key once, and lets the rest go", () => {
    const submitted = randomSignatures(10, 9);
    const ahead = submitted.map((signature) => offload.recoverAhead(signature)!);
    expect(ahead.every((recovery) => recovery !== undefined), "each handed over").to.equal(true);
    blockFor(200);
    const read = ahead.slice(0, 6).map((recovery) => hex(recovery.key()));
    expect(read).to.deep.equal(submitted.slice(0, 6).map((signature) => hex(recoverSignerKey(signature))));
    expect(() => ahead[0]!.key()).to.throw(/read once/);
    for (const recovery of ahead.slice(6)) recovery.release();
    expect(offload.recoveryCounts).to.deep.equal({ byWorker: 6, onMainThread: 0 });
    // The released slots serve again: a full ring's worth is handed over after them.
    const more = randomSignatures(64, 10).map((signature) => offload.recoverAhead(signature));
    expect(more.every((recovery) => recovery !== undefined), "all 64 slots free").to.equal(true);
    expect(offload.recoverAhead(submitted[0]!), "the ring is full").to.equal(undefined);
    for (const recovery of more) recovery!.release();
  });

  it("refuses ahead a signature without a signer as the main thread does", async () => {
    const withNone = withoutSigner(randomSignatures(1, 11)[0]!);
    const recovery = offload.recoverAhead(withNone)!;
    blockFor(100);
    const refusal = await outcome(() => recovery.key());
    expect(refusal).to.match(/^refused: /);
    expect(refusal).to.equal(await outcome(() => recoverSignerKey(withNone)));
  });

  it("answers every recovery when the worker dies under it, and recovers on the main thread from then on", async () => {
    const submitted = randomSignatures(20, 7);
    const worker = (offload as unknown as { worker: Worker }).worker;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    const recoveries = submitted.map((signature) => offload.recover(signature));
    // Killed with slots queued and perhaps one under way (abandoned after the wait limit).
    const killed = worker.terminate();
    const keys = await Promise.all(recoveries);
    await killed;
    await exited;
    expect(keys.map(hex)).to.deep.equal(submitted.map((signature) => hex(recoverSignerKey(signature))));
    const before = offload.recoveryCounts.onMainThread;
    const [later] = randomSignatures(1, 8);
    expect(hex(await offload.recover(later!))).to.equal(hex(recoverSignerKey(later!)));
    expect(offload.recoveryCounts.onMainThread).to.equal(before + 1);
  });
});

describe("node/recoveryChannel: the slots the two threads share", function () {
  this.timeout(20_000);
  const [signature] = randomSignatures(1, 6);

  /**
   * A worker serving `channel` with a stand-in recovery that takes `delayMs`: the key is 64 copies
   * of the hash's first byte. `started` counts the recoveries it has begun.
   */
  function slowWorker(channel: RecoveryChannel, delayMs: number): { worker: Worker; started: Int32Array; exited: Promise<void> } {
    const channelModule = new URL("../../../src/node/recoveryChannel.js", import.meta.url).href;
    const started = new Int32Array(new SharedArrayBuffer(4));
    const source = `
      const { workerData } = require("node:worker_threads");
      import(${JSON.stringify(channelModule)}).then(({ RecoveryChannel }) => {
        new RecoveryChannel(workerData.buffer).serve((signature) => {
          Atomics.add(workerData.started, 0, 1);
          Atomics.notify(workerData.started, 0);
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.delayMs);
          return new Uint8Array(64).fill(signature.messageHash[0]);
        });
      });`;
    const worker = new Worker(source, { eval: true, workerData: { buffer: channel.buffer, started, delayMs } });
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    return { worker, started, exited };
  }

  /** Blocks until `started` reaches `count` (false after 5 s). */
  function waitUntilStarted(started: Int32Array, count: number): boolean {
    const deadline = performance.now() + 5_000;
    for (let seen = Atomics.load(started, 0); seen < count; seen = Atomics.load(started, 0)) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      Atomics.wait(started, 0, seen, left);
    }
    return true;
  }

  it("gives back to the main thread a slot no worker has started, and takes no more than it has slots", () => {
    const channel = RecoveryChannel.allocate();
    const slot = channel.submit(signature!);
    expect(slot).to.be.a("number");
    expect(channel.take(slot!, 10)).to.equal(undefined);
    const slots = Array.from({ length: 64 }, () => channel.submit(signature!));
    expect(slots.every((each) => each !== undefined)).to.equal(true);
    expect(channel.submit(signature!), "the ring is full").to.equal(undefined);
    for (const each of slots) channel.take(each!, 10);
    expect(channel.submit(signature!)).to.be.a("number");
  });

  it("waits for a recovery under way, and gives up on one that takes longer than the limit", async () => {
    const channel = RecoveryChannel.allocate();
    const { worker, started, exited } = slowWorker(channel, 100);
    try {
      const first = channel.submit({ ...signature!, messageHash: new Uint8Array(32).fill(7) })!;
      expect(waitUntilStarted(started, 1), "the worker took the first").to.equal(true);
      const waited = channel.take(first, 2_000);
      expect(waited === undefined ? undefined : [...new Set(waited)]).to.deep.equal([7]);

      const second = channel.submit({ ...signature!, messageHash: new Uint8Array(32).fill(8) })!;
      expect(waitUntilStarted(started, 2), "the worker took the second").to.equal(true);
      const askedAt = performance.now();
      expect(channel.take(second, 10), "abandoned").to.equal(undefined);
      expect(performance.now() - askedAt).to.be.lessThan(90);
      // The worker stops after the recovery it is doing, and frees the abandoned slot first.
      channel.close();
      await exited;
      const slots = Array.from({ length: 64 }, () => channel.submit(signature!));
      expect(slots.every((each) => each !== undefined), "every slot is free again").to.equal(true);
    } finally {
      channel.close();
      await worker.terminate();
    }
  });
});

describe("node/recoveryOffload: closing", function () {
  this.timeout(20_000);

  it("keeps a process with nothing else open alive until the worker is gone, so the code after the close runs", async () => {
    // A child process whose only handle is the worker: before the fix it left in the middle of the close.
    const module = new URL("../../../src/node/recoveryOffload.js", import.meta.url).href;
    const logger = new URL("../../../src/common/logger.js", import.meta.url).href;
    const script = `
      const { RecoveryOffload } = await import(${JSON.stringify(module)});
      const { createLogger } = await import(${JSON.stringify(logger)});
      const offload = new RecoveryOffload(createLogger("error"));
      offload.start();
      await offload.ready;
      await offload.close();
      process.stdout.write("closed");
    `;
    const directory = await mkdtemp(join(tmpdir(), "chain-node-recovery-close-"));
    try {
      const file = join(directory, "close.mjs");
      await writeFile(file, script);
      const run = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 15_000 });
      expect([run.status, run.stdout], run.stderr).to.deep.equal([0, "closed"]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
