// make bench-traces: struct-log trace answers, in two parts (BENCH_TRACES=compare,rss picks them).
//   - compare: debug_traceTransaction of bench/tracing.ts's ~25,000-step loop with the tracer's
//     defaults, with the stack on, and without stack and memory, on this build and on another one
//     (BENCH_OTHER: its dist/bundle/cli/chain-node.cjs, say of a git worktree built with make
//     build), in alternating rounds so that the host's changes of speed fall on both: the median
//     time and the answer's size of each. Both nodes run with the response limit raised (an older
//     build holds single answers to it) and on a LevelDB data dir (traces on the call worker);
//     beside the time, the node process's CPU time per trace (all threads), steadier on a busy host.
//   - rss: one trace answer of BENCH_TRACE_MB (default 1,000) megabytes, stack and memory on (a
//     loop over 1 KiB of memory), read by a client at BENCH_READ_MBPS (default 100) MB/s; the
//     node's resident memory is sampled meanwhile. The answer must arrive whole, or be refused with
//     -32011 naming the limit, and the node's peak RSS stay under 1.5 times the answer's size.
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { startListeningProcess, startNodeProcess, commandRuntimeFlags, type NodeProcess } from "../test/helpers/nodeProcess.js";
import { memoryOf } from "./chainClient.js";
import { recordResult, targetsOf, writeResults } from "./results.js";
import { sendTraceLoop, timeTrace, traceVariants } from "./tracing.js";

const parts = new Set((process.env.BENCH_TRACES ?? "compare,rss").split(","));
const rounds = Number(process.env.BENCH_TRACE_ROUNDS ?? 10);
const chainId = 33;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** CPU time a process has used (all its threads, user and system), in milliseconds (Linux /proc, 10 ms ticks). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A node of the bundle at `bundle` (undefined: this build) on a fresh data dir under `workDir`. */
async function startBuild(bundle: string | undefined, dataDir: string, extraArgs: string[]): Promise<NodeProcess> {
  const args = ["--port", "0", "--data-dir", dataDir, ...extraArgs];
  return bundle === undefined ? startNodeProcess(args, 30_000) : startListeningProcess(bundle, args, 30_000, commandRuntimeFlags(bundle));
}

async function compare(workDir: string): Promise<void> {
  const other = process.env.BENCH_OTHER;
  const builds: { name: string; bundle: string | undefined }[] = [{ name: "this build", bundle: undefined }];
  if (other !== undefined) builds.push({ name: "other build", bundle: other });
  const args = ["--rpc-response-limit", String(2 ** 31 - 1), "--call-timeout", "60000"];
  const nodes: NodeProcess[] = [];
  try {
    for (const [index, build] of builds.entries()) nodes.push(await startBuild(build.bundle, join(workDir, `compare-${index}`), args));
    const hashes = await Promise.all(nodes.map(async (node) => (await sendTraceLoop(node.url)).hash));
    console.log(`debug_traceTransaction of a 25,002-step transaction, median of ${rounds} alternating rounds${other === undefined ? "" : ` (other: ${other})`}`);
    for (const variant of traceVariants) {
      const times = nodes.map((): number[] => []);
      const cpuMs = nodes.map(() => 0);
      const bytes = nodes.map(() => 0);
      // Untimed traces first: the worker started, the replay's code compiled.
      for (let warmUp = 0; warmUp < 3; warmUp++) for (const [index, node] of nodes.entries()) bytes[index] = (await timeTrace(node.url, hashes[index]!, variant.options)).bytes;
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? nodes.map((_node, index) => index) : nodes.map((_node, index) => nodes.length - 1 - index);
        for (const index of order) {
          const pid = nodes[index]!.child.pid!;
          const cpuBefore = cpuMsOf(pid);
          times[index]!.push((await timeTrace(nodes[index]!.url, hashes[index]!, variant.options)).ms);
          cpuMs[index]! += cpuMsOf(pid) - cpuBefore;
        }
      }
      const line = builds
        .map((build, index) => `${build.name} ${median(times[index]!).toFixed(1).padStart(7)} ms (CPU ${(cpuMs[index]! / rounds).toFixed(0).padStart(4)} ms) ${(bytes[index]! / 1e6).toFixed(1).padStart(6)} MB`)
        .join("   ");
      console.log(`  ${variant.name.padEnd(12)} ${JSON.stringify(variant.options).padEnd(42)} ${line}`);
      recordResult(`debug_traceTransaction ${variant.name} (side by side)`, median(times[0]!), "ms", [], {
        answerBytes: bytes[0]!,
        cpuMs: cpuMs[0]! / rounds,
        ...(nodes.length > 1 ? { otherMs: median(times[1]!), otherCpuMs: cpuMs[1]! / rounds, otherAnswerBytes: bytes[1]! } : {}),
      });
    }
  } finally {
    await Promise.all(nodes.map((node) => node.stop()));
  }
}

