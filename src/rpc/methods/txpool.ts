// txpool_: what the pool holds, executable (pending) and behind a nonce gap (queued), in the
// reference's nesting: sender without 0x -> decimal nonce -> [transaction].
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { TxPoolTransaction as PoolTransactionJson } from "../../../generated/types.js";
import { maxGasPrice, type ChainTransaction } from "../../chain/transactions.js";
import { bytesToHex, bytesToUnprefixedHex, toQuantity } from "../../common/hex.js";
import type { TransactionPool } from "../../txpool/transactionPool.js";
import type { RpcCallContext } from "../dispatch.js";

export interface TxpoolDependencies {
  pool: TransactionPool;
}

type BySenderAndNonce<T> = Record<string, Record<string, T[]>>;

const zeroHash = `0x${"0".repeat(64)}`;

function groupBySenderAndNonce<T>(transactions: readonly ChainTransaction[], format: (transaction: ChainTransaction) => T): BySenderAndNonce<T> {
  const grouped: BySenderAndNonce<T> = {};
  for (const transaction of transactions) {
    const byNonce = (grouped[bytesToUnprefixedHex(transaction.sender)] ??= {});
    (byNonce[transaction.tx.nonce.toString()] ??= []).push(format(transaction));
  }
  return grouped;
}

function formatPoolTransaction(transaction: ChainTransaction): PoolTransactionJson {
  const { tx } = transaction;
  return {
    blockHash: zeroHash,
    blockNumber: null,
    transactionIndex: null,
    from: bytesToHex(transaction.sender),
    gas: toQuantity(tx.gasLimit),
    // A type 2 transaction's fee cap, as geth shows a pending one's gasPrice.
    gasPrice: toQuantity(maxGasPrice(tx)),
    hash: bytesToHex(transaction.hash),
    input: bytesToHex(tx.data),
    nonce: toQuantity(tx.nonce),
    to: tx.to === undefined ? null : bytesToHex(tx.to.bytes),
    value: toQuantity(tx.value),
  };
}

/** "<to without 0x>: <value> wei + <gas limit> x <gas price> gas", decimal numbers. */
function summarizePoolTransaction(transaction: ChainTransaction): string {
  const { tx } = transaction;
  const recipient = tx.to === undefined ? "contract creation" : bytesToUnprefixedHex(tx.to.bytes);
  return `${recipient}: ${tx.value} wei + ${tx.gasLimit} x ${maxGasPrice(tx)} gas`;
}

export function createTxpoolHandlers(deps: TxpoolDependencies): NamespaceHandlers<"txpool", RpcCallContext> {
  const { pool } = deps;
  return {
    txpool_content: () => ({
      pending: groupBySenderAndNonce(pool.pending(), formatPoolTransaction),
      queued: groupBySenderAndNonce(pool.queued(), formatPoolTransaction),
    }),
    txpool_inspect: () => ({
      pending: groupBySenderAndNonce(pool.pending(), summarizePoolTransaction),
      queued: groupBySenderAndNonce(pool.queued(), summarizePoolTransaction),
    }),
    txpool_status: () => ({ pending: pool.pending().length, queued: pool.queued().length }),
  };
}
