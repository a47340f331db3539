// Block timestamps on an injected clock: automined bursts stay on the clock where the rules let a
// block share its parent's second, evm_increaseTime moves exactly, evm_setNextBlockTimestamp is
// exact and refuses a time not after the head's, and dev blocks keep their parent's time.
import { expect } from "chai";
import { createLogger } from "../../../src/common/logger.js";
import { MinerClock } from "../../../src/mining/clock.js";
import { DevChain } from "../../../src/mining/devChain.js";
import { TimestampNotAfterParentError } from "../../../src/mining/miner.js";
import { minerOn } from "../../helpers/minerHarness.js";

const start = 1_800_000_000n;

async function clockedChain(sameTimestampAllowed: boolean) {
  let wall = start;
  const clock = new MinerClock(() => wall);
  const harness = await minerOn({ kind: "auto" }, { clock, rules: { sameTimestampAllowed } });
  const devChain = new DevChain(harness.chain, harness.pool, harness.miner, clock, createLogger("silent"));
  const timestampOfHead = () => harness.chain.head.header.fields.timestamp;
  return { ...harness, clock, devChain, timestampOfHead, advanceWall: (seconds: bigint) => (wall += seconds) };
}

/** Sends `count` transfers under automine, as sends do: each waits until mined. */
async function automineBurst(harness: Awaited<ReturnType<typeof clockedChain>>, count: number): Promise<void> {
  for (let nonce = 0; nonce < count; nonce++) {
    const transaction = await harness.transfer(nonce);
    await harness.pool.add(transaction);
    expect((await harness.miner.mineUntilIncluded(transaction)).kind).to.equal("mined");
  }
}

describe("mining: block timestamps on an injected clock", function () {
  this.timeout(60_000);

  it("stamps a burst of 100 automined blocks with the clock when blocks may share a second (regtest)", async () => {
    const harness = await clockedChain(true);
    await automineBurst(harness, 100);
    expect(harness.chain.head.number).to.equal(100n);
    expect(harness.timestampOfHead()).to.equal(start);
  });

  it("runs ahead one second a block where the rules want increasing timestamps", async () => {
    const harness = await clockedChain(false);
    await automineBurst(harness, 5);
    expect(harness.timestampOfHead()).to.equal(start + 4n);
  });

  it("evm_increaseTime(3600) then evm_mine gives a block exactly 3,600 s after the clock", async () => {
    const harness = await clockedChain(true);
    await automineBurst(harness, 3);
    await harness.devChain.increaseTime(3600n);
    const block = await harness.devChain.mine();
    expect(block.header.fields.timestamp).to.equal(start + 3600n);
    harness.advanceWall(7n);
    expect((await harness.devChain.mine()).header.fields.timestamp).to.equal(start + 3607n);
  });

  it("evm_setNextBlockTimestamp gives the next block exactly that time, and the clock continues from it", async () => {
    const harness = await clockedChain(true);
    await harness.devChain.setNextBlockTimestamp(start + 500n);
    await automineBurst(harness, 2);
    const first = (await harness.chain.getBlockByNumber(1n))!;
    expect(first.header.fields.timestamp).to.equal(start + 500n);
    // The second continues from it: the same second on this clock.
    expect(harness.timestampOfHead()).to.equal(start + 500n);
    expect(harness.clock.scheduled()).to.equal(undefined);
  });

  it("evm_setNextBlockTimestamp refuses the head's time or earlier, and changes nothing", async () => {
    const harness = await clockedChain(true);
    await automineBurst(harness, 1);
    for (const timestamp of [harness.timestampOfHead(), harness.timestampOfHead() - 1n]) {
      const refusal = await harness.devChain.setNextBlockTimestamp(timestamp).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).to.be.instanceOf(TimestampNotAfterParentError);
      expect(harness.clock.scheduled()).to.equal(undefined);
    }
  });

  it("a dev block keeps its parent's time and leaves a scheduled time to the next block", async () => {
    const harness = await clockedChain(true);
    await harness.devChain.setNextBlockTimestamp(start + 90n);
    await harness.devChain.changeAccount({ kind: "balance", address: new Uint8Array(20).fill(7), balance: 5n });
    expect(harness.chain.head.number).to.equal(1n);
    expect(harness.timestampOfHead()).to.equal(harness.chain.genesis.header.fields.timestamp);
    expect((await harness.devChain.mine()).header.fields.timestamp).to.equal(start + 90n);
  });
});
