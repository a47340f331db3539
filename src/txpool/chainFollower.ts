// Keeps the pool in step with the chain when blocks come from elsewhere than the node's own miner
// (which tells the pool itself as it builds): the transactions of an imported block leave the
// pool, and after a switch to a heavier branch the pool takes back the transactions of the blocks
// that left the canonical chain, where they are still valid against the new head, and lets go of
// those the new branch mined. A dev revert restores the pool it recorded instead (mining/devChain.ts).
import type { BlockWithReceipts, ChainHeadListener, Reorganisation } from "../chain/events.js";
import type { ChainTransaction } from "../chain/transactions.js";
import { bytesToHex, bytesToUnprefixedHex } from "../common/hex.js";
import type { Logger } from "../common/logger.js";
import type { TransactionPool } from "./transactionPool.js";

export class PoolChainFollower implements ChainHeadListener {
  constructor(
    private readonly pool: TransactionPool,
    private readonly log: Logger,
  ) {}

  blocksAdded(blocks: readonly BlockWithReceipts[]): void {
    // A mined block's transactions already left (onBlockMined at build time): this finds none of them.
    if (this.pool.size === 0) return;
    for (const { block } of blocks) this.pool.onBlockMined(block.transactions);
  }

  blocksRemoved(): void {}

  async reorganised(change: Reorganisation): Promise<void> {
    const minedNow = new Set(change.added.flatMap(({ block }) => block.transactions.map((transaction) => bytesToUnprefixedHex(transaction.hash))));
    // Oldest first, so each sender's nonces come in order; then what the pool held.
    const returning: ChainTransaction[] = [];
    for (const { block } of [...change.removed].reverse()) {
      for (const transaction of block.transactions) if (!minedNow.has(bytesToUnprefixedHex(transaction.hash))) returning.push(transaction);
    }
    const held = this.pool.contents().filter((transaction) => !minedNow.has(bytesToUnprefixedHex(transaction.hash)));
    const refused = await this.pool.restore([...returning, ...held]);
    for (const { transaction, reason } of refused) this.log.debug({ hash: bytesToHex(transaction.hash), reason }, "transaction not taken back after the reorganisation");
    await this.pool.persist();
    const returned = returning.filter((transaction) => this.pool.get(transaction.hash) === transaction).length;
    this.log.info({ ancestor: Number(change.ancestor.number), removed: change.removed.length, added: change.added.length, returned }, "chain reorganised");
  }
}
