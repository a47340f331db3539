// The compact record BlockLogIndex holds: the same content as blockLogsOf's, the same logs found by
// a query, in one buffer; blocks without logs share their empty parts.
import { expect } from "chai";
import { Bloom } from "@ethereumjs/vm";
import type { Block } from "../../../src/chain/block.js";
import type { ChainLog, ChainReceipt } from "../../../src/chain/receipts.js";
import { bytesToHex } from "../../../src/common/hex.js";
import { blockLogsOf, collectBlockLogs, compactBlockLogs, LogMatcher, type BlockLogs, type LocatedLog, type LogCriteria } from "../../../src/logs/index.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

/** A block with one transaction per entry of `logsPerTransaction` (blooms built as the engine does). */
function blockLogsWith(number: bigint, logsPerTransaction: ChainLog[][]): BlockLogs {
  const blockBloom = new Bloom();
  const receipts: ChainReceipt[] = logsPerTransaction.map((logs) => {
    const bloom = new Bloom();
    for (const { address, topics } of logs) for (const value of [address, ...topics]) (bloom.add(value), blockBloom.add(value));
    return { success: true, gasUsed: 0n, cumulativeGasUsed: 0n, logsBloom: bloom.bitvector, logs, contractAddress: undefined };
  });
  const block = {
    number,
    hash: new Uint8Array(32).fill(Number(number)),
    header: { fields: { logsBloom: blockBloom.bitvector } },
    transactions: receipts.map((_, index) => ({ hash: new Uint8Array(32).fill(index + 1) })),
  } as unknown as Block;
  return blockLogsOf(block, receipts);
}

/** Every field as hex, to compare records made of different arrays. */
function contentOf(logs: BlockLogs): unknown {
  const hex = (bytes: Uint8Array) => bytesToHex(bytes);
  return {
    number: logs.number,
    hash: hex(logs.hash),
    bloom: hex(logs.bloom),
    logCount: logs.logCount,
    transactions: logs.transactions.map((transaction) => ({
      index: transaction.index,
      hash: hex(transaction.hash),
      bloom: hex(transaction.bloom),
      firstLogIndex: transaction.firstLogIndex,
      logs: transaction.logs.map((log) => ({ address: hex(log.address), topics: log.topics.map(hex), data: hex(log.data) })),
    })),
  };
}

describe("logs/blockLogs compactBlockLogs", () => {
  it("keeps every field of random blocks, and a query finds the same logs", () => {
    const next = seededRandom(3);
    const addresses = [randomBytes(next, 20), randomBytes(next, 20)];
    const topics = [randomBytes(next, 32), randomBytes(next, 32), randomBytes(next, 32)];
    for (let number = 1n; number <= 30n; number++) {
      const logsPerTransaction = Array.from({ length: next() % 4 }, () =>
        Array.from({ length: next() % 3 }, () => ({
          address: addresses[next() % 2]!,
          topics: Array.from({ length: next() % 4 }, () => topics[next() % 3]!),
          data: randomBytes(next, next() % 70),
        })),
      );
      const original = blockLogsWith(number, logsPerTransaction);
      const compact = compactBlockLogs(original);
      expect(contentOf(compact), `block ${number}`).to.deep.equal(contentOf(original));
      const criteriaList: LogCriteria[] = [
        { addresses: [addresses[0]!], topics: [] },
        { addresses: [], topics: [[topics[1]!]] },
        { addresses: [addresses[1]!], topics: [null, [topics[2]!]] },
      ];
      for (const criteria of criteriaList) {
        const matcher = new LogMatcher(criteria);
        const [found, foundCompact]: LocatedLog[][] = [[], []];
        collectBlockLogs(matcher, original, false, found);
        collectBlockLogs(matcher, compact, false, foundCompact);
        expect(foundCompact.map((log) => [log.logIndex, bytesToHex(log.log.data)])).to.deep.equal(found.map((log) => [log.logIndex, bytesToHex(log.log.data)]));
      }
    }
  });

  it("shares the empty parts of blocks without logs, and a lone transaction's bloom with its block", () => {
    const [first, second] = [compactBlockLogs(blockLogsWith(1n, [[], []])), compactBlockLogs(blockLogsWith(2n, []))];
    expect(first.bloom).to.equal(second.bloom);
    expect(first.transactions).to.equal(second.transactions);
    expect(first.bloom.every((byte) => byte === 0)).to.equal(true);
    const lone = compactBlockLogs(blockLogsWith(3n, [[], [{ address: new Uint8Array(20).fill(7), topics: [new Uint8Array(32).fill(9)], data: Uint8Array.of(1, 2) }]]));
    expect(lone.transactions[0]!.bloom).to.equal(lone.bloom);
    expect(lone.transactions[0]!.logs[0]!.data.buffer).to.equal(lone.hash.buffer);
  });
});
