// The logs' wire text (rpc/format.ts), made ahead of queries or by them, is the log objects' JSON
// byte for byte for every shape a log takes: no topic to four, no data to data longer than the
// text buffer kept between logs, small and large block numbers and log positions.
import { expect } from "chai";
import type { ChainLog } from "../../../src/chain/receipts.js";
import type { BlockLogs, LocatedLog, TransactionLogs } from "../../../src/logs/index.js";
import { encodeLocatedLogs, formatLocatedLogs, prepareLogTexts } from "../../../src/rpc/format.js";

function bytes(length: number, seed: number): Uint8Array {
  return Uint8Array.from({ length }, (_, index) => (seed * 31 + index * 7) % 256);
}

function located(block: BlockLogs): LocatedLog[] {
  return block.transactions.flatMap((transaction) => transaction.logs.map((log, offset) => ({ log, block, transaction, logIndex: transaction.firstLogIndex + offset, removed: false })));
}

function blockOf(number: bigint, transactions: { index: number; firstLogIndex: number; logs: ChainLog[] }[]): BlockLogs {
  const records: TransactionLogs[] = transactions.map(({ index, firstLogIndex, logs }) => ({ index, hash: bytes(32, index + 1), bloom: new Uint8Array(256), firstLogIndex, logs }));
  return { number, hash: bytes(32, 99), bloom: new Uint8Array(256), transactions: records, logCount: transactions.reduce((sum, each) => sum + each.logs.length, 0) };
}

const answerText = (logs: LocatedLog[]): string => {
  const encoded = encodeLocatedLogs(logs);
  return typeof encoded === "string" ? encoded : Buffer.from(encoded).toString("latin1");
};

describe("rpc/format: the logs' wire text", () => {
  const shapes: ChainLog[] = [
    { address: bytes(20, 1), topics: [], data: new Uint8Array(0) },
    { address: bytes(20, 2), topics: [bytes(32, 3)], data: new Uint8Array([0]) },
    { address: bytes(20, 4), topics: [bytes(32, 5), bytes(32, 6), bytes(32, 7), bytes(32, 8)], data: bytes(33, 9) },
    { address: bytes(20, 10), topics: [bytes(32, 11), bytes(32, 12)], data: bytes(40_000, 13) },
    { address: bytes(20, 14), topics: [bytes(32, 15)], data: bytes(200, 16) },
  ];

  for (const number of [0n, 1n, 0xabcdefn, 2n ** 70n + 5n]) {
    it(`is the objects' JSON for block ${number}, made by the query and prepared ahead`, () => {
      // Made by the query (the first block), and prepared first (a block of its own records).
      const queried = blockOf(number, [
        { index: 0, firstLogIndex: 0, logs: shapes.slice(0, 2) },
        { index: 0x1f, firstLogIndex: 2, logs: shapes.slice(2) },
      ]);
      const preparedBlock = blockOf(number, [{ index: 3, firstLogIndex: 2 ** 40, logs: shapes }]);
      prepareLogTexts(preparedBlock);
      for (const block of [queried, preparedBlock]) {
        const logs = located(block);
        expect(answerText(logs)).to.equal(JSON.stringify(formatLocatedLogs(logs)));
      }
    });
  }
});
