// The miner when the disk refuses a block: the block and the ones after it are gone, the send
// learns it, the chain and the working state go back to the head, and no transaction is lost.
import { expect } from "chai";
import { Address } from "@ethereumjs/util";
import { BlockWriteError } from "../../../src/chain/chain.js";
import { hexToBytes } from "../../../src/common/hex.js";
import type { InclusionOutcome } from "../../../src/mining/miner.js";
import { ChainWriteQueue } from "../../../src/chain/writeQueue.js";
import { countEventLoopTurns } from "../../helpers/eventLoopTurns.js";
import { minerOn, transferRecipient } from "../../helpers/minerHarness.js";

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
    const balance = (await state.reader(chain.head.header.fields.stateRoot)!.getAccount(new Address(hexToBytes(transferRecipient))))?.balance;
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

describe("mining/miner: long runs of blocks", () => {
  it("give the event loop a turn once a slice of building has passed (here every block: a 0 ms slice)", async () => {
    const { chain, miner } = await minerOn({ kind: "off" }, { writeQueue: new ChainWriteQueue(0) });
    const turnCounter = countEventLoopTurns();
    // 300 blocks asked for at once, as evm_mine {blocks} or a long automine run build them.
    await Promise.all(Array.from({ length: 300 }, () => miner.mineBlock([])));
    const turnsWhileBuilding = turnCounter.stop();
    expect(chain.head.number).to.equal(300n);
    expect(turnsWhileBuilding, "turns of the event loop during 300 blocks").to.be.at.least(299);
  });

  it("end an automine run when the miner stops, leaving the rest pending for the next start", async () => {
    const { chain, pool, miner, transfer } = await minerOn({ kind: "auto" });
    miner.pause();
    for (let nonce = 0; nonce < 16; nonce++) await pool.add(await transfer(nonce));
    const run = miner.resume();
    await miner.stop();
    await run;
    expect(chain.tip.number).to.equal(0n);
    expect(pool.pending()).to.have.length(16);
  });
});

describe("mining/miner: automine's answer", () => {
  const minedBlock = (outcome: InclusionOutcome) => {
    if (outcome.kind !== "mined") throw new Error(`the transaction was not mined: ${outcome.kind}`);
    return outcome.block;
  };

  it("names the block that took each transaction, whichever send's run of blocks mined it", async () => {
    const { store, chain, pool, miner, transfer } = await minerOn({ kind: "auto" });
    // Nonces 1 and 2 wait behind the gap; nonce 0 fills it, and its send mines all three.
    const [second, third, first] = [await transfer(1), await transfer(2), await transfer(0)];
    for (const transaction of [second, third, first]) await pool.add(transaction);
    expect(minedBlock(await miner.mineUntilIncluded(first)).number).to.equal(1n);
    expect(chain.head.number).to.equal(3n);
    // The third was mined by the first's send: its own finds the block on disk.
    const block = minedBlock(await miner.mineUntilIncluded(third));
    expect(block.number).to.equal(3n);
    expect(block.transactions.map((transaction) => transaction.hash)).to.deep.equal([third.hash]);
    await store.close();
  });
});
