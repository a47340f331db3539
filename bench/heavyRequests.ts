// Benchmark (issue 34): what one heavy request costs everybody else. While a heavy request is sent
// again and again on connections of its own, eth_blockNumber is asked on one more keep-alive
// connection, one request at a time; its p50 and p99 are the figures (the issue asks a p99 under
// 20 ms). The heavy requests are those the issue found stalling the node (a 5 MB body of nested
// arrays, eth_getProof with 70,000 storage keys, eth_call with a 20,000-account state override,
// 8 struct-log traces at once) and the largest of each kind the node's limits let through.
import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { recordResult, targetsOf } from "./results.js";
import type { LoadOptions, LoadResult } from "./loadClient.js";
import { rpcBody } from "./chainClient.js";
import { sendTraceLoop } from "./tracing.js";

const probeSeconds = Number(process.env.BENCH_BOUNDS_SECONDS ?? 4);
/** BENCH_BOUNDS_ONLY=getProof,traces keeps the heavy requests whose name holds one of these words. */
const onlyNamesWith = process.env.BENCH_BOUNDS_ONLY?.split(",").filter(Boolean);
/** The node's default limits (README flags table) the "at the limit" requests are sized by. */
const proofKeysLimit = 1_024;
const overrideAccountsLimit = 1_000;
const overrideSlotsLimit = 10_000;
const concurrentTraces = 8;

/** One heavy request: a body to post, and how many of them go at once. */
interface HeavyRequest {
  name: string;
  body: () => string;
  concurrency: number;
}

interface HeavyOutcome {
  sent: number;
  medianMs: number;
  /** The answer's error code and message, or "result". */
  answer: string;
}

function word(value: bigint): string {
  return `0x${value.toString(16).padStart(64, "0")}`;
}

/** Slot keys of the Probe's `table` (entries 0..299 hold values after fill(300)), then plain numbers. */
function storageKeys(count: number): string[] {
  return Array.from({ length: count }, (_, index) => {
    if (index >= 300) return word(BigInt(index));
    const encoded = Buffer.from(`${word(BigInt(index)).slice(2)}${word(2n).slice(2)}`, "hex");
    return `0x${Buffer.from(keccak_256(encoded)).toString("hex")}`;
  });
}

/** A state override of `accounts` accounts with a balance each and `slots` stateDiff slots spread over them. */
function stateOverride(accounts: number, slots: number): Record<string, unknown> {
  const override: Record<string, { balance: string; stateDiff?: Record<string, string> }> = {};
  for (let index = 0; index < accounts; index++) {
    const stateDiff: Record<string, string> = {};
    for (let slot = index; slot < slots; slot += accounts) stateDiff[word(BigInt(slot))] = word(1n);
    override[`0x${(index + 1).toString(16).padStart(40, "0")}`] = slots > index ? { balance: "0x1", stateDiff } : { balance: "0x1" };
  }
  return override;
}

async function post(url: string, body: string): Promise<string> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(60_000) });
  const text = await response.text();
  const error = /"error":\{"code":(-?\d+),"message":"([^"]{0,80})/.exec(text);
  return error === null ? `HTTP ${response.status} result` : `HTTP ${response.status} ${error[1]} ${error[2]}`;
}

/** Sends `heavy` over and over (its concurrency at once) until `until` resolves. */
async function repeat(url: string, heavy: HeavyRequest, body: string, until: Promise<unknown>): Promise<HeavyOutcome> {
  let running = true;
  void until.then(() => (running = false));
  const times: number[] = [];
  let answer = "";
  const loop = async () => {
    while (running) {
      const started = performance.now();
      answer = await post(url, body);
      times.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: heavy.concurrency }, loop));
  times.sort((a, b) => a - b);
  return { sent: times.length, medianMs: times[Math.floor(times.length / 2)] ?? Number.NaN, answer };
}

/** runLoad on a thread of its own (bench/probeWorker.ts). */
async function probeFromOwnThread(options: LoadOptions): Promise<LoadResult> {
  const worker = new Worker(new URL("./probeWorker.js", import.meta.url), { workerData: options });
  const [result] = (await once(worker, "message")) as [LoadResult];
  await worker.terminate();
  return result;
}

function printProbe(name: string, p50Ms: number, p99Ms: number, detail: string): void {
  const verdict = recordResult(`eth_blockNumber during ${name}`, p99Ms, "ms", targetsOf("lower", [34, 20]), { p50Ms, detail });
  console.log(`${name.padEnd(44)} eth_blockNumber p50 ${p50Ms.toFixed(2).padStart(6)} ms  p99 ${p99Ms.toFixed(2).padStart(7)} ms  ${verdict}`);
  if (detail !== "") console.log(`  ${detail}`);
}

/** eth_blockNumber's latency on its own connection while each heavy request runs; `probe` is the Probe after fill(300). */
export async function benchHeavyRequests(url: string, probe: string): Promise<void> {
  const blockNumberBody = rpcBody("eth_blockNumber", []);
  const quiet = await probeFromOwnThread({ url, body: blockNumberBody, connections: 1, durationMs: 1_000 });
  printProbe("nothing else", quiet.p50Ms, quiet.p99Ms, "");
  const loop = await sendTraceLoop(url);
  const call = { to: `0x${"ab".repeat(20)}` };
  const heavyRequests: HeavyRequest[] = [
    { name: "5 MB of nested [", body: () => "[".repeat(5_000_000), concurrency: 1 },
    { name: "5 MB of one-member objects", body: () => `[${Array.from({ length: 380_000 }, (_, index) => `{"k${index}":1}`).join(",")}]`, concurrency: 1 },
    { name: "eth_getProof, 70,000 keys", body: () => rpcBody("eth_getProof", [probe, storageKeys(70_000), "latest"]), concurrency: 1 },
    { name: `eth_getProof, ${proofKeysLimit} keys`, body: () => rpcBody("eth_getProof", [probe, storageKeys(proofKeysLimit), "latest"]), concurrency: 1 },
    { name: "eth_call, 20,000-account override", body: () => rpcBody("eth_call", [call, "latest", stateOverride(20_000, 0)]), concurrency: 1 },
    {
      name: `eth_call, ${overrideAccountsLimit} accounts ${overrideSlotsLimit} slots`,
      body: () => rpcBody("eth_call", [call, "latest", stateOverride(overrideAccountsLimit, overrideSlotsLimit)]),
      concurrency: 1,
    },
    { name: `${concurrentTraces} struct-log traces at once`, body: () => rpcBody("debug_traceTransaction", [loop.hash, { disableMemory: true }]), concurrency: concurrentTraces },
  ];
  for (const heavy of heavyRequests) {
    if (onlyNamesWith !== undefined && !onlyNamesWith.some((word) => heavy.name.includes(word))) continue;
    const body = heavy.body();
    const probing = probeFromOwnThread({ url, body: blockNumberBody, connections: 1, durationMs: probeSeconds * 1000 });
    const outcome = await repeat(url, heavy, body, probing);
    const probed = await probing;
    const size = (Buffer.byteLength(body) / 1e6).toFixed(2);
    printProbe(heavy.name, probed.p50Ms, probed.p99Ms, `${outcome.sent} sent (${size} MB each), median ${outcome.medianMs.toFixed(0)} ms, answer: ${outcome.answer}`);
  }
}
