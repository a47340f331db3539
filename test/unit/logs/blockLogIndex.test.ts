// The recent-block log index against a stand-in chain: filled by added blocks and by reads inside
// the window, slid as the head advances, shrunk to its log budget, and emptied of removed blocks.
import { expect } from "chai";
import type { Block } from "../../../src/chain/block.js";
import type { BlockWithReceipts, ChainHeadListener } from "../../../src/chain/events.js";
import type { ChainReceipt } from "../../../src/chain/receipts.js";
import { BlockLogIndex, heldWithoutLogs, type BlockLogs } from "../../../src/logs/index.js";

/** The held record of block `number`, which must have logs. */
function heldLogs(index: BlockLogIndex, number: bigint): BlockLogs {
  const held = index.held(number);
  if (held === undefined || held === heldWithoutLogs) throw new Error(`block ${number} is not held with its logs`);
  return held;
}

/** A block of `logCount` logs in one transaction (or none), with a hash derived from `variant`. */
function blockWith(number: bigint, logCount: number, variant = 0): BlockWithReceipts {
  const logs = Array.from({ length: logCount }, () => ({ address: new Uint8Array(20), topics: [], data: new Uint8Array() }));
  const receipts: ChainReceipt[] = logCount === 0 ? [] : [{ success: true, gasUsed: 0n, cumulativeGasUsed: 0n, logsBloom: new Uint8Array(256), logs, contractAddress: undefined }];
  const hash = new Uint8Array(32).fill(variant);
  hash[0] = Number(number);
  const block = { number, hash, header: { fields: { logsBloom: new Uint8Array(256) } }, transactions: receipts.map(() => ({ hash })) } as unknown as Block;
  return { block, receipts };
}

/** A block whose receipts are missing: blockLogsOf throws on it. */
function unindexableBlock(number: bigint): BlockWithReceipts {
  return { block: blockWith(number, 1).block, receipts: undefined as unknown as ChainReceipt[] };
}

/** A chain of its genesis block (no logs) until blocks are set or added. */
class StandInChain {
  listener: ChainHeadListener | undefined;
  readonly blocks = new Map<bigint, BlockWithReceipts>([[0n, blockWith(0n, 0)]]);
  reads = 0;
  /** Reads of any kind, and what to do once read number `at` has its answer (before its caller goes on). */
  allReads = 0;
  afterRead: { at: number; run: () => void } | undefined;
  headNumber = 0n;
  get head() {
    return this.blocks.get(this.headNumber)!.block;
  }
  async getBlockByNumber(number: bigint) {
    this.reads++;
    return this.answered(number <= this.headNumber ? this.blocks.get(number)?.block : undefined);
  }
  /** Blocks whose receipts are gone from the store. */
  readonly receiptsGone = new Set<bigint>();
  async getReceipts(hash: Uint8Array) {
    const entry = [...this.blocks.values()].find(({ block }) => Buffer.compare(block.hash, hash) === 0);
    return this.answered(entry === undefined || this.receiptsGone.has(entry.block.number) ? undefined : (entry.receipts as ChainReceipt[]));
  }
  async getCanonicalHash(number: bigint) {
    return this.answered(number <= this.headNumber ? this.blocks.get(number)?.block.hash : undefined);
  }
  private answered<T>(answer: T): T {
    this.allReads++;
    if (this.afterRead?.at === this.allReads) this.afterRead.run();
    return answer;
  }
  subscribeHead(listener: ChainHeadListener) {
    this.listener = listener;
    return () => (this.listener = undefined);
  }
  /** Goes back to block `number` as evm_revert does: the head first, then the listener. */
  revertTo(number: bigint) {
    const removed = [...this.blocks.values()].filter(({ block }) => block.number > number).reverse();
    for (const { block } of removed) this.blocks.delete(block.number);
    this.headNumber = number;
    this.listener?.blocksRemoved(removed);
  }
  /** Appends blocks and tells the listener, as Chain.writeBatch does. */
  add(...added: BlockWithReceipts[]) {
    for (const entry of added) this.blocks.set(entry.block.number, entry);
    this.headNumber = added.at(-1)!.block.number;
    this.listener?.blocksAdded(added);
  }
}

