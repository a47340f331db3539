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
  it("writes the snapshot's pool before the batch that cuts the chain", async () => {
    const { common, inner, failing, chain, pool, miner, transfer } = await minerOn({ kind: "off" });
    const devChain = new DevChain(chain, pool, miner, new MinerClock(), createLogger("silent"));
    const snapshotPool = [await transfer(0), await transfer(1)];
    for (const transaction of snapshotPool) await pool.add(transaction);
    await pool.persist();
    const id = await devChain.snapshot();
    await devChain.mine();
    // The next journal write deletes the entries of the transactions the block took.
    await pool.add(await transfer(2));
    await pool.persist();
    expect(await inner.entries(storeKeys.pooledTransactions)).to.have.length(1);

    // What a restart would find if the process died just before each batch of the revert.
    const foundBeforeEachBatch: { cutsChain: boolean; pooled: string[] }[] = [];
    const headKey = Buffer.from(storeKeys.metadata("head")).toString("hex");
    failing.beforeWrite = async (operations, store) => {
      const cutsChain = operations.some((operation) => Buffer.from(operation.key).toString("hex") === headKey);
      const { transactions } = await new PoolJournal(store, common).load();
      foundBeforeEachBatch.push({ cutsChain, pooled: hashesOf(transactions) });
    };
    expect(await devChain.revert(id)).to.equal(true);
    failing.beforeWrite = undefined;

    const cut = foundBeforeEachBatch.findIndex((batch) => batch.cutsChain);
    expect(cut, "the revert writes a batch that moves the head").to.be.at.least(0);
    // From the cut on, the journal holds the snapshot's pool (the block holding it is gone).
    for (const batch of foundBeforeEachBatch.slice(cut)) expect(batch.pooled).to.include.members(hashesOf(snapshotPool));
    // Once done, it holds exactly the pool the revert restored.
    const { transactions } = await new PoolJournal(inner, common).load();
    expect(hashesOf(transactions)).to.deep.equal(hashesOf(snapshotPool));
    expect(hashesOf(pool.pending())).to.deep.equal(hashesOf(snapshotPool));
  });
});
