// The dev chain's revert and the pool's journal: a crash at any moment of a revert leaves the
// snapshot's transactions on disk (in a block or as journal entries), never neither.
import { expect } from "chai";
import type { ChainTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { MinerClock } from "../../../src/mining/clock.js";
import { DevChain } from "../../../src/mining/devChain.js";
import { storeKeys } from "../../../src/storage/keys.js";
import { PoolJournal } from "../../../src/txpool/poolJournal.js";
import { minerOn } from "../../helpers/minerHarness.js";

const hashesOf = (transactions: readonly ChainTransaction[]) => transactions.map((transaction) => Buffer.from(transaction.hash).toString("hex")).sort();

describe("mining/devChain: revert and the pool's journal", () => {
  it("writes the snapshot's pool in the batch that cuts the chain: a crash finds the old chain and pool, or the new ones", async () => {
    const { common, inner, failing, chain, pool, miner, transfer } = await minerOn({ kind: "off" });
    const devChain = new DevChain(chain, pool, miner, new MinerClock(), createLogger("silent"));
    const snapshotPool = [await transfer(0), await transfer(1)];
    for (const transaction of snapshotPool) await pool.add(transaction);
    await pool.persist();
    const snapshotHead = Buffer.from(chain.head.hash).toString("hex");
    const id = await devChain.snapshot();
    await devChain.mine();
    // Sent after the snapshot and answered: kept until the revert; its journal write also deletes
    // the entries of the transactions the block took.
    const sentSince = await transfer(2);
    await pool.add(sentSince);
    await pool.persist();
    expect(await inner.entries(storeKeys.pooledTransactions)).to.have.length(1);

    // What a restart would find after each batch of the revert.
    const afterEachBatch: { reverted: boolean; pooled: string[] }[] = [];
    failing.afterWrite = async (_operations, store) => {
      const head = await store.get(storeKeys.metadata("head"));
      const { transactions } = await new PoolJournal(store, common).load();
      afterEachBatch.push({ reverted: Buffer.from(head!).toString("hex") === snapshotHead, pooled: hashesOf(transactions) });
    };
    expect(await devChain.revert(id)).to.equal(true);
    failing.afterWrite = undefined;

    expect(afterEachBatch.some((batch) => batch.reverted), "the revert moved the head").to.equal(true);
    for (const batch of afterEachBatch) {
      // Reverted: the snapshot's pool (its transactions are in no block now), and not what was sent since.
      if (batch.reverted) expect(batch.pooled).to.deep.equal(hashesOf(snapshotPool));
      // Not yet: the block holds the snapshot's pool, and what was sent since is still kept.
      else expect(batch.pooled).to.include(hashesOf([sentSince])[0]);
    }
    const { transactions } = await new PoolJournal(inner, common).load();
    expect(hashesOf(transactions)).to.deep.equal(hashesOf(snapshotPool));
    expect(hashesOf(pool.pending())).to.deep.equal(hashesOf(snapshotPool));
  });
});
