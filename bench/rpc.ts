// make bench-rpc: requests per second through the whole JSON-RPC pipeline (HTTP, parse, envelope,
// validation, dispatch, encoding) of a node running as its own process, 32 keep-alive connections.
import autocannon from "autocannon";
import { startNodeProcess } from "../test/helpers/nodeProcess.js";

const connections = 32;
const durationSeconds = Number(process.env.BENCH_SECONDS ?? 10);

const workloads = [
  { name: "eth_chainId", target: 15_000, body: { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] } },
  { name: "web3_sha3 (32 bytes)", target: undefined, body: { jsonrpc: "2.0", id: 1, method: "web3_sha3", params: [`0x${"ab".repeat(32)}`] } },
];

async function measure(url: string, body: unknown) {
  const result = await autocannon({
    url,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    connections,
    pipelining: 1,
    duration: durationSeconds,
  });
  return result;
}

const node = await startNodeProcess(["--port", "0", "--log-level", "warn"]);
try {
  // Warm-up, so the JIT has seen the path.
  await measure(node.url, workloads[0]!.body);
  console.log(`JSON-RPC pipeline, ${connections} keep-alive connections, ${durationSeconds} s each (node ${process.version}, ${node.url})`);
  console.log("workload                 req/s (mean)  p50 ms  p99 ms  errors  target");
  for (const workload of workloads) {
    const result = await measure(node.url, workload.body);
    const errors = result.errors + result.non2xx + result.timeouts;
    const verdict = workload.target === undefined ? "-" : `>= ${workload.target} ${result.requests.average >= workload.target ? "met" : "NOT met"}`;
    console.log(
      `${workload.name.padEnd(24)} ${result.requests.average.toFixed(0).padStart(12)}  ${String(result.latency.p50).padStart(6)}  ${String(result.latency.p99).padStart(6)}  ${String(errors).padStart(6)}  ${verdict}`,
    );
  }
} finally {
  await node.stop();
}
