// Two real nodes joined over TCP on their own loopback addresses (127.0.0.2 and 127.0.0.3): the
// second dials the first as its bootnode; net_ methods answer from the network; a node on a data
// directory keeps its peer id across restarts; mined blocks reach the peer's status of the node.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { listeningLine, tcpP2pOptions, waitUntilAnswer } from "../../helpers/p2p.js";
import { startTestNode, type TestNode, type TestNodeOverrides } from "../../helpers/testNode.js";

describe("peer-to-peer over TCP (127.0.0.2, 127.0.0.3)", function () {
  this.timeout(40_000);
  const running = new Set<TestNode>();
  let directory: string;

  async function start(overrides: TestNodeOverrides): Promise<TestNode> {
    const node = await startTestNode({ chain: { mining: { kind: "off" } }, ...overrides });
    running.add(node);
    return node;
  }

  async function stop(node: TestNode): Promise<void> {
    running.delete(node);
    await node.stop();
  }

  before(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-p2p-"))));
  after(async () => {
    await Promise.all([...running].map((node) => node.stop()));
    await rm(directory, { recursive: true, force: true });
  });

  it("connects through the bootnode multiaddr of the log line: net_peerCount 0x1 and net_peerList on both; a restart keeps the peer id", async () => {
    const firstDirectory = join(directory, "first");
    let first = await start({ rpc: { host: "127.0.0.2" }, dataDir: firstDirectory, p2p: tcpP2pOptions("127.0.0.2") });
    const { multiaddrs, peerId, nodeId } = listeningLine(first);
    expect(multiaddrs).to.have.length(1);
    expect(multiaddrs[0]).to.match(/^\/ip4\/127\.0\.0\.2\/tcp\/\d+\/p2p\/16Uiu2HA\w+$/);
    expect(multiaddrs[0]!.endsWith(`/p2p/${peerId}`)).to.equal(true);
    expect(await first.client.net_listening()).to.equal(true);
    expect(await first.client.net_peerCount()).to.equal("0x0");

    const second = await start({ rpc: { host: "127.0.0.3" }, p2p: tcpP2pOptions("127.0.0.3", { bootnodes: multiaddrs }) });
    const secondLine = listeningLine(second);
    await waitUntilAnswer(async () => (await first.client.net_peerCount()) === "0x1" && (await second.client.net_peerCount()) === "0x1", "net_peerCount 0x1 on both");
    const firstPeers = await first.client.net_peerList();
    const secondPeers = await second.client.net_peerList();
    expectValidResult("net_peerList", firstPeers);
    // Each side sees the other's node id (abbreviated) and its own loopback address.
    expect(firstPeers).to.have.length(1);
    expect(firstPeers[0]).to.match(new RegExp(`^${secondLine.nodeId.slice(0, 8)} \\| /127\\.0\\.0\\.3:\\d+$`));
    expect(secondPeers).to.deep.equal([`${nodeId.slice(0, 8)} | /127.0.0.2:${multiaddrs[0]!.split("/")[4]}`]);

    // The first restarts on its data directory: the same key, so the same peer id; the second redials it.
    const port = Number(multiaddrs[0]!.split("/")[4]);
    await stop(first);
    await waitUntilAnswer(async () => (await second.client.net_peerCount()) === "0x0", "the second sees the first gone");
    first = await start({ rpc: { host: "127.0.0.2" }, dataDir: firstDirectory, p2p: tcpP2pOptions("127.0.0.2", { port }) });
    expect(listeningLine(first).peerId).to.equal(peerId);
    expect(listeningLine(first).multiaddrs).to.deep.equal(multiaddrs);
    await waitUntilAnswer(async () => (await first.client.net_peerCount()) === "0x1" && (await second.client.net_peerCount()) === "0x1", "reconnected after the restart", 20_000);

    // A block mined on the first reaches the second's record of it through the status refresh.
    await first.client.evm_mine();
    const network = second.node.peerNetwork!;
    await waitUntilAnswer(async () => network.readyPeers()[0]?.status?.bestNumber === 1n, "the second hears block 1");
    const head = await first.client.eth_getBlockByNumber("latest", false);
    expect(`0x${Buffer.from(network.readyPeers()[0]!.status!.bestHash).toString("hex")}`).to.equal(head!.hash);

    // While a peer is connected, the dev methods that rewrite history refuse, and change nothing.
    const snapshot = await first.client.evm_snapshot();
    await first.client.evm_mine();
    const refusal = /^evm_(revert|reset|increaseTime) is refused while peers are connected \(1\): it would rewrite blocks or time they hold too/;
    await expectRpcError(first.client.evm_revert(snapshot), -32000, refusal);
    await expectRpcError(first.client.evm_reset(), -32000, refusal);
    await expectRpcError(first.client.evm_increaseTime(60), -32000, refusal);
    expect(await first.client.eth_blockNumber()).to.equal("0x2");
  });

  it("a node of another network is refused: no peer on either side", async () => {
    const regtest = await start({ rpc: { host: "127.0.0.2" }, p2p: tcpP2pOptions("127.0.0.2") });
    const devnet = await start({ networkId: 32, rpc: { host: "127.0.0.3" }, p2p: tcpP2pOptions("127.0.0.3", { bootnodes: listeningLine(regtest).multiaddrs }) });
    const regtestNetwork = regtest.node.peerNetwork!;
    const devnetPeerId = listeningLine(devnet).peerId;
    await waitUntilAnswer(async () => regtestNetwork.peerRecord(devnetPeerId)?.events.invalidNetwork !== undefined, "the refusal recorded");
    expect(await regtest.client.net_peerCount()).to.equal("0x0");
    expect(await devnet.client.net_peerCount()).to.equal("0x0");
    await Promise.all([stop(regtest), stop(devnet)]);
  });

  it("an in-memory node gets a new peer id each start; --p2p-key fixes it", async () => {
    const a = await start({ rpc: { host: "127.0.0.2" }, p2p: tcpP2pOptions("127.0.0.2") });
    const b = await start({ rpc: { host: "127.0.0.2" }, p2p: tcpP2pOptions("127.0.0.2") });
    expect(listeningLine(a).peerId).to.not.equal(listeningLine(b).peerId);
    await Promise.all([stop(a), stop(b)]);
    const key = new Uint8Array(32).fill(7);
    const c = await start({ rpc: { host: "127.0.0.2" }, p2p: tcpP2pOptions("127.0.0.2", { nodeKey: key }) });
    const id = listeningLine(c).peerId;
    await stop(c);
    const d = await start({ rpc: { host: "127.0.0.2" }, p2p: tcpP2pOptions("127.0.0.2", { nodeKey: key }) });
    expect(listeningLine(d).peerId).to.equal(id);
    await stop(d);
  });
});
