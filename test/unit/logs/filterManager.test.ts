// The filter manager against a stand-in chain and pool: delivery of added and removed blocks, block
// and pending-transaction hashes, expiry on a fake clock, and listener failures.
import { expect } from "chai";
import { Bloom } from "@ethereumjs/vm";
import type { Block } from "../../../src/chain/block.js";
import type { BlockWithReceipts, ChainHeadListener } from "../../../src/chain/events.js";
import type { ChainLog, ChainReceipt } from "../../../src/chain/receipts.js";
import type { ChainTransaction } from "../../../src/chain/transactions.js";
import type { PendingTransactionsListener } from "../../../src/txpool/transactionPool.js";
import {
  FilterManager,
  LogMatcher,
  maxChangesHeld,
  maxChangesPerFilter,
  maxInstalledFilters,
  TooManyFiltersError,
  type FilterChanges,
  type LocatedLog,
} from "../../../src/logs/index.js";

const emitter = new Uint8Array(20).fill(1);
const A = new Uint8Array(32).fill(0xa);
const B = new Uint8Array(32).fill(0xb);

/** A block with one transaction per entry of `logsPerTransaction`; only the fields the logs module reads. */
function blockWith(number: bigint, logsPerTransaction: ChainLog[][]): BlockWithReceipts {
  const blockBloom = new Bloom();
  const receipts: ChainReceipt[] = logsPerTransaction.map((logs) => {
    const bloom = new Bloom();
    for (const { address, topics } of logs) for (const value of [address, ...topics]) (bloom.add(value), blockBloom.add(value));
    return { success: true, gasUsed: 0n, cumulativeGasUsed: 0n, logsBloom: bloom.bitvector, logs, contractAddress: undefined };
  });
  const hash = new Uint8Array(32).fill(Number(number));
  const block = { number, hash, header: { fields: { logsBloom: blockBloom.bitvector } }, transactions: receipts.map(() => ({ hash })) } as unknown as Block;
  return { block, receipts };
}

function logWith(...topics: Uint8Array[]): ChainLog {
  return { address: emitter, topics, data: new Uint8Array() };
}

class StandIns {
  chainListener: ChainHeadListener | undefined;
  poolListener: PendingTransactionsListener | undefined;
  readonly chain = { subscribeHead: (listener: ChainHeadListener) => ((this.chainListener = listener), () => (this.chainListener = undefined)) };
  readonly pool = { subscribePending: (listener: PendingTransactionsListener) => ((this.poolListener = listener), () => (this.poolListener = undefined)) };
  clock = 0;
  readonly errors: unknown[] = [];
  manager(timeoutMs = 1000): FilterManager {
    return new FilterManager(this.chain, this.pool, { filterTimeoutMs: timeoutMs, now: () => this.clock, reportError: (error) => this.errors.push(error) });
  }
}

function placesOf(changes: FilterChanges | undefined): [bigint, number, number, boolean][] {
  expect(changes?.kind).to.equal("logs");
  return (changes as unknown as { logs: LocatedLog[] }).logs.map((log) => [log.block.number, log.transaction.index, log.logIndex, log.removed]);
}

function hashChanges(changes: FilterChanges | undefined): Extract<FilterChanges, { kind: "hashes" }> {
  expect(changes?.kind).to.equal("hashes");
  return changes as Extract<FilterChanges, { kind: "hashes" }>;
}