// Runtime: MSTORE at 0x3e0 (1 KiB of memory), counter = K; loop { counter -= 1 } while counter != 0:
// 7 steps a round, each with 32 memory words and a stack of one to three words.
function memoryLoopInit(rounds: number): string {
  const counter = rounds.toString(16).padStart(6, "0");
  const runtime = "600161" + "03e0" + "52" + `62${counter}` + "5b" + "6001" + "90" + "03" + "80" + "61000a" + "57" + "00";
  const length = (runtime.length / 2).toString(16).padStart(2, "0");
  return `0x60${length}600c60003960${length}6000f3${runtime}`;
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const answer = (await response.json()) as { result?: T; error?: { code: number; message: string } };
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.code} ${answer.error.message}`);
  return answer.result as T;
}

async function sendAndWait(url: string, wallet: Wallet, fields: { to?: string; data?: string; gasLimit: bigint }): Promise<{ hash: string; contractAddress: string | null }> {
  const nonce = Number(await rpc<string>(url, "eth_getTransactionCount", [wallet.address, "pending"]));
  const raw = await wallet.signTransaction({ type: 0, chainId, nonce, gasPrice: 0n, value: 0n, ...fields });
  const hash = await rpc<string>(url, "eth_sendRawTransaction", [raw]);
  for (let poll = 0; poll < 500; poll++) {
    const receipt = await rpc<{ status: string; contractAddress: string | null } | null>(url, "eth_getTransactionReceipt", [hash]);
    if (receipt !== null) {
      if (receipt.status !== "0x1") throw new Error(`transaction ${hash} failed`);
      return { hash, contractAddress: receipt.contractAddress };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`transaction ${hash} was not mined`);
}

/** Reads the answer to `body` at `bytesPerSecond`; answers its size, its first and last bytes, and the steps it holds. */
function readSlowly(url: string, body: string, bytesPerSecond: number): Promise<{ bytes: number; head: string; tail: string; steps: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const outgoing = request(url, { method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (response) => {
      let bytes = 0;
      let head = "";
      let tail = "";
      let steps = 0;
      const marker = '{"pc":';
      response.on("data", (chunk: Buffer) => {
        const text = tail + chunk.toString("latin1");
        if (head.length < 200) head += chunk.subarray(0, 200 - head.length).toString("latin1");
        for (let at = text.indexOf(marker, Math.max(0, tail.length - marker.length + 1)); at >= 0; at = text.indexOf(marker, at + 1)) steps++;
        tail = text.slice(-200);
        bytes += chunk.length;
        // Ahead of the reading rate: pause until it catches up.
        const aheadMs = (bytes / bytesPerSecond) * 1000 - (performance.now() - started);
        if (aheadMs > 1) {
          response.pause();
          setTimeout(() => response.resume(), aheadMs);
        }
      });
      response.on("end", () => resolve({ bytes, head, tail, steps }));
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

async function rssCheck(workDir: string): Promise<void> {
  const targetBytes = Number(process.env.BENCH_TRACE_MB ?? 1_000) * 1e6;
  const bytesPerSecond = Number(process.env.BENCH_READ_MBPS ?? 100) * 1e6;
  // About 2,290 bytes a step (32 memory words of 67 characters, the rest of the step): 7 steps a round.
  const loopRounds = Math.min(0xffffff, Math.ceil(targetBytes / (7 * 2_290)));
  const node = await startBuild(undefined, join(workDir, "rss"), ["--call-timeout", "600000"]);
  try {
    const wallet = new Wallet(keccak256(toUtf8Bytes("cow")));
    const deployment = await sendAndWait(node.url, wallet, { data: memoryLoopInit(loopRounds), gasLimit: 500_000n });
    const loop = await sendAndWait(node.url, wallet, { to: deployment.contractAddress!, gasLimit: 500_000n + BigInt(loopRounds) * 30n });
    // A small trace first: the worker started, the code compiled.
    await rpc(node.url, "debug_traceTransaction", [loop.hash, { limit: 10 }]);
    const pid = node.child.pid!;
    const before = memoryOf(pid);
    let peakMiB = before.rssMiB;
    const sampler = setInterval(() => (peakMiB = Math.max(peakMiB, memoryOf(pid).rssMiB)), 50);
    const started = performance.now();
    let read;
    try {
      read = await readSlowly(node.url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "debug_traceTransaction", params: [loop.hash, { enableMemory: true }] }), bytesPerSecond);
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - started) / 1000;
    peakMiB = Math.max(peakMiB, memoryOf(pid).rssMiB);
    const refused = read.head.includes('"error":');
    if (refused) {
      console.log(`trace of ${loopRounds * 7 + 5} steps refused: ${read.head}`);
      if (!read.head.includes('"code":-32011') || !read.head.includes("limit")) throw new Error("refused without -32011 naming the limit");
      return;
    }
    const whole = read.head.startsWith('{"jsonrpc":"2.0","id":1,"result":{"gas":') && read.tail.endsWith("}}") && read.steps === loopRounds * 7 + 5;
    const ratio = (peakMiB * 1024 * 1024) / read.bytes;
    const verdict = recordResult("trace answer: node peak RSS / answer size", ratio, "x", targetsOf("lower", [39, 1.5]), {
      answerBytes: read.bytes,
      steps: read.steps,
      peakRssMiB: +peakMiB.toFixed(0),
      rssBeforeMiB: +before.rssMiB.toFixed(0),
      seconds: +seconds.toFixed(1),
    });
    console.log(`trace answer of ${(read.bytes / 1e6).toFixed(0)} MB (${read.steps} steps, ${whole ? "whole" : "NOT WHOLE"}) read at ${bytesPerSecond / 1e6} MB/s in ${seconds.toFixed(1)} s`);
    console.log(`  node RSS ${before.rssMiB.toFixed(0)} MiB before, peak ${peakMiB.toFixed(0)} MiB meanwhile: ${ratio.toFixed(2)} x the answer  ${verdict}`);
    if (!whole) throw new Error(`the answer did not arrive whole: ${read.head.slice(0, 120)} ... ${read.tail.slice(-120)}`);
  } finally {
    await node.stop();
  }
}

const workDir = await mkdtemp(join(tmpdir(), "chain-node-bench-traces-"));
try {
  if (parts.has("compare")) await compare(workDir);
  if (parts.has("rss")) await rssCheck(workDir);
} finally {
  await rm(workDir, { recursive: true, force: true });
}
writeResults("traces");
