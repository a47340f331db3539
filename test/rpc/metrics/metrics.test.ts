// The operators' Prometheus endpoint (--metrics-port): off by default; on, GET /metrics answers the
// text format with the head, the pool, blocks by importer outcome and JSON-RPC call times per method.
import { expect } from "chai";
import { request } from "node:http";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { deployEvents, topic } from "../../helpers/events.js";
import { minePoolBlock } from "../../helpers/parentChainProofs.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

function get(url: string, method = "GET"): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const call = request(url, { method, timeout: 10_000 }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, type: response.headers["content-type"], body }));
    });
    call.on("timeout", () => call.destroy(new Error("timed out")));
    call.on("error", reject);
    call.end();
  });
}

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split("\n").find((candidate) => candidate.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe("metrics: the Prometheus endpoint", function () {
  this.timeout(30_000);
  let node: TestNode;
  afterEach(async () => node.stop());

  it("is off by default", async () => {
    node = await startTestNode();
    expect(node.node.metricsUrl).to.equal(undefined);
  });

  it("serves the head, the pool, imported blocks and JSON-RPC call times", async () => {
    node = await startTestNode({ metrics: { host: "127.0.0.1", port: 0 } });
    const url = node.node.metricsUrl!;
    expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const wallet = new Wallet(keccak256(toUtf8Bytes("cow")));
    for (let nonce = 0; nonce < 2; nonce++) {
      await node.client.eth_sendRawTransaction(await wallet.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice: 0n, to: "0x00000000000000000000000000000000000000aa", value: 1n }));
    }
    await node.client.eth_blockNumber();
    await node.client.eth_getBalance("0x12", "latest").catch(() => undefined);

    const { status, type, body } = await get(url);
    expect(status).to.equal(200);
    expect(type).to.match(/^text\/plain; version=0\.0\.4/);
    expect(sample(body, "chain_node_head_number")).to.equal(2);
    expect(sample(body, 'chain_node_head_blocks_total{change="added"}')).to.equal(2);
    expect(sample(body, 'chain_node_txpool_transactions{state="pending"}')).to.equal(0);
    expect(sample(body, "chain_node_peers")).to.equal(0);
    expect(sample(body, "chain_node_syncing")).to.equal(0);
    expect(sample(body, 'chain_node_jsonrpc_call_seconds_count{method="eth_sendRawTransaction"}')).to.equal(2);
    expect(sample(body, 'chain_node_jsonrpc_call_seconds_count{method="eth_blockNumber"}')).to.equal(1);
    expect(sample(body, 'chain_node_jsonrpc_call_errors_total{method="eth_getBalance",code="-32602"}')).to.equal(1);
    expect(body).to.include("\nchain_node_nodejs_heap_size_total_bytes ");

    // A made-up method name counts as "other", not as a label of its own.
    await fetch(node.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "made_up", params: [] }) });
    expect(sample((await get(url)).body, 'chain_node_jsonrpc_call_errors_total{method="other",code="-32601"}')).to.equal(1);
    expect((await get(url.replace("/metrics", "/other"))).status).to.equal(404);
    expect((await get(url, "POST")).status).to.equal(404);
  });

  it("counts a client's eth_getLogs, not the queries the node runs ahead of clients over new blocks with logs", async () => {
    node = await startTestNode({ metrics: { host: "127.0.0.1", port: 0 } });
    const url = node.node.metricsUrl!;
    const events = await deployEvents(node.client);
    for (let value = 1; value <= 5; value++) await events.emitTwo(topic(value), topic(value + 1));
    // The blocks' logs are prepared, and queried once each (rpc/methods/ethFilters.ts), once no block has come for a while.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sample((await get(url)).body, 'chain_node_jsonrpc_call_seconds_count{method="eth_getLogs"}')).to.equal(undefined);

    const logs = await node.client.eth_getLogs({ fromBlock: "0x0", toBlock: "latest", address: events.address, topics: [topic(3)] });
    expect(logs.map((log) => log.topics)).to.deep.equal([[topic(3), topic(4)]]);
    expect(sample((await get(url)).body, 'chain_node_jsonrpc_call_seconds_count{method="eth_getLogs"}')).to.equal(1);
  });

  it("counts blocks by importer outcome", async () => {
    node = await startTestNode({ metrics: { host: "127.0.0.1", port: 0 }, chain: { miner: "external", mining: { kind: "off" } } });
    const work = await node.client.mnr_getWork();
    const pool = minePoolBlock({ hashForMergedMining: Buffer.from(work.blockHashForMergedMining.slice(2), "hex"), target: BigInt(work.target), otherTransactions: 2 });
    await node.client.mnr_submitParentBlock(pool.blockHex);
    await node.client.mnr_submitParentBlock(pool.blockHex);
    const { body } = await get(node.node.metricsUrl!);
    expect(sample(body, 'chain_node_blocks_imported_total{source="mergedMiner",result="IMPORTED_BEST"}')).to.equal(1);
    expect(sample(body, 'chain_node_blocks_imported_total{source="mergedMiner",result="EXIST"}')).to.equal(1);
  });
});
