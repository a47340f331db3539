// make bench-rpc: requests per second through the whole JSON-RPC pipeline (HTTP, parse, envelope,
// validation, dispatch, encoding) of a node running as its own process, 32 keep-alive connections.
// The load comes from bench/loadClient.ts (a lean Node client): on 2 cores, autocannon itself needs
// a whole core and caps even a bare Node HTTP server near 14,500 req/s.
import { startNodeProcess } from "../test/helpers/nodeProcess.js";
import { runLoad } from "./loadClient.js";

const connections = 32;
const durationMs = Number(process.env.BENCH_SECONDS ?? 10) * 1000;

const workloads = [
  { name: "eth_chainId", target: 15_000, body: { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] } },
  { name: "web3_sha3 (32 bytes)", target: undefined, body: { jsonrpc: "2.0", id: 1, method: "web3_sha3", params: [`0x${"ab".repeat(32)}`] } },
];

const node = await startNodeProcess(["--port", "0", "--log-level", "info"]);
try {
  // Warm-up, so the JIT has seen the path.
  await runLoad({ url: node.url, body: JSON.stringify(workloads[0]!.body), connections, durationMs: 3_000 });
  console.log(`JSON-RPC pipeline, ${connections} keep-alive connections, ${durationMs / 1000} s each (node ${process.version})`);
  console.log("workload                 req/s  p50 ms  p99 ms  errors  target");
  for (const workload of workloads) {
    const result = await runLoad({ url: node.url, body: JSON.stringify(workload.body), connections, durationMs });
    const verdict = workload.target === undefined ? "-" : `>= ${workload.target}: ${result.perSecond >= workload.target ? "met" : "NOT met"}`;
    console.log(
      `${workload.name.padEnd(22)} ${result.perSecond.toFixed(0).padStart(7)}  ${result.p50Ms.toFixed(2).padStart(6)}  ${result.p99Ms.toFixed(2).padStart(6)}  ${String(result.errors).padStart(6)}  ${verdict}`,
    );
  }
} finally {
  await node.stop();
}
