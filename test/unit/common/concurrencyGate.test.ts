import { expect } from "chai";
import { ConcurrencyGate, GateWaitTimeoutError } from "../../../src/common/concurrencyGate.js";

/** A piece of work that runs until `finish` is called. */
function heldWork(started: string[], name: string): { work: () => Promise<string>; finish: () => void } {
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  return {
    work: async () => {
      started.push(name);
      await finished;
      return name;
    },
    finish: () => finish(),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("common/concurrencyGate", () => {
  it("runs N at once and starts the N+1st, in arrival order, when one finishes", async () => {
    const gate = new ConcurrencyGate(2);
    const started: string[] = [];
    const pieces = ["a", "b", "c", "d"].map((name) => heldWork(started, name));
    const results = pieces.map((piece) => gate.run(performance.now() + 10_000, piece.work));
    await tick();
    expect(started).to.deep.equal(["a", "b"]);
    pieces[1]!.finish();
    await tick();
    expect(started).to.deep.equal(["a", "b", "c"]);
    pieces[0]!.finish();
    await tick();
    expect(started).to.deep.equal(["a", "b", "c", "d"]);
    pieces[2]!.finish();
    pieces[3]!.finish();
    expect(await Promise.all(results)).to.deep.equal(["a", "b", "c", "d"]);
  });

  it("gives up on a waiter whose deadline passes first, and keeps its place for no one", async () => {
    const gate = new ConcurrencyGate(1);
    const started: string[] = [];
    const first = heldWork(started, "first");
    const running = gate.run(performance.now() + 10_000, first.work);
    const late = gate.run(performance.now() + 20, heldWork(started, "late").work);
    let lateError: unknown;
    await late.catch((error: unknown) => (lateError = error));
    expect(lateError).to.be.instanceOf(GateWaitTimeoutError);
    first.finish();
    await running;
    const next = heldWork(started, "next");
    const after = gate.run(performance.now() + 10_000, next.work);
    await tick();
    next.finish();
    expect(await after).to.equal("next");
    expect(started).to.deep.equal(["first", "next"]);
  });

  it("frees the place of work that fails", async () => {
    const gate = new ConcurrencyGate(1);
    let failure: unknown;
    await gate.run(performance.now() + 1_000, () => Promise.reject(new Error("broken"))).catch((error: unknown) => (failure = error));
    expect((failure as Error).message).to.equal("broken");
    expect(await gate.run(performance.now() + 1_000, () => Promise.resolve("ran"))).to.equal("ran");
  });
});
