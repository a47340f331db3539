// The miner when the disk refuses a block: the block and the ones after it are gone, the send
// learns it, the chain and the working state go back to the head, and no transaction is lost.
import { expect } from "chai";
import { Account, Address } from "@ethereumjs/util";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { Chain, BlockWriteError } from "../../../src/chain/chain.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { hexToBytes } from "../../../src/common/hex.js";
import { BlockBuilder } from "../../../src/execution/blockBuilder.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { Miner, type MiningMode } from "../../../src/mining/miner.js";
import { StateDatabase } from "../../../src/state/stateDatabase.js";
import { createMemoryStore, type KeyValueStore } from "../../../src/storage/keyValueStore.js";
import { TransactionPool } from "../../../src/txpool/transactionPool.js";

const recipient = "0x00000000000000000000000000000000000000aa";

/** A memory store whose next writes fail while `failing` is set. */
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

/** A chain, pool and miner on a store whose writes can be made to fail; transfers signed by cow. */
async function minerOn(mode: MiningMode) {
  const network = findNetworkProfile(33)!;
  const common = createExecutionRules(network.chainId);
  const { store, failing } = storeWithFailingWrites();
  const state = new StateDatabase(store, common);
  const chain = await Chain.open(store, state, common, network.genesis);
  const builder = await BlockBuilder.create(common, state.at(chain.tip.header.fields.stateRoot), (blockNumber) => chain.getCanonicalHashFromTip(blockNumber));
  const pool = new TransactionPool({
    async readAccount(address) {
      const account = (await state.reader(chain.tip.header.fields.stateRoot)!.getAccount(new Address(address))) ?? new Account();
      return { nonce: account.nonce, balance: account.balance };
    },
    limits: () => ({ blockGasLimit: chain.tip.header.fields.gasLimit, minimumGasPrice: 0n }),
  });
  const miner = new Miner(chain, pool, builder, { mode, coinbase: new Uint8Array(20), extraData: new Uint8Array() }, createLogger("silent"));
  const wallet = new Wallet(keccak256(toUtf8Bytes("cow")));
  const transfer = async (nonce: number) =>
    decodeRawTransaction(hexToBytes(await wallet.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice: 0n, to: recipient, value: 5n })), common);
  return { store, failing, state, chain, pool, miner, transfer };
}

describe("mining/miner: a block the disk refuses", () => {
  it("fails the waiting call, rolls the chain back and puts the transactions back in the pool", async () => {
    const { store, failing, state, chain, pool, miner, transfer } = await minerOn({ kind: "off" });

    const first = await transfer(0);
    await pool.add(first);
    failing.on = true;
    let failure: unknown;
    await miner.mineBlock(pool.pending()).catch((error: unknown) => (failure = error));
    expect(failure).to.be.instanceOf(BlockWriteError);
    expect(chain.head.number).to.equal(0n);
    expect(chain.tip.number).to.equal(0n);
    // The rejection handler runs on the next turn.
    await new Promise((resolve) => setImmediate(resolve));
    expect(pool.pending().map((transaction) => transaction.hash)).to.deep.equal([first.hash]);

    failing.on = false;
    await pool.add(await transfer(1));
    const block = await miner.mineBlock(pool.pending());
    expect(block.number).to.equal(1n);
    expect(block.transactions).to.have.length(2);
    expect(chain.head.number).to.equal(1n);
    const balance = (await state.reader(chain.head.header.fields.stateRoot)!.getAccount(new Address(hexToBytes(recipient))))?.balance;
    expect(balance).to.equal(10n);
    expect(pool.size).to.equal(0);
    await store.close();
  });
});

describe("mining/miner: pausing automine", () => {
  it("a send already queued when mining is paused waits in the pool instead of being mined", async () => {
    const { store, chain, pool, miner, transfer } = await minerOn({ kind: "auto" });
    const transaction = await transfer(0);
    await pool.add(transaction);
    // Hold the miner's queue (as a block build or a revert would) until the send is queued behind it.
    let release!: () => void;
    const holding = new Promise<void>((started) => {
      void miner.runExclusive(() => {
        started();
        return new Promise<void>((resolve) => (release = resolve));
      });
    });
    await holding;
    const inclusion = miner.mineUntilIncluded(transaction);
    miner.pause();
    release();
    expect((await inclusion).kind).to.equal("waiting");
    expect(chain.head.number).to.equal(0n);
    expect(pool.pending()).to.have.length(1);
    await miner.resume();
    expect(chain.head.number).to.equal(1n);
    expect(pool.size).to.equal(0);
    await store.close();
  });
});
