// Nodes that follow each other's chains over TCP on their own loopback addresses (127.0.0.2, .3,
// .4): a node that joins late long-syncs from a peer far ahead, then takes new blocks by gossip;
// a transaction sent to one node reaches another's pool and comes back in that node's block.
import { expect } from "chai";
import { listeningLine, tcpP2pOptions, waitUntilAnswer } from "../../helpers/p2p.js";
import { startTestNode, type TestNode, type TestNodeOverrides } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const cow1 = "0x7986b3df570230288501eea3d890bd66948c9b79";
const stranger = "0x00000000000000000000000000000000000000aa";
/**
 * A counter: each call adds 1 to storage slot 1 and logs the new value (LOG0). Its init code copies
 * the 19-byte runtime after it to memory and returns it.
 */
const counterRuntime = "6001546001018060015560005260206000a000";
const counterCreation = `0x6013600c60003960136000f3${counterRuntime}`;
/** Init code that emits one LOG1 with the topic 0x11..11 and deploys nothing. */
const creationEmittingLog = `0x7f${"11".repeat(32)}60006000a100`;

/** eth_sendTransaction of each of `transactions` in one JSON-RPC batch; throws on the first error. */
async function sendBatch(node: TestNode, transactions: readonly object[]): Promise<void> {
  const body = JSON.stringify(transactions.map((transaction, index) => ({ jsonrpc: "2.0", id: index, method: "eth_sendTransaction", params: [transaction] })));
  const response = await fetch(node.url, { method: "POST", headers: { "content-type": "application/json" }, body });
  const answers = (await response.json()) as { error?: { message: string } }[];
  const failed = answers.find((answer) => answer.error !== undefined);
  if (failed !== undefined) throw new Error(`a send failed: ${failed.error!.message}`);
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

  it("three nodes sync 1,000 blocks with a contract's calls, logs and transfers from genesis (long sync), follow a new block by gossip, and relay a transaction the miner mines", async function () {
    this.timeout(120_000);
    const miner = await start({ rpc: { host: "127.0.0.2" }, p2p: tcpP2pOptions("127.0.0.2") });
    const deployment = await miner.client.eth_sendTransaction({ from: cow, data: counterCreation, gas: "0x30d40" });
    const counter = (await miner.client.eth_getTransactionReceipt(deployment))!.contractAddress!;
    const sends: object[] = [];
    for (let index = 1; index < 1_000; index++) {
      if (index % 3 === 0) sends.push({ from: cow, to: counter, gas: "0x186a0" });
      else if (index % 3 === 1) sends.push({ from: cow1, data: creationEmittingLog, gas: "0x30d40" });
      else sends.push({ from: cow, to: stranger, value: "0x1" });
    }
    // In batches of 100 (each send its own block under automine): fewer round trips on a busy machine.
    for (let start = 0; start < sends.length; start += 100) await sendBatch(miner, sends.slice(start, start + 100));
    expect(await miner.client.eth_blockNumber()).to.equal("0x3e8");

    const followers = [
      await start({ rpc: { host: "127.0.0.3" }, chain: { mining: { kind: "off" } }, metrics: { host: "127.0.0.3", port: 0 }, p2p: tcpP2pOptions("127.0.0.3", { bootnodes: listeningLine(miner).multiaddrs }) }),
      await start({ rpc: { host: "127.0.0.4" }, chain: { mining: { kind: "off" } }, p2p: tcpP2pOptions("127.0.0.4", { bootnodes: listeningLine(miner).multiaddrs }) }),
    ];
    const follower = followers[0]!;
    await sameHead([miner, ...followers], 40_000);
    for (const node of followers) expect(node.logs.some((record) => record.msg === "long sync done")).to.equal(true);
    const minerHead = await miner.client.eth_getBlockByNumber("latest", false);
    const filter = { fromBlock: "0x0", toBlock: "latest" };
    const minerLogs = await miner.client.eth_getLogs(filter);
    expect(minerLogs).to.have.length(666);
    for (const node of followers) {
      expect((await node.client.eth_getBlockByNumber("latest", false))!.stateRoot).to.equal(minerHead!.stateRoot);
      expect(await node.client.eth_getLogs(filter)).to.deep.equal(minerLogs);
      expect(await node.client.eth_getStorageAt(counter, "0x1", "latest")).to.equal(await miner.client.eth_getStorageAt(counter, "0x1", "latest"));
      expect(await node.client.eth_syncing()).to.equal(false);
    }
    expect(BigInt(await follower.client.eth_getStorageAt(counter, "0x1", "latest"))).to.equal(333n);

    // A new block comes by gossip.
    await miner.client.evm_mine();
    await sameHead([miner, ...followers]);
    expect(await follower.client.eth_blockNumber()).to.equal("0x3e9");
    // A burst of 50 automined blocks reaches the followers by gossip, each imported once its parent is (queued parents count).
    await sendBatch(miner, Array.from({ length: 50 }, () => ({ from: cow1, to: stranger, value: "0x3" })));
    await sameHead([miner, ...followers]);
    expect(await follower.client.eth_blockNumber()).to.equal("0x41b");
    // The operators' metrics count the gossip and the requests.
    const metrics = await (await fetch(follower.node.metricsUrl!)).text();
    expect(metrics).to.match(/^chain_node_gossip_messages_total\{topic="block",verdict="accept"\} [1-9]\d*$/m);
    expect(metrics).to.match(/^chain_node_peer_requests_total\{protocol="bodies",outcome="answered"\} [1-9]\d*$/m);
    expect(metrics).to.match(/^chain_node_syncing 0$/m);

    // A transaction sent to a follower (which does not mine) reaches the miner, whose automine mines it; the block comes back to both followers.
    const hash = await follower.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x2" });
    for (const node of followers) await waitUntilAnswer(async () => (await node.client.eth_getTransactionReceipt(hash)) !== null, "the followers have the receipt");
    const receipt = await miner.client.eth_getTransactionReceipt(hash);
    expect(receipt!.blockNumber).to.equal("0x41c");
    expect(await follower.client.txpool_status()).to.deep.equal({ pending: 0, queued: 0 });
  });

  it("partitions that mined 30 and 40 blocks apart heal onto the heavier branch: the lighter side's filter sees removed logs and its transaction is back in its pool", async () => {
    const off = { mining: { kind: "off" as const } };
    const light = await start({ rpc: { host: "127.0.0.2" }, chain: off, p2p: tcpP2pOptions("127.0.0.2") });
    const heavy = await start({ rpc: { host: "127.0.0.3" }, chain: off, p2p: tcpP2pOptions("127.0.0.3") });
    // The light side: a block with a log-emitting creation, then two more; a filter sees the log.
    const filter = await light.client.eth_newFilter({ fromBlock: "0x0" });
    const lostTransaction = await light.client.eth_sendTransaction({ from: cow, data: creationEmittingLog, gas: "0x30d40" });
    // 30 blocks: the branches part further back than block-by-block following reaches (24).
    await light.client.hardhat_mine("0x1e");
    const seen = (await light.client.eth_getFilterChanges(filter)) as { removed: boolean; transactionHash: string }[];
    expect(seen).to.have.length(1);
    expect(seen[0]!.removed).to.equal(false);
    // The heavy side: 40 blocks, one with a transfer of another sender.
    await heavy.client.eth_sendTransaction({ from: cow1, to: stranger, value: "0x5" });
    await heavy.client.hardhat_mine("0x28");

    // A third node joins both: everyone ends on the heavy branch.
    const bridge = await start({ rpc: { host: "127.0.0.4" }, chain: off, p2p: tcpP2pOptions("127.0.0.4", { bootnodes: [...listeningLine(light).multiaddrs, ...listeningLine(heavy).multiaddrs] }) });
    await sameHead([light, heavy, bridge]);
    const heavyHead = await heavy.client.eth_getBlockByNumber("latest", false);
    expect(heavyHead!.number).to.equal("0x28");
    expect((await light.client.eth_getBlockByNumber("latest", false))!.hash).to.equal(heavyHead!.hash);

    const changes = (await light.client.eth_getFilterChanges(filter)) as { removed: boolean; transactionHash: string }[];
    expect(changes.map(({ removed, transactionHash }) => ({ removed, transactionHash }))).to.deep.equal([{ removed: true, transactionHash: lostTransaction }]);
    expect(await light.client.eth_getTransactionReceipt(lostTransaction)).to.equal(null);
    const pending = await light.client.txpool_content();
    expect(Object.keys(pending.pending)).to.include(cow.slice(2));
  });

  it("eth_syncing is an object while a late node long-syncs 200 blocks from two peers, its miner waiting meanwhile, and false after", async () => {
    const miner = await start({ rpc: { host: "127.0.0.2" }, p2p: tcpP2pOptions("127.0.0.2") });
    for (let index = 0; index < 200; index++) await miner.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
    const follower = await start({ rpc: { host: "127.0.0.3" }, chain: { mining: { kind: "off" } }, p2p: tcpP2pOptions("127.0.0.3", { bootnodes: listeningLine(miner).multiaddrs }) });
    await sameHead([miner, follower]);

    // The late node automines: its miner waits while it syncs (eth_mining false between two syncing answers).
    const late = await start({ rpc: { host: "127.0.0.4" }, p2p: tcpP2pOptions("127.0.0.4", { bootnodes: [...listeningLine(miner).multiaddrs, ...listeningLine(follower).multiaddrs] }) });
    const statuses: unknown[] = [];
    const miningWhileSyncing: boolean[] = [];
    const deadline = Date.now() + 30_000;
    for (;;) {
      const syncing = await late.client.eth_syncing();
      const mining = await late.client.eth_mining();
      const [stillSyncing, blockNumber] = await Promise.all([late.client.eth_syncing(), late.client.eth_blockNumber()]);
      if (syncing !== false && stillSyncing !== false) miningWhileSyncing.push(mining);
      if (syncing !== false) statuses.push(syncing);
      if (blockNumber === "0xc8" && syncing === false) break;
      if (Date.now() > deadline) throw new Error(`the late node did not reach block 200 (at ${blockNumber})`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(statuses.length).to.be.greaterThan(0);
    for (const status of statuses) {
      expect(status).to.have.keys("startingBlock", "currentBlock", "highestBlock");
      expect((status as { highestBlock: string }).highestBlock).to.equal("0xc8");
      expect((status as { startingBlock: string }).startingBlock).to.equal("0x0");
    }
    await sameHead([miner, follower, late]);
    expect(await late.client.eth_syncing()).to.equal(false);
    expect(miningWhileSyncing.length).to.be.greaterThan(0);
    expect(miningWhileSyncing.every((mining) => !mining)).to.equal(true);
    expect(await late.client.eth_mining()).to.equal(true);
  });
});
