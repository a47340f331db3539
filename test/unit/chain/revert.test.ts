// Chain.revertTo: all or nothing on the store, removed blocks unknown afterwards (and after
// reopening), listeners told newest first, and targets it must refuse.
import { expect } from "chai";
import { Account, Address } from "@ethereumjs/util";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import type { Block } from "../../../src/chain/block.js";
import { Chain, ChainRevertError } from "../../../src/chain/chain.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { hexToBytes } from "../../../src/common/hex.js";
import { BlockBuilder } from "../../../src/execution/blockBuilder.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { Miner } from "../../../src/mining/miner.js";
import { StateDatabase } from "../../../src/state/stateDatabase.js";
import { createMemoryStore, type KeyValueStore } from "../../../src/storage/keyValueStore.js";
import { TransactionPool } from "../../../src/txpool/transactionPool.js";

const network = findNetworkProfile(33)!;
const common = createExecutionRules(network.chainId);

/** A memory store whose writes fail while `failing.on` is set. */
function storeWithFailingWrites(): { store: KeyValueStore; failing: { on: boolean } } {
  const inner = createMemoryStore();
  const failing = { on: false };
  const store: KeyValueStore = {
    get: (key) => inner.get(key),
    getSync: (key) => inner.getSync(key),
    write: async (operations) => {
      if (failing.on) throw new Error("no space left on device");
      return inner.write(operations);
    },
    close: () => inner.close(),
    location: "memory (failing writes)",
  };
  return { store, failing };
}

describe("chain/chain: revertTo", () => {
  it("cuts the chain back in one batch, or not at all when the store refuses it", async () => {
    const { store, failing } = storeWithFailingWrites();
    const state = new StateDatabase(store, common);
    const chain = await Chain.open(store, state, common, network.genesis);
    const builder = await BlockBuilder.create(common, state.at(chain.tip.header.fields.stateRoot), (number) => chain.getCanonicalHashFromTip(number));
    const pool = new TransactionPool({
      async readAccount(address) {
        const account = (await state.reader(chain.tip.header.fields.stateRoot)!.getAccount(new Address(address))) ?? new Account();
        return { nonce: account.nonce, balance: account.balance };
      },
      limits: () => ({ blockGasLimit: chain.tip.header.fields.gasLimit, minimumGasPrice: 0n }),
    });
    const miner = new Miner(chain, pool, builder, { mode: { kind: "off" }, coinbase: new Uint8Array(20), extraData: new Uint8Array() }, createLogger("silent"));
    const wallet = new Wallet(keccak256(toUtf8Bytes("cow")));
    const blocks: Block[] = [];
    for (let nonce = 0; nonce < 3; nonce++) {
      const signed = await wallet.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice: 0n, to: "0x00000000000000000000000000000000000000aa", value: 5n });
      await pool.add(decodeRawTransaction(hexToBytes(signed), common));
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
