// Every check of a received block that needs no execution, in the reference's order (rskj:
// co/rsk/RskContext.java getBlockParentDependantValidationRule, then getBlockValidationRule; run
// by co/rsk/core/bc/BlockValidatorImpl.java): first against the parent, then the block's own.
// The uncles and the proof of work are other modules' checks, handed in and run at their place.
// Not here: the transactions' signatures and nonces (execution runs them), REMASC (none on this
// node), fork-detection data (phase 2).
import type { BlockHeader } from "../../chain/header.js";
import { indexedTrieRoot } from "../../chain/indexedTrie.js";
import { effectiveGasPrice, maxGasPrice, type ChainTx } from "../../chain/transactions.js";
import { bytesToHex } from "../../common/hex.js";
import { firstRefusal, passed, refused, type RuleVerdict } from "../verdict.js";
import { checkExtraData, checkFutureTimestamp, checkGasUsed, checkMinimumGasLimit } from "./header.js";
import { checkHeaderAgainstParent, type RuleContext, type RuleHeader } from "./parent.js";

export type TransactionRule = "transactionMinimumGasPrice" | "transactionGasPriceCap" | "transactionsRoot";

/** What the rules read of a transaction (a ChainTransaction fits). */
export interface PricedTransaction {
  readonly hash: Uint8Array;
  /** The signed RLP encoding, as the transactions root commits to it. */
  readonly raw: Uint8Array;
  readonly tx: ChainTx;
}

/** The block under check (a Block fits). */
export interface BlockToCheck {
  readonly header: BlockHeader;
  readonly transactions: readonly PricedTransaction[];
}

/** Checks other modules own; each answers for the block being checked. */
export interface DelegatedBlockChecks {
  /** consensus/uncles.ts checkUncles with the block's family view. */
  uncles(): RuleVerdict;
  /** The merged-mining proof of work of the block's header. */
  proofOfWork(): RuleVerdict;
}

/**
 * Answers passed, or the first rule the block breaks with its reason. With `bodyMatchesHeader`
 * (the body was checked against this header already: blockImporter.ts recordBodyMatchesHeader),
 * the transactions root passes without being computed again.
 */
export function checkBlockBeforeExecution(block: BlockToCheck, parent: RuleHeader, context: RuleContext, delegated: DelegatedBlockChecks, bodyMatchesHeader = false): RuleVerdict {
  const header = block.header.fields;
  return firstRefusal<string>([
    () => checkHeaderAgainstParent(header, parent, context),
    () => checkTransactionGasPrices(block.transactions, header.minimumGasPrice, context.constants.blockGasPriceCapMultiplier),
    () => delegated.uncles(),
    () => (bodyMatchesHeader ? passed : checkTransactionsRoot(block)),
    () => delegated.proofOfWork(),
    () => checkFutureTimestamp(header, context),
    () => checkMinimumGasLimit(header, context),
    () => checkExtraData(header, context),
    // Not among the reference's block rules (execution catches it there); cheap to refuse before executing.
    () => checkGasUsed(header),
  ]);
}

/**
 * Every transaction pays at least the block's minimum gas price (TxsMinGasPriceRule) and, while
 * that price is above 0, at most `capMultiplier` times it (BlockTxsMaxGasPriceRule, RSKIP252): the
 * first rule runs over all transactions before the second, as the reference's two rules do. A type 2
 * transaction (--typed-transactions) is held to its fee cap for the first rule and to what it pays
 * in the block for the second.
 */
export function checkTransactionGasPrices(transactions: readonly PricedTransaction[], minimumGasPrice: bigint, capMultiplier: bigint): RuleVerdict<TransactionRule> {
  const underpaid = transactions.find((transaction) => maxGasPrice(transaction.tx) < minimumGasPrice);
  if (underpaid !== undefined) {
    return refused("transactionMinimumGasPrice", `transaction ${bytesToHex(underpaid.hash)} pays ${maxGasPrice(underpaid.tx)}, below the block's minimum gas price ${minimumGasPrice}`);
  }
  const cap = minimumGasPrice * capMultiplier;
  const overpaid = minimumGasPrice === 0n ? undefined : transactions.find((transaction) => effectiveGasPrice(transaction.tx, minimumGasPrice) > cap);
  if (overpaid !== undefined) {
    return refused("transactionGasPriceCap", `transaction ${bytesToHex(overpaid.hash)} pays ${effectiveGasPrice(overpaid.tx, minimumGasPrice)}, above ${capMultiplier} × the block's minimum gas price (${cap})`);
  }
  return passed;
}

export function checkTransactionsRoot(block: BlockToCheck): RuleVerdict<TransactionRule> {
  const root = indexedTrieRoot(block.transactions.map((transaction) => transaction.raw));
  if (Buffer.compare(root, block.header.fields.transactionsRoot) === 0) return passed;
  return refused("transactionsRoot", `the transactions' root ${bytesToHex(root)} is not the header's ${bytesToHex(block.header.fields.transactionsRoot)}`);
}