describe("logs/blockLogIndex", () => {
  it("holds added blocks, reads older ones once inside the window, and slides the window with the head", async () => {
    const chain = new StandInChain();
    for (let number = 1n; number <= 3n; number++) chain.blocks.set(number, blockWith(number, 1));
    chain.headNumber = 3n;
    const index = new BlockLogIndex(chain, () => undefined, { maxBlocks: 3, maxLogs: 100, preparationIdleMs: 0 });
    expect((await index.canonical(1n))!.logCount).to.equal(1);
    expect(await index.canonical(1n)).to.equal(await index.canonical(1n));
    expect(chain.reads).to.equal(1);
    // Block 0 is below the window (3 - 3): read every time.
    await index.canonical(0n);
    await index.canonical(0n);
    expect(chain.reads).to.equal(3);
    chain.add(blockWith(4n, 2), blockWith(5n, 1));
    expect(heldLogs(index, 5n).logCount).to.equal(1);
    expect(heldLogs(index, 4n).transactions[0]!.logs).to.have.length(2);
    expect(index.held(1n)).to.equal(undefined);
    expect(index.held(2n)).to.equal(undefined);
    expect(await index.canonical(6n)).to.equal(undefined);
    index.close();
    expect(chain.listener).to.equal(undefined);
  });

  it("drops its oldest blocks when over the log budget, and does not take reads that would not fit", async () => {
    const chain = new StandInChain();
    const index = new BlockLogIndex(chain, () => undefined, { maxBlocks: 100, maxLogs: 5, preparationIdleMs: 0 });
    chain.add(blockWith(1n, 2));
    chain.add(blockWith(2n, 2));
    chain.add(blockWith(3n, 2));
    expect(index.held(1n)).to.equal(undefined);
    expect(heldLogs(index, 2n).logCount).to.equal(2);
    expect(heldLogs(index, 3n).logCount).to.equal(2);
    // Block 1 is below the raised floor now: served, not held.
    expect((await index.canonical(1n))!.logCount).to.equal(2);
    expect(index.held(1n)).to.equal(undefined);
    index.close();
  });

  it("forgets removed blocks, so the replacement at the same height is read from the chain", async () => {
    const chain = new StandInChain();
    const index = new BlockLogIndex(chain, () => undefined, { maxBlocks: 10, maxLogs: 100, preparationIdleMs: 0 });
    const original = blockWith(1n, 1);
    chain.add(original);
    chain.listener!.blocksRemoved([blockWith(1n, 1, 9)]); // another block at the same height: nothing happens
    expect(index.held(1n)).to.not.equal(undefined);
    chain.listener!.blocksRemoved([original]);
    expect(index.held(1n)).to.equal(undefined);
    const replacement = blockWith(1n, 3, 7);
    chain.blocks.set(1n, replacement);
    expect((await index.canonical(1n))!.hash).to.deep.equal(replacement.block.hash);
    expect(heldLogs(index, 1n).logCount).to.equal(3);
    index.close();
  });

  it("holds a block without logs by its number, and answers it without reading the chain", async () => {
    const chain = new StandInChain();
    const index = new BlockLogIndex(chain, () => undefined, { maxBlocks: 10, maxLogs: 100, preparationIdleMs: 0 });
    const empty = blockWith(1n, 0);
    chain.add(empty, blockWith(2n, 1));
    expect(index.held(1n)).to.equal(heldWithoutLogs);
    expect(index.size).to.equal(2);
    const answered = (await index.canonical(1n))!;
    expect([answered.number, answered.logCount, answered.transactions]).to.deep.equal([1n, 0, []]);
    expect(answered.hash).to.deep.equal(empty.block.hash);
    expect(chain.reads).to.equal(0);
    chain.listener!.blocksRemoved([empty]);
    expect(index.held(1n)).to.equal(undefined);
    index.close();
  });

  it("indexes added blocks after the turn that added them, reporting a failure then", async () => {
    const chain = new StandInChain();
    const failures: unknown[] = [];
    const index = new BlockLogIndex(chain, (error) => failures.push(error), { maxBlocks: 10, maxLogs: 100, preparationIdleMs: 0 });
    chain.add(unindexableBlock(1n));
    expect(failures).to.have.length(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(failures).to.have.length(1);
    // The next blocks are indexed as usual.
    chain.add(blockWith(2n, 2));
    expect(heldLogs(index, 2n).logCount).to.equal(2);
    // A read that flushes a block that cannot be indexed still answers; the block beside it is held.
    chain.add(unindexableBlock(3n), blockWith(4n, 1));
    expect(index.held(3n)).to.equal(undefined);
    expect(failures).to.have.length(2);
    expect(heldLogs(index, 4n).logCount).to.equal(1);
    index.close();
  });

  it("prepares the blocks indexed with logs in the turns after, in order, a bounded number of logs per turn, skipping blocks that left", async () => {
    const chain = new StandInChain();
    const failures: unknown[] = [];
    const index = new BlockLogIndex(chain, (error) => failures.push(error), { maxBlocks: 10_000, maxLogs: 100_000, preparationIdleMs: 0 });
    const prepared: BlockLogs[] = [];
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    index.setPreparation((logs) => {
      if (logs.number === 4n) throw new Error("cannot prepare block 4");
      prepared.push(logs);
    });
    const reverted = blockWith(3n, 1);
    chain.add(blockWith(1n, 1), blockWith(2n, 0), reverted, blockWith(4n, 1));
    expect(prepared).to.have.length(0);
    // Block 3 leaves before its turn; block 3 mined again is prepared; a block without logs never.
    chain.revertTo(2n);
    chain.add(blockWith(3n, 2, 5), blockWith(4n, 1, 5), blockWith(5n, 1));
    for (let waited = 0; waited < 5; waited++) await turn();
    expect(prepared.map((logs) => logs.number)).to.deep.equal([1n, 3n, 5n]);
    expect(prepared[0]).to.equal(heldLogs(index, 1n));
    expect(prepared[1]).to.equal(heldLogs(index, 3n));
    expect(failures).to.have.length(1);
    // 3,000 logs over 3 blocks: one block a turn (500 logs at most, and at least one block).
    prepared.length = 0;
    chain.add(blockWith(6n, 1_000), blockWith(7n, 1_000), blockWith(8n, 1_000));
    await turn();
    await turn();
    expect(prepared.map((logs) => logs.number)).to.deep.equal([6n]);
    for (let waited = 0; waited < 5; waited++) await turn();
    expect(prepared.map((logs) => logs.number)).to.deep.equal([6n, 7n, 8n]);
    // Closed: nothing more is prepared.
    chain.add(blockWith(9n, 1));
    index.close();
    for (let waited = 0; waited < 3; waited++) await turn();
    expect(prepared).to.have.length(3);
  });

  it("prepares nothing while blocks keep coming, and all of them once none came for the idle time", async () => {
    const chain = new StandInChain();
    const index = new BlockLogIndex(chain, () => undefined, { maxBlocks: 10_000, maxLogs: 100_000, preparationIdleMs: 100 });
    const prepared: bigint[] = [];
    index.setPreparation((logs) => prepared.push(logs.number));
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // A block every 10 ms for 150 ms: never 100 ms without one.
    for (let number = 1n; number <= 15n; number++) {
      chain.add(blockWith(number, 1));
      await sleep(10);
    }
    expect(prepared, "during the burst").to.deep.equal([]);
    const deadline = Date.now() + 2_000;
    while (prepared.length < 15 && Date.now() < deadline) await sleep(10);
    expect(prepared).to.deep.equal(Array.from({ length: 15 }, (_, index) => BigInt(index + 1)));
    index.close();
  });

  it("follows the head down after a revert, holds the blocks mined again, and lets them go as the head moves on", async () => {
    const chain = new StandInChain();
    const index = new BlockLogIndex(chain, () => undefined, { maxBlocks: 2, maxLogs: 100, preparationIdleMs: 0 });
    const first = [1n, 2n, 3n, 4n, 5n].map((number) => blockWith(number, 1));
    chain.add(...first);
    expect([4n, 5n].map((number) => heldLogs(index, number).logCount)).to.deep.equal([1, 1]);
    chain.revertTo(1n);
    expect(index.size).to.equal(0);
    const again = blockWith(2n, 3, 7);
    chain.add(again);
    expect(heldLogs(index, 2n).hash).to.deep.equal(again.block.hash);
    chain.add(...[3n, 4n, 5n, 6n].map((number) => blockWith(number, 1, 7)));
    expect(index.held(2n)).to.equal(undefined);
    expect(index.size).to.equal(2);
    index.close();
  });

  it("reads again when a revert overtakes its reads, and does not hold the block read before it, whichever read it came after", async () => {
    /** A chain of blocks 1-3 (one log each) whose index has not held block 2 yet. */
    const chainOfThree = () => {
      const chain = new StandInChain();
      for (let number = 1n; number <= 3n; number++) chain.blocks.set(number, blockWith(number, 1));
      chain.headNumber = 3n;
      return chain;
    };
    const unhindered = chainOfThree();
    const unhinderedIndex = new BlockLogIndex(unhindered, () => undefined, { maxBlocks: 10, maxLogs: 100, preparationIdleMs: 0 });
    await unhinderedIndex.canonical(2n);
    expect(heldLogs(unhinderedIndex, 2n).logCount).to.equal(1);
    unhinderedIndex.close();
    const readsOfOneBlock = unhindered.allReads;
    expect(readsOfOneBlock).to.be.greaterThan(0);

    for (let revertAfter = 1; revertAfter <= readsOfOneBlock; revertAfter++) {
      const when = `revert after read ${revertAfter}`;
      // The listener told within the read: answered as the chain is after the revert.
      const chain = chainOfThree();
      const index = new BlockLogIndex(chain, () => undefined, { maxBlocks: 10, maxLogs: 100, preparationIdleMs: 0 });
      chain.afterRead = { at: revertAfter, run: () => chain.revertTo(1n) };
      expect(await index.canonical(2n), when).to.equal(undefined);
      expect(index.held(2n), when).to.equal(undefined);
      index.close();

      // As Chain.revert goes: the receipts gone from the store within the read, the head moved and
      // the listener told a turn later. Answered as before or after the revert, never failed, and
      // not held after it.
      const lateChain = chainOfThree();
      const lateIndex = new BlockLogIndex(lateChain, () => undefined, { maxBlocks: 10, maxLogs: 100, preparationIdleMs: 0 });
      let reverted: Promise<void> | undefined;
      lateChain.afterRead = {
        at: revertAfter,
        run: () => {
          lateChain.receiptsGone.add(2n).add(3n);
          reverted = new Promise((resolve) => setImmediate(() => resolve(lateChain.revertTo(1n))));
        },
      };
      const answered = await lateIndex.canonical(2n);
      expect(answered === undefined || answered.logCount === 1, when).to.equal(true);
      await reverted;
      expect(lateIndex.held(2n), when).to.equal(undefined);
      lateIndex.close();
    }
  });
});
