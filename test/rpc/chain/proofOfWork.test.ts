// Every block the node mines carries its proof of work (issue 35): an automined transfer's block, a
// dev block, evm_mine blocks and interval blocks, read back over HTTP, have the three merged-mining
// fields set, and they pass the merged-mining rule at the block's difficulty, which follows the
// difficulty rule from a genesis of difficulty 4096 (regtest: divisor 2048, 10 s, reset after 600 s).
import { expect } from "chai";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonRpcProvider, Wallet, getBytes, keccak256, toUtf8Bytes } from "ethers";
import type { RpcClient } from "../../../generated/client.js";
import { consensusConstantsFor } from "../../../src/consensus/constants.js";
import { calculateDifficulty } from "../../../src/consensus/difficulty.js";
import { checkMergedMiningProof } from "../../../src/consensus/mergedMiningProof.js";
import { expectValidResult } from "../../helpers/results.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
const stranger = "0x00000000000000000000000000000000000000aa";
const regtest = consensusConstantsFor({ networkId: 33 });

async function blockAt(client: RpcClient, number: bigint) {
  const found = await client.eth_getBlockByNumber(`0x${number.toString(16)}`, false);
  expectValidResult("eth_getBlockByNumber", found);
  return found!;
}

async function head(client: RpcClient): Promise<bigint> {
  return BigInt(await client.eth_blockNumber());
}

describe("chain: the proof of work of mined blocks", function () {
  this.timeout(60_000);
  let directory: string;
  let node: TestNode;
  let provider: JsonRpcProvider;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), "chain-node-pow-"));
    const genesisFile = join(directory, "genesis.json");
    const cow = new Wallet(cowKey).address;
    await writeFile(genesisFile, JSON.stringify({ difficulty: "4096", alloc: { [cow]: { balance: "1000000000000000000000" } } }));
    node = await startTestNode({ chain: { genesisFile } });
    provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true, cacheTimeout: -1 });
    provider.pollingInterval = 50;
  });
  afterEach(async () => {
    provider.destroy();
    await node.stop();
    await rm(directory, { recursive: true, force: true });
  });

  it("automine, dev, evm_mine and interval blocks pass the merged-mining rule; their difficulty follows the rule", async () => {
    const wallet = new Wallet(cowKey, provider);
    const sent = await wallet.sendTransaction({ to: stranger, value: 5n, gasLimit: 21_000n });
    expect((await sent.wait(1, 10_000))!.status).to.equal(1);
    await node.client.anvil_setBalance(stranger, "0x10");
    // evm_mine at exact times: sooner than 10 s after the parent raises the difficulty by
    // parent / 2048, later lowers it, ten minutes or more drops it to the minimum.
    const moves: Array<[seconds: bigint, expected: (parent: bigint) => bigint]> = [
      [1n, (parent) => parent + parent / 2048n],
      [2n, (parent) => parent + parent / 2048n],
      [10n, (parent) => parent],
      [30n, (parent) => parent - parent / 2048n],
      [600n, () => 1n],
    ];
    for (const [seconds, expected] of moves) {
      const parent = await blockAt(node.client, await head(node.client));
      await node.client.evm_mine(Number(BigInt(parent.timestamp!) + seconds));
      const mined = await blockAt(node.client, await head(node.client));
      expect(BigInt(mined.difficulty!), `${seconds} s after the parent`).to.equal(expected(BigInt(parent.difficulty!)));
    }
    await node.client.evm_mine();
    const beforeInterval = await head(node.client);
    await node.client.evm_setIntervalMining(1);
    const deadline = Date.now() + 10_000;
    while ((await head(node.client)) <= beforeInterval) {
      if (Date.now() > deadline) expect.fail("no interval block within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await node.client.evm_setIntervalMining(0);

    const last = await head(node.client);
    expect(last >= 9n).to.equal(true);
    let parent = await blockAt(node.client, 0n);
    expect(BigInt(parent.difficulty!)).to.equal(4096n);
    // The first blocks moved up from 4096, as the rule says: the difficulty is no longer a copy of the genesis'.
    expect(BigInt((await blockAt(node.client, 1n)).difficulty!)).to.not.equal(0n);
    for (let number = 1n; number <= last; number++) {
      const block = await blockAt(node.client, number);
      const fields = [block.parentMergedMiningHeader!, block.parentMergedMiningMerkleProof!, block.parentMergedMiningCoinbaseTransaction!];
      expect(fields[0], `block ${number}`).to.match(/^0x[0-9a-f]{160}$/);
      expect(fields[2]!.length, `block ${number}`).to.be.greaterThan(2 + 80);
      // One transaction in the parent block: the coinbase is its merkle root, the branch is empty.
      expect(fields[1]).to.equal("0x");
      const check = checkMergedMiningProof({
        hashForMergedMining: getBytes(block.hashForMergedMining!),
        difficulty: BigInt(block.difficulty!),
        parentHeader: getBytes(fields[0]!),
        merkleProof: getBytes(fields[1]!),
        compressedCoinbase: getBytes(fields[2]!),
      });
      expect(check.ok, `block ${number}: ${JSON.stringify(check)}`).to.equal(true);
      expect(block.hash).to.not.equal(block.hashForMergedMining);
      const expected = calculateDifficulty(
        { timestamp: BigInt(block.timestamp!), uncleCount: 0 },
        { difficulty: BigInt(parent.difficulty!), timestamp: BigInt(parent.timestamp!) },
        regtest,
      );
      expect(BigInt(block.difficulty!), `difficulty of block ${number}`).to.equal(expected);
      parent = block;
    }
  });
});
