// The part of a block a log query reads, kept small: hash, number, bloom, and per transaction that
// emitted logs its hash, receipt bloom, logs and the block-wide index of its first log. Held for
// recent blocks by BlockLogIndex, so a query over them does not decode blocks or receipts again.
import type { Block } from "../chain/block.js";
import { emptyBloom } from "../chain/header.js";
import type { ChainLog, ChainReceipt } from "../chain/receipts.js";

export interface TransactionLogs {
  /** Position of the transaction in the block. */
  readonly index: number;
  readonly hash: Uint8Array;
  readonly bloom: Uint8Array;
  /** Block-wide index of the transaction's first log. */
  readonly firstLogIndex: number;
  readonly logs: readonly ChainLog[];
}

export interface BlockLogs {
  readonly number: bigint;
  readonly hash: Uint8Array;
  readonly bloom: Uint8Array;
  /** Only the transactions that emitted logs, in block order. */
  readonly transactions: readonly TransactionLogs[];
  readonly logCount: number;
}

export function blockLogsOf(block: Block, receipts: readonly ChainReceipt[]): BlockLogs {
  const transactions: TransactionLogs[] = [];
  let logCount = 0;
  receipts.forEach((receipt, index) => {
    if (receipt.logs.length === 0) return;
    transactions.push({ index, hash: block.transactions[index]!.hash, bloom: receipt.logsBloom, firstLogIndex: logCount, logs: receipt.logs });
    logCount += receipt.logs.length;
  });
  return { number: block.number, hash: block.hash, bloom: block.header.fields.logsBloom, transactions, logCount };
}

const noTransactions: readonly TransactionLogs[] = [];

/**
 * The same record in fewer objects, for holding thousands of blocks (BlockLogIndex): a block
 * without logs shares the empty bloom (chain/header.ts; nothing writes into it) and one
 * transaction list, and the bytes of a block with logs (hashes, blooms, addresses, topics, data)
 * are copied into one buffer of which each field is a view. A Uint8Array with a buffer of its own
 * costs about 200 bytes of heap and an allocation besides its bytes, a view about 100; a block's
 * only transaction with logs shares its bloom with the block (the block's bloom is the union of
 * its receipts' blooms).
 */
export function compactBlockLogs(logs: BlockLogs): BlockLogs {
  if (logs.logCount === 0) return { number: logs.number, hash: logs.hash, bloom: emptyBloom, transactions: noTransactions, logCount: 0 };
  const sharesBloom = (transaction: TransactionLogs) => Buffer.compare(transaction.bloom, logs.bloom) === 0;
  let size = logs.hash.length + logs.bloom.length;
  for (const transaction of logs.transactions) {
    size += transaction.hash.length + (sharesBloom(transaction) ? 0 : transaction.bloom.length);
    for (const log of transaction.logs) size += log.address.length + log.data.length + log.topics.reduce((sum, topic) => sum + topic.length, 0);
  }
  const buffer = new Uint8Array(size);
  let offset = 0;
  const copy = (bytes: Uint8Array): Uint8Array => {
    buffer.set(bytes, offset);
    offset += bytes.length;
    return buffer.subarray(offset - bytes.length, offset);
  };
  const hash = copy(logs.hash);
  const bloom = copy(logs.bloom);
  const transactions = logs.transactions.map(
    (transaction): TransactionLogs => ({
      index: transaction.index,
      hash: copy(transaction.hash),
      bloom: sharesBloom(transaction) ? bloom : copy(transaction.bloom),
      firstLogIndex: transaction.firstLogIndex,
      logs: transaction.logs.map((log): ChainLog => ({ address: copy(log.address), topics: log.topics.map(copy), data: copy(log.data) })),
    }),
  );
  return { number: logs.number, hash, bloom, transactions, logCount: logs.logCount };
}
