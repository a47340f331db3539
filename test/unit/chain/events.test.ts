// Head listeners: called in subscription order; one that throws reports to its own reporter and
// does not stop the others; unsubscribing stops the calls.
import { expect } from "chai";
import { ChainHeadListeners, type BlockWithReceipts, type ChainHeadListener } from "../../../src/chain/events.js";

describe("chain/events", () => {
  it("notifies every listener in order, isolates a failing one, and unsubscribes", () => {
    const listeners = new ChainHeadListeners();
    const calls: string[] = [];
    const reported: unknown[] = [];
    const recorder = (name: string): ChainHeadListener => ({
      blocksAdded: (blocks) => calls.push(`${name} added ${blocks.length}`),
      blocksRemoved: (blocks) => calls.push(`${name} removed ${blocks.length}`),
    });
    const failing: ChainHeadListener = {
      blocksAdded: () => {
        throw new Error("listener broke");
      },
      blocksRemoved: () => undefined,
    };
    const unsubscribeFirst = listeners.subscribe(recorder("first"), () => undefined);
    listeners.subscribe(failing, (error) => reported.push(error));
    listeners.subscribe(recorder("last"), () => undefined);
    const blocks = [{}, {}] as unknown as BlockWithReceipts[];
    listeners.notifyBlocksAdded(blocks);
    listeners.notifyBlocksRemoved(blocks.slice(1));
    unsubscribeFirst();
    listeners.notifyBlocksAdded(blocks.slice(1));
    expect(calls).to.deep.equal(["first added 2", "last added 2", "first removed 1", "last removed 1", "last added 1"]);
    expect(reported.map((error) => (error as Error).message)).to.deep.equal(["listener broke", "listener broke"]);
  });
});