describe("logs/filterManager", () => {
  it("delivers the matching logs of added blocks once, with their index in the block", () => {
    const standIns = new StandIns();
    const manager = standIns.manager();
    const id = manager.installLogFilter({ matcher: new LogMatcher({ addresses: [emitter], topics: [[A]] }), from: { kind: "head" }, to: { kind: "head" } });
    standIns.chainListener!.blocksAdded([blockWith(1n, [[logWith(B), logWith(A)], [logWith(A, B)]]), blockWith(2n, [[logWith(B)]])]);
    expect(placesOf(manager.takeChanges(id))).to.deep.equal([
      [1n, 0, 1, false],
      [1n, 1, 2, false],
    ]);
    expect(placesOf(manager.takeChanges(id))).to.deep.equal([]);
    manager.close();
  });

  it("reports the logs of removed blocks with removed = true, after the logs delivered before, within the filter's bounds", () => {
    const standIns = new StandIns();
    const manager = standIns.manager();
    const matcher = new LogMatcher({ addresses: [], topics: [[A]] });
    const id = manager.installLogFilter({ matcher, from: { kind: "head" }, to: { kind: "head" } });
    const bounded = manager.installLogFilter({ matcher, from: { kind: "number", number: 2n }, to: { kind: "head" } });
    const blocks = manager.installBlockFilter();
    const one = blockWith(1n, [[logWith(A)]]);
    const two = blockWith(2n, [[logWith(B)], [logWith(A), logWith(A)]]);
    standIns.chainListener!.blocksAdded([one, two]);
    expect(placesOf(manager.takeChanges(id))).to.deep.equal([
      [1n, 0, 0, false],
      [2n, 1, 1, false],
      [2n, 1, 2, false],
    ]);
    standIns.chainListener!.blocksRemoved([two, one]);
    const replacement = blockWith(2n, [[logWith(A)]]);
    standIns.chainListener!.blocksAdded([replacement]);
    expect(placesOf(manager.takeChanges(id))).to.deep.equal([
      [2n, 1, 1, true],
      [2n, 1, 2, true],
      [1n, 0, 0, true],
      [2n, 0, 0, false],
    ]);
    expect(placesOf(manager.takeChanges(bounded))).to.deep.equal([
      [2n, 1, 1, false],
      [2n, 1, 2, false],
      [2n, 1, 1, true],
      [2n, 1, 2, true],
      [2n, 0, 0, false],
    ]);
    // Block filters report new blocks only.
    expect(manager.takeChanges(blocks)).to.deep.equal({ kind: "hashes", hashes: [one.block.hash, two.block.hash, replacement.block.hash] });
    manager.close();
  });

  it("delivers pending transaction hashes to pending-transaction filters only", () => {
    const standIns = new StandIns();
    const manager = standIns.manager();
    const pending = manager.installPendingTransactionFilter();
    const blocks = manager.installBlockFilter();
    const transactions = [{ hash: A }, { hash: B }] as unknown as ChainTransaction[];
    standIns.poolListener!(transactions);
    expect(manager.takeChanges(pending)).to.deep.equal({ kind: "hashes", hashes: [A, B] });
    expect(manager.takeChanges(pending)).to.deep.equal({ kind: "hashes", hashes: [] });
    expect(manager.takeChanges(blocks)).to.deep.equal({ kind: "hashes", hashes: [] });
    manager.close();
  });

  it("forgets a filter not polled within the timeout; a poll restarts the timeout", () => {
    const standIns = new StandIns();
    const manager = standIns.manager(1000);
    const polled = manager.installBlockFilter();
    const idle = manager.installBlockFilter();
    standIns.clock = 600;
    expect(manager.takeChanges(polled)).to.not.equal(undefined);
    standIns.clock = 1200;
    expect(manager.takeChanges(polled)).to.not.equal(undefined);
    expect(manager.takeChanges(idle)).to.equal(undefined);
    expect(manager.uninstall(idle)).to.equal(false);
    expect(manager.size).to.equal(1);
    standIns.clock = 2200;
    expect(manager.logFilterQuery(polled)).to.equal(undefined);
    expect(manager.uninstall(polled)).to.equal(false);
    manager.close();
  });

  it("finds a filter under any spelling of its id and refuses what is not an id", () => {
    const standIns = new StandIns();
    const manager = new FilterManager(standIns.chain, standIns.pool, { filterTimeoutMs: 1000, newId: () => "0xAB", reportError: () => undefined });
    const id = manager.installBlockFilter();
    expect(id).to.equal("0xab");
    expect(manager.takeChanges("0xAB")).to.not.equal(undefined);
    expect(manager.takeChanges("0x00ab")).to.not.equal(undefined);
    expect(manager.takeChanges("ab")).to.equal(undefined);
    expect(manager.uninstall("0xab")).to.equal(true);
    manager.close();
  });

  it("keeps at most maxInstalledFilters, counting expired ones out first", () => {
    const standIns = new StandIns();
    const manager = standIns.manager(1000);
    const ids: string[] = [];
    for (let count = 0; count < maxInstalledFilters; count++) ids.push(manager.installBlockFilter());
    expect(() => manager.installBlockFilter()).to.throw(TooManyFiltersError);
    expect(manager.uninstall(ids[0]!)).to.equal(true);
    ids.push(manager.installBlockFilter());
    expect(() => manager.installPendingTransactionFilter()).to.throw(TooManyFiltersError);
    // Once the installed ones expire, there is room again.
    standIns.clock += 1001;
    expect(manager.installBlockFilter()).to.be.a("string");
    manager.close();
  });

  it("keeps a filter's newest changes up to maxChangesPerFilter and reports the first drop since a poll", () => {
    const standIns = new StandIns();
    const dropping: [string, number][] = [];
    const manager = new FilterManager(standIns.chain, standIns.pool, { filterTimeoutMs: 1000, now: () => standIns.clock, reportError: () => undefined, reportDropping: (id, kept) => dropping.push([id, kept]) });
    const id = manager.installPendingTransactionFilter();
    const hashes = (from: number, count: number) => Array.from({ length: count }, (_, index) => ({ hash: new Uint8Array([from + index]) }) as unknown as ChainTransaction);
    standIns.poolListener!(hashes(0, maxChangesPerFilter));
    standIns.poolListener!(hashes(maxChangesPerFilter, 3));
    standIns.poolListener!(hashes(maxChangesPerFilter + 3, 2));
    expect(dropping).to.deep.equal([[id, maxChangesPerFilter]]);
    const kept = hashChanges(manager.takeChanges(id)).hashes;
    expect(kept).to.have.length(maxChangesPerFilter);
    expect(kept[0]).to.deep.equal(new Uint8Array([5]));
    standIns.poolListener!(hashes(0, maxChangesPerFilter + 1));
    expect(dropping).to.have.length(2);
    manager.close();
  });

  it("shares maxChangesHeld among the filters when many are installed", () => {
    const standIns = new StandIns();
    const manager = standIns.manager();
    const filterCount = Math.floor(maxChangesHeld / maxChangesPerFilter) * 2;
    const ids = Array.from({ length: filterCount }, () => manager.installPendingTransactionFilter());
    standIns.poolListener!(Array.from({ length: maxChangesPerFilter }, () => ({ hash: new Uint8Array(32) }) as unknown as ChainTransaction));
    for (const id of [ids[0]!, ids[filterCount - 1]!]) expect(hashChanges(manager.takeChanges(id)).hashes).to.have.length(maxChangesPerFilter / 2);
    manager.close();
  });

  it("gives the unsent part of a poll back as the first changes of the next", () => {
    const standIns = new StandIns();
    const manager = standIns.manager();
    const id = manager.installBlockFilter();
    standIns.chainListener!.blocksAdded([blockWith(1n, []), blockWith(2n, []), blockWith(3n, [])]);
    const taken = manager.takeChanges(id)!;
    standIns.chainListener!.blocksAdded([blockWith(4n, [])]);
    manager.returnUnsent(id, taken, 1);
    expect(hashChanges(manager.takeChanges(id)).hashes.map((hash) => hash[0])).to.deep.equal([2, 3, 4]);
    manager.close();
  });

  it("stops listening when closed", () => {
    const standIns = new StandIns();
    const manager = standIns.manager();
    manager.installBlockFilter();
    manager.close();
    expect(standIns.chainListener).to.equal(undefined);
    expect(standIns.poolListener).to.equal(undefined);
    expect(manager.size).to.equal(0);
  });
});
