// Two chain-node processes, as users start them, joined over TCP: the second is given the first's
// multiaddr from its "p2p listening" log line. A kill -9 and a restart on the same data directory
// keep the peer id, and the second dials the first again by itself.
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { startNodeProcess, type NodeProcess } from "../helpers/nodeProcess.js";
import { waitUntilAnswer } from "../helpers/p2p.js";

async function rpc(url: string, method: string): Promise<unknown> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }), signal: AbortSignal.timeout(5_000) });
  return ((await response.json()) as { result: unknown }).result;
}

function listeningLine(node: NodeProcess): { peerId: string; multiaddrs: string[] } {
  for (const line of node.lines) {
    const record = JSON.parse(line) as { msg?: string; peerId?: string; multiaddrs?: string[] };
    if (record.msg === "p2p listening") return { peerId: record.peerId!, multiaddrs: record.multiaddrs! };
  }
  throw new Error("no p2p listening line");
}

describe("chain-node --p2p (two processes over TCP)", function () {
  this.timeout(60_000);
  const processes = new Set<NodeProcess>();
  let directory: string;

  async function start(args: string[]): Promise<NodeProcess> {
    const node = await startNodeProcess(["--port", "0", "--log-format", "json", "--no-mining", ...args], 20_000);
    processes.add(node);
    return node;
  }

  before(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-p2p-cli-"))));
  after(async () => {
    await Promise.all([...processes].map((node) => node.stop("SIGKILL")));
    await rm(directory, { recursive: true, force: true });
  });

  it("connects through --bootnodes: net_peerCount 0x1 on both; kill -9 and restart keep the peer id and the peering", async () => {
    const firstArgs = ["--host", "127.0.0.2", "--data-dir", join(directory, "first"), "--p2p", "--p2p-host", "127.0.0.2"];
    let first = await start([...firstArgs, "--p2p-port", "0"]);
    const { peerId, multiaddrs } = listeningLine(first);
    expect(multiaddrs[0]).to.match(/^\/ip4\/127\.0\.0\.2\/tcp\/\d+\/p2p\/16Uiu2HA\w+$/);
    expect(await rpc(first.url, "net_listening")).to.equal(true);

    const second = await start(["--host", "127.0.0.3", "--in-memory", "--p2p-host", "127.0.0.3", "--p2p-port", "0", "--bootnodes", multiaddrs[0]!]);
    await waitUntilAnswer(async () => (await rpc(first.url, "net_peerCount")) === "0x1" && (await rpc(second.url, "net_peerCount")) === "0x1", "net_peerCount 0x1 on both", 15_000);

    processes.delete(first);
    await first.stop("SIGKILL");
    await waitUntilAnswer(async () => (await rpc(second.url, "net_peerCount")) === "0x0", "the second sees the first gone", 15_000);
    const port = multiaddrs[0]!.split("/")[4]!;
    first = await start([...firstArgs, "--p2p-port", port]);
    expect(listeningLine(first).peerId).to.equal(peerId);
    await waitUntilAnswer(async () => (await rpc(first.url, "net_peerCount")) === "0x1" && (await rpc(second.url, "net_peerCount")) === "0x1", "peers again after the restart", 20_000);
    expect(await first.stop("SIGTERM")).to.equal(0);
    processes.delete(first);
    expect(await second.stop("SIGTERM")).to.equal(0);
    processes.delete(second);
  });

  it("a node killed with kill -9 in the middle of a long sync restarts on its data directory, resumes and finishes", async () => {
    const source = await start(["--host", "127.0.0.2", "--in-memory", "--p2p", "--p2p-host", "127.0.0.2", "--p2p-port", "0"]);
    const post = (method: string, params: unknown[]) => fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
    // 1,000 empty blocks: a sync long enough (a few seconds) to be caught in the middle.
    await post("hardhat_mine", ["0x3e8"]);
    expect(await rpc(source.url, "eth_blockNumber")).to.equal("0x3e8");
    const bootnodes = listeningLine(source).multiaddrs[0]!;
    const syncingArgs = ["--host", "127.0.0.3", "--data-dir", join(directory, "syncing"), "--p2p-host", "127.0.0.3", "--p2p-port", "0", "--bootnodes", bootnodes];
    let syncing = await start(syncingArgs);
    let reached = 0;
    await waitUntilAnswer(
      async () => {
        reached = Number(await rpc(syncing.url, "eth_blockNumber"));
        return reached > 0;
      },
      "the sync under way",
      20_000,
      5,
    );
    expect(reached).to.be.below(1_000);
    processes.delete(syncing);
    await syncing.stop("SIGKILL");

    syncing = await start(syncingArgs);
    const restartedAt = Number(await rpc(syncing.url, "eth_blockNumber"));
    // What was acknowledged on disk before the kill is kept (the write-ahead log), and the sync goes on from there.
    expect(restartedAt).to.be.at.least(reached);
    await waitUntilAnswer(async () => (await rpc(syncing.url, "eth_blockNumber")) === "0x3e8", "the sync finished after the restart", 40_000);
    const [sourceHead, syncedHead] = await Promise.all([
      fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["latest", false] }) }).then(async (response) => ((await response.json()) as { result: { hash: string } }).result.hash),
      fetch(syncing.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["latest", false] }) }).then(async (response) => ((await response.json()) as { result: { hash: string } }).result.hash),
    ]);
    expect(syncedHead).to.equal(sourceHead);
    expect(await syncing.stop("SIGTERM")).to.equal(0);
    processes.delete(syncing);
  });

  it("a lone node does not load libp2p: the CLI's bundle leaves it to the peer-to-peer bundle beside it", () => {
    const main = readFileSync(new URL("../../bundle/cli/chain-node.main.cjs", import.meta.url), "utf8");
    const p2p = readFileSync(new URL("../../bundle/p2p/network.js", import.meta.url), "utf8");
    expect(main).to.not.include("createLibp2p");
    expect(main).to.include('require("../p2p/network.js")');
    expect(p2p).to.include("createLibp2p");
  });

  it("refuses a bootnode that is no multiaddr with a peer id, and a p2p port in use, with a clear message", async () => {
    const { spawnSync } = await import("node:child_process");
    const { cliPath, commandRuntimeFlags } = await import("../helpers/nodeProcess.js");
    const run = (args: string[]) => spawnSync(process.execPath, [...commandRuntimeFlags(), cliPath, "--port", "0", "--in-memory", ...args], { encoding: "utf8", timeout: 20_000 });
    const noPeerId = run(["--bootnodes", "/ip4/127.0.0.1/tcp/1"]);
    expect(noPeerId.status).to.equal(2);
    expect(noPeerId.stderr).to.match(/--bootnodes takes multiaddrs ending with \/p2p\/<peer id>/);
    const notMultiaddr = run(["--bootnodes", "/ip4/not-an-ip/tcp/1/p2p/16Uiu2HAmBzGyWsh8DgUnJxoGcDDsXWxNEUeiqLp9bz2AJmw2hGYW"]);
    expect(notMultiaddr.status).to.equal(1);
    expect(notMultiaddr.stderr + notMultiaddr.stdout).to.match(/bootnode \/ip4\/not-an-ip.* is not a multiaddr/);
    const holder = await start(["--in-memory", "--p2p", "--p2p-port", "0"]);
    const port = listeningLine(holder).multiaddrs[0]!.split("/")[4]!;
    const taken = run(["--p2p", "--p2p-port", port]);
    expect(taken.status).to.equal(1);
    expect(taken.stderr + taken.stdout).to.match(/the peer-to-peer port cannot be opened on 127\.0\.0\.1:\d+/);
  });
});
