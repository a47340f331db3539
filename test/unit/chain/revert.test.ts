// Chain.revertTo: all or nothing on the store, removed blocks unknown afterwards (and after
// reopening), listeners told newest first, and targets it must refuse.
import { expect } from "chai";
import type { Block } from "../../../src/chain/block.js";
import { Chain, ChainRevertError } from "../../../src/chain/chain.js";
import { StateDatabase } from "../../../src/state/stateDatabase.js";
import { minerOn } from "../../helpers/minerHarness.js";

describe("chain/chain: revertTo", () => {
  it("cuts the chain back in one batch, or not at all when the store refuses it", async () => {
    const { network, common, store, failing, chain, pool, miner, transfer } = await minerOn({ kind: "off" });
    const blocks: Block[] = [];
    for (let nonce = 0; nonce < 3; nonce++) {
      await pool.add(await transfer(nonce));
      blocks.push(await miner.mineBlock(pool.pending()));
    }
    const [first, second, third] = blocks as [Block, Block, Block];
    const removedNotices: bigint[][] = [];
    chain.subscribeHead({ blocksAdded: () => undefined, blocksRemoved: (removed) => removedNotices.push(removed.map(({ block }) => block.number)) }, (error) => {
      throw error;
    });

    failing.on = true;
    try {
      await chain.revertTo(first);
      expect.fail("the revert succeeded on a failing store");
    } catch (error) {
      expect((error as Error).message).to.equal("no space left on device");
    }
    expect(chain.head).to.equal(third);
    expect(chain.tip).to.equal(third);
    expect((await chain.getBlockByNumber(3n))?.hash).to.deep.equal(third.hash);
    expect(await chain.getTransactionLocation(third.transactions[0]!.hash)).to.not.equal(undefined);
    expect(removedNotices).to.deep.equal([]);

    failing.on = false;
    const removed = await chain.revertTo(first);
    expect(removed.map(({ block }) => block.number)).to.deep.equal([3n, 2n]);
    expect(removedNotices).to.deep.equal([[3n, 2n]]);
    expect(chain.head).to.equal(first);
    expect(chain.tip).to.equal(first);
    for (const gone of [second, third]) {
      expect(await chain.getBlockByNumber(gone.number)).to.equal(undefined);
      expect(await chain.getBlockByHash(gone.hash)).to.equal(undefined);
      expect(await chain.getReceipts(gone.hash)).to.equal(undefined);
      expect(await chain.getTransactionLocation(gone.transactions[0]!.hash)).to.equal(undefined);
    }
    expect(await chain.getTransactionLocation(first.transactions[0]!.hash)).to.deep.equal({ blockHash: first.hash, index: 0 });
    // A removed block, or one above the head, is not a target.
    for (const refused of [second, third]) {
      try {
        await chain.revertTo(refused);
        expect.fail(`reverted to removed block ${refused.number}`);
      } catch (error) {
        expect(error).to.be.instanceOf(ChainRevertError);
      }
    }
    // Reverting to the head changes nothing.
    expect(await chain.revertTo(first)).to.deep.equal([]);

    const reopened = await Chain.open(store, new StateDatabase(store, common), common, network.genesis);
    expect(reopened.head.hash).to.deep.equal(first.hash);
    expect(await reopened.getBlockByNumber(2n)).to.equal(undefined);
    // The chain grows again from the reverted head.
    const next = await miner.mineBlock([]);
    expect(next.number).to.equal(2n);
    expect(next.header.fields.parentHash).to.deep.equal(first.hash);
    await miner.stop();
  });
});
