// The dev methods with interval mining (blocks keep coming while snapshots are reverted), pausing
// and resuming it, and a revert on a LevelDB data dir that survives a restart.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonRpcProvider, Wallet, keccak256, toUtf8Bytes } from "ethers";
import type { RpcClient } from "../../../generated/client.js";
import { expectValidResult } from "../../helpers/results.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
const stranger = "0x00000000000000000000000000000000000000aa";

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function blockNumber(client: RpcClient): Promise<bigint> {
  return BigInt(await client.eth_blockNumber());
}

/** Waits (at most `timeoutMs`) until the head reaches `number`. */
async function waitForBlock(client: RpcClient, number: bigint, timeoutMs = 6_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await blockNumber(client)) < number) {
    if (Date.now() > deadline) expect.fail(`block ${number} did not come within ${timeoutMs} ms`);
    await sleep(50);
  }
}

async function block(client: RpcClient, tag: string) {
  const found = await client.eth_getBlockByNumber(tag, false);
  expectValidResult("eth_getBlockByNumber", found);
  return found!;
}

describe("evm: with interval mining", function () {
  this.timeout(60_000);
  let node: TestNode;
  let provider: JsonRpcProvider;
  let wallet: Wallet;

  beforeEach(async () => {
    node = await startTestNode({ chain: { mining: { kind: "interval", blockTimeSeconds: 1 } } });
    provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true, cacheTimeout: -1 });
    provider.pollingInterval = 50;
    wallet = new Wallet(cowKey, provider);
  });
  afterEach(async () => {
    provider.destroy();
    await node.stop();
  });

  it("reverts while interval blocks keep coming, twice to the same snapshot; the chain grows again from the snapshot's head", async () => {
    await waitForBlock(node.client, 1n);
    const id = await node.client.evm_snapshot();
    const snapshotHead = await block(node.client, "latest");
    const snapshotNumber = BigInt(snapshotHead.number!);

    for (let round = 0; round < 2; round++) {
      const sent = await wallet.sendTransaction({ to: stranger, value: 5n, gasLimit: 21_000n, nonce: 0 });
      const receipt = await sent.wait(1, 10_000);
      expect(receipt!.status).to.equal(1);
      await node.client.evm_mine(); // an explicit block between interval blocks
      const removedBlock = await block(node.client, "latest");
      expect(BigInt(removedBlock.number!) > snapshotNumber).to.equal(true);

      expect(await node.client.evm_revert(id)).to.equal(true);
      // The snapshot's head is canonical again; what was mined after it is gone (interval blocks
      // may already follow, on top of the snapshot's head).
      expect((await block(node.client, snapshotHead.number!)).hash).to.equal(snapshotHead.hash);
      expect(await node.client.eth_getBlockByHash(removedBlock.hash!, false)).to.equal(null);
      expect(await node.client.eth_getTransactionReceipt(sent.hash)).to.equal(null);
      expect(await node.client.eth_getTransactionByHash(sent.hash)).to.equal(null);
      expect(await node.client.eth_getBalance(stranger, "latest")).to.equal("0x0");

      await waitForBlock(node.client, snapshotNumber + 1n);
      const next = await block(node.client, `0x${(snapshotNumber + 1n).toString(16)}`);
      expect(next.parentHash).to.equal(snapshotHead.hash);
      expect(BigInt(next.timestamp) > BigInt(snapshotHead.timestamp)).to.equal(true);
    }
  });

  it("evm_stopMining pauses interval blocks while transactions wait in the pool; evm_startMining resumes them", async () => {
    await waitForBlock(node.client, 1n);
    expect(await node.client.evm_stopMining()).to.equal(null);
    expect(await node.client.eth_mining()).to.equal(false);
    // A block being built when the pause came may still land; after that, none.
    await sleep(1_200);
    const paused = await blockNumber(node.client);
    const sent = await wallet.sendTransaction({ to: stranger, value: 1n, gasLimit: 21_000n, nonce: 0 });
    await sleep(2_200);
    expect(await blockNumber(node.client)).to.equal(paused);
    expect(await node.client.txpool_status()).to.deep.equal({ pending: 1, queued: 0 });
    expect((await node.client.eth_getTransactionByHash(sent.hash))!.blockNumber).to.equal(null);

    expect(await node.client.evm_startMining()).to.equal(null);
    expect(await node.client.eth_mining()).to.equal(true);
    await waitForBlock(node.client, paused + 1n);
    const receipt = await sent.wait(1, 10_000);
    expect(BigInt(receipt!.blockNumber) > paused).to.equal(true);
  });
});

describe("evm: a revert on a data dir", function () {
  this.timeout(60_000);
  let directory: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), "chain-node-evm-"));
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it("leaves the reverted head after a restart; removed blocks and transactions stay unknown", async () => {
    const dataDir = join(directory, "chain");
    let node: TestNode = await startTestNode({ dataDir });
    let removedBlockHash: string;
    let removedTransaction: string;
    let head: Awaited<ReturnType<typeof block>>;
    try {
      await node.client.evm_mine();
      await node.client.evm_mine();
      head = await block(node.client, "latest");
      const id = await node.client.evm_snapshot();
      const provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true, cacheTimeout: -1 });
      try {
        const sent = await new Wallet(cowKey, provider).sendTransaction({ to: stranger, value: 9n, gasLimit: 21_000n, nonce: 0 });
        removedTransaction = sent.hash;
      } finally {
        provider.destroy();
      }
      await node.client.evm_mine();
      removedBlockHash = (await block(node.client, "0x3")).hash!;
      expect(await node.client.eth_blockNumber()).to.equal("0x4");
      expect(await node.client.evm_revert(id)).to.equal(true);
    } finally {
      await node.stop();
    }

    node = await startTestNode({ dataDir });
    try {
      expect(await node.client.eth_blockNumber()).to.equal("0x2");
      expect((await block(node.client, "latest")).hash).to.equal(head.hash);
      expect(await node.client.eth_getBlockByHash(removedBlockHash, false)).to.equal(null);
      expect(await node.client.eth_getBlockByNumber("0x3", false)).to.equal(null);
      expect(await node.client.eth_getTransactionByHash(removedTransaction)).to.equal(null);
      expect(await node.client.eth_getBalance(stranger, "latest")).to.equal("0x0");
      // The chain goes on from the reverted head.
      await node.client.evm_mine();
      expect((await block(node.client, "latest")).parentHash).to.equal(head.hash);
    } finally {
      await node.stop();
    }
  });

  it("continues the clock from a head stamped ahead of the wall clock after a restart", async () => {
    const dataDir = join(directory, "chain");
    const day = 86_400n;
    let node: TestNode = await startTestNode({ dataDir });
    let moved: bigint;
    try {
      await node.client.evm_increaseTime(`0x${day.toString(16)}`);
      await node.client.evm_mine();
      moved = BigInt((await block(node.client, "latest")).timestamp);
    } finally {
      await node.stop();
    }
    node = await startTestNode({ dataDir });
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      await node.client.evm_mine();
      // Time runs on from the head's: two seconds later by the wall clock, not just head + 1
      // (which every block would get until the wall clock had caught up a day later).
      const next = BigInt((await block(node.client, "latest")).timestamp);
      expect(next - moved >= 2n && next - moved < 60n, `${next - moved} s after the moved head`).to.equal(true);
    } finally {
      await node.stop();
    }
  });
});
