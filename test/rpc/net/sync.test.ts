// Nodes that follow each other's chains over TCP on their own loopback addresses (127.0.0.2, .3,
// .4): a node that joins late long-syncs from a peer far ahead, then takes new blocks by gossip;
// a transaction sent to one node reaches another's pool and comes back in that node's block.
import { expect } from "chai";
import type { P2pOptions } from "../../../src/node/index.js";
import { waitUntilAnswer } from "../../helpers/p2p.js";
import { startTestNode, type TestNode, type TestNodeOverrides } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const stranger = "0x00000000000000000000000000000000000000aa";
/** Init code that emits one LOG1 with the topic 0x11..11 and deploys nothing. */
const creationEmittingLog = `0x7f${"11".repeat(32)}60006000a100`;

function p2p(host: string, changes: Partial<P2pOptions> = {}): P2pOptions {
  return { host, port: 0, bootnodes: [], maxPeers: 30, minPeers: 1, nodeKey: undefined, ...changes };
}

function multiaddrsOf(node: TestNode): string[] {
  const line = node.logs.find((record) => record.msg === "p2p listening") as { multiaddrs: string[] } | undefined;
  if (line === undefined) throw new Error("no p2p listening line");
  return line.multiaddrs;
}

describe("sync between nodes over TCP (127.0.0.2, .3, .4)", function () {
  this.timeout(60_000);
  const running = new Set<TestNode>();

  async function start(overrides: TestNodeOverrides): Promise<TestNode> {
    const node = await startTestNode({ ...overrides, sync: { requestTimeoutMs: 5_000, ...overrides.sync } });
    running.add(node);
    return node;
  }

  after(async () => {
    await Promise.all([...running].map((node) => node.stop()));
  });

  async function sameHead(nodes: readonly TestNode[], timeoutMs = 20_000): Promise<void> {
    await waitUntilAnswer(
      async () => {
        const heads = await Promise.all(nodes.map((node) => node.client.eth_getBlockByNumber("latest", false)));
        return heads.every((head) => head!.hash === heads[0]!.hash);
      },
      "the same head on every node",
      timeoutMs,
    );
  }

  it("a late node long-syncs 60 blocks with transfers and logs, follows a new block by gossip, and relays a transaction the miner mines", async () => {
    const miner = await start({ rpc: { host: "127.0.0.2" }, p2p: p2p("127.0.0.2") });
    for (let index = 0; index < 60; index++) {
      if (index % 3 === 0) await miner.client.eth_sendTransaction({ from: cow, data: creationEmittingLog, gas: "0x30d40" });
      else await miner.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
    }
    expect(await miner.client.eth_blockNumber()).to.equal("0x3c");

    const follower = await start({ rpc: { host: "127.0.0.3" }, chain: { mining: { kind: "off" } }, p2p: p2p("127.0.0.3", { bootnodes: multiaddrsOf(miner) }) });
    await sameHead([miner, follower]);
    expect(follower.logs.some((record) => record.msg === "long sync done")).to.equal(true);
    const [minerHead, followerHead] = await Promise.all([miner.client.eth_getBlockByNumber("latest", false), follower.client.eth_getBlockByNumber("latest", false)]);
    expect(followerHead!.stateRoot).to.equal(minerHead!.stateRoot);
    const filter = { fromBlock: "0x0", toBlock: "latest" };
    const [minerLogs, followerLogs] = await Promise.all([miner.client.eth_getLogs(filter), follower.client.eth_getLogs(filter)]);
    expect(minerLogs).to.have.length(20);
    expect(followerLogs).to.deep.equal(minerLogs);
    expect(await follower.client.eth_syncing()).to.equal(false);

    // A new block comes by gossip.
    await miner.client.evm_mine();
    await sameHead([miner, follower]);
    expect(await follower.client.eth_blockNumber()).to.equal("0x3d");

    // A transaction sent to the follower (which does not mine) reaches the miner, whose automine mines it; the block comes back.
    const hash = await follower.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x2" });
    await waitUntilAnswer(async () => (await follower.client.eth_getTransactionReceipt(hash)) !== null, "the follower has the receipt");
    const receipt = await miner.client.eth_getTransactionReceipt(hash);
    expect(receipt!.blockNumber).to.equal("0x3e");
    expect(await follower.client.txpool_status()).to.deep.equal({ pending: 0, queued: 0 });
  });
});
