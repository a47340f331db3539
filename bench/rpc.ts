// make bench-rpc: requests per second through the whole JSON-RPC pipeline (HTTP, parse, envelope,
// validation, dispatch, encoding) of a node running as its own process, 32 keep-alive connections.
//
// The load comes from bench/loadClient.ts, a lean Node client: on 2 cores, autocannon needs a whole
// core itself and caps even a bare node:http server near 14,500 req/s. Client and server share the
// machine, so each run also measures two reference servers answering a constant (plain node:http,
// and Koa): they show the ceiling of the machine at that moment.
//
// Then WebSocket (bench/webSocket.ts): eth_blockNumber beside HTTP, newHeads delivery under a send
// load, and the memory of idle connections; then merged mining (bench/mergedMining.ts): mnr_getWork
// and submit-to-imported latency. BENCH_RPC_ONLY=pipeline,ws-calls,ws-heads,ws-idle,mnr-work,mnr-submit
// picks parts.
import { fileURLToPath } from "node:url";
import { startListeningProcess, startNodeProcess, type NodeProcess } from "../test/helpers/nodeProcess.js";
import { runLoad } from "./loadClient.js";
import { recordResult, targetsOf, writeResults, type Target } from "./results.js";
import { benchGetWork, benchSubmitLatency } from "./mergedMining.js";
import { benchIdleConnections, benchNewHeadsLatency, benchWebSocketCalls } from "./webSocket.js";

const connections = 32;
const durationMs = Number(process.env.BENCH_SECONDS ?? 10) * 1000;
const selected = new Set((process.env.BENCH_RPC_ONLY ?? "pipeline,ws-calls,ws-heads,ws-idle,mnr-work,mnr-submit").split(","));
const baselineScript = fileURLToPath(new URL("./baselineServer.js", import.meta.url));

const chainId = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
const sha3 = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "web3_sha3", params: [`0x${"ab".repeat(32)}`] });

interface Workload {
  name: string;
  start: () => Promise<NodeProcess>;
  body: string;
  targets: Target[];
}

const workloads: Workload[] = [
  { name: "eth_chainId", start: () => startNodeProcess(["--port", "0", "--in-memory"]), body: chainId, targets: targetsOf("higher", [2, 15_000]) },
  { name: "web3_sha3 (32 bytes)", start: () => startNodeProcess(["--port", "0", "--in-memory"]), body: sha3, targets: [] },
  { name: "ref: node:http constant", start: () => startListeningProcess(baselineScript, ["node-http"]), body: chainId, targets: [] },
  { name: "ref: Koa constant", start: () => startListeningProcess(baselineScript, ["koa"]), body: chainId, targets: [] },
];

if (selected.has("pipeline")) await benchPipeline();

async function benchPipeline(): Promise<void> {
  console.log(`JSON-RPC pipeline, ${connections} keep-alive connections, ${durationMs / 1000} s each, after 3 s warm-up (node ${process.version})`);
  console.log("workload                   req/s  p50 ms  p99 ms  errors  target");
  for (const workload of workloads) {
    const server = await workload.start();
    try {
      await runLoad({ url: server.url, body: workload.body, connections, durationMs: 3_000 });
      const result = await runLoad({ url: server.url, body: workload.body, connections, durationMs });
      const verdict = recordResult(workload.name, result.perSecond, "req/s", workload.targets, {
        p50Ms: result.p50Ms,
        p99Ms: result.p99Ms,
        errors: result.errors,
      });
      console.log(
        `${workload.name.padEnd(24)} ${result.perSecond.toFixed(0).padStart(7)}  ${result.p50Ms.toFixed(2).padStart(6)}  ${result.p99Ms.toFixed(2).padStart(6)}  ${String(result.errors).padStart(6)}  ${verdict}`,
      );
    } finally {
      await server.stop();
    }
  }
}

if (selected.has("ws-calls") || selected.has("ws-heads") || selected.has("ws-idle")) {
  console.log(`WebSocket (issue 36; node ${process.version})`);
  if (selected.has("ws-calls")) await benchWebSocketCalls(durationMs);
  if (selected.has("ws-heads")) await benchNewHeadsLatency(Number(process.env.BENCH_WS_LOAD_SECONDS ?? 5));
  if (selected.has("ws-idle")) await benchIdleConnections();
}
if (selected.has("mnr-work") || selected.has("mnr-submit")) {
  console.log(`Merged mining (issue 37; node ${process.version})`);
  if (selected.has("mnr-work")) await benchGetWork(durationMs);
  if (selected.has("mnr-submit")) await benchSubmitLatency(Number(process.env.BENCH_MNR_ROUNDS ?? 200), 100);
}
writeResults("rpc");
