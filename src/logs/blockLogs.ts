// The part of a block a log query reads, kept small: hash, number, bloom, and per transaction that
// emitted logs its hash, receipt bloom, logs and the block-wide index of its first log. Held for
// recent blocks by BlockLogIndex, so a query over them does not decode blocks or receipts again.
import type { Block } from "../chain/block.js";
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
