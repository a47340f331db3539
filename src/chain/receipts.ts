// Receipts and logs as the chain stores them, the per-block receipt record, and the receipt
// encoding committed to by the block's receipts trie: RLP([status, cumulativeGasUsed, logsBloom,
// logs, gasUsed, status]), the reference node's layout (post-transaction state = status byte).
import { RLP } from "@ethereumjs/rlp";
import { bytesToBigInt } from "@ethereumjs/util";
import { bigIntToMinimalBytes } from "../common/hex.js";
import { emptyBytes } from "./header.js";

export interface ChainLog {
  readonly address: Uint8Array;
  readonly topics: readonly Uint8Array[];
  readonly data: Uint8Array;
}

export interface ChainReceipt {
  /** true when the transaction succeeded. */
  readonly success: boolean;
  readonly gasUsed: bigint;
  readonly cumulativeGasUsed: bigint;
  readonly logsBloom: Uint8Array;
  readonly logs: readonly ChainLog[];
  /** Set when the transaction created a contract. */
  readonly contractAddress: Uint8Array | undefined;
}

type LogFields = [Uint8Array, Uint8Array[], Uint8Array];

function logFields(log: ChainLog): LogFields {
  return [log.address, [...log.topics], log.data];
}

function statusByte(receipt: ChainReceipt): Uint8Array {
  return receipt.success ? Uint8Array.of(1) : emptyBytes;
}

/** The receipt as committed to by the receipts trie (and served raw by ext_ methods). */
export function encodeReceiptForTrie(receipt: ChainReceipt): Uint8Array {
  return RLP.encode([statusByte(receipt), bigIntToMinimalBytes(receipt.cumulativeGasUsed), receipt.logsBloom, receipt.logs.map(logFields), bigIntToMinimalBytes(receipt.gasUsed), statusByte(receipt)]);
}

/** One record per block: every receipt of the block, in transaction order. */
export function encodeBlockReceipts(receipts: readonly ChainReceipt[]): Uint8Array {
  return RLP.encode(
    receipts.map((receipt) => [
      statusByte(receipt),
      bigIntToMinimalBytes(receipt.gasUsed),
      bigIntToMinimalBytes(receipt.cumulativeGasUsed),
      receipt.logsBloom,
      receipt.logs.map(logFields),
      receipt.contractAddress ?? emptyBytes,
    ]),
  );
}

export function decodeBlockReceipts(encoded: Uint8Array): ChainReceipt[] {
  const records = RLP.decode(encoded) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, LogFields[], Uint8Array][];
  return records.map(([status, gasUsed, cumulativeGasUsed, logsBloom, logs, contractAddress]) => ({
    success: status.length === 1 && status[0] === 1,
    gasUsed: bytesToBigInt(gasUsed),
    cumulativeGasUsed: bytesToBigInt(cumulativeGasUsed),
    logsBloom,
    logs: logs.map(([address, topics, data]) => ({ address, topics, data })),
    contractAddress: contractAddress.length === 0 ? undefined : contractAddress,
  }));
}
