// Benchmark: debug_traceTransaction of a ~25,000-step, ~1.4M-gas transaction with the tracer's
// defaults, with the stack on, and without stack and memory (the figure issues 5 and 6 set).
// Self-contained: its own JSON-RPC over fetch and its own signing (the regtest "cow" account,
// chain id 33, legacy transactions at gas price 0).
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { recordResult, targetsOf } from "./results.js";

const chainId = 33;
/** Issue 5 asked 300 ms of the struct-log trace, issue 6 150 ms. */
const targets = targetsOf("lower", [5, 300], [6, 150]);
const runs = 10;
/** Bounds the receipt polling of one transaction. */
const receiptPolls = 500;

// Runtime: counter = 500; loop { BALANCE(counter) of a cold address, 20 x (PUSH1 0, POP),
// counter -= 1 } while counter != 0. 50 steps and 2,731 gas per round: 25,002 steps in all.
const cheapPairs = "6000" + "50";
const runtime = "6101f4" + "5b" + "80" + "31" + "50" + cheapPairs.repeat(20) + "6001" + "90" + "03" + "80" + "6003" + "57" + "00";
const runtimeLength = runtime.length / 2;
const lengthByte = runtimeLength.toString(16).padStart(2, "0");
// Init: CODECOPY the runtime (after these 12 bytes) to memory and RETURN it.
const initCode = `0x60${lengthByte}600c60003960${lengthByte}6000f3${runtime}`;
const expectedSteps = 25_002;

let nextId = 1;

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
    signal: AbortSignal.timeout(60_000),
  });
  const answer = (await response.json()) as { result?: T; error?: { code: number; message: string } };
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.code} ${answer.error.message}`);
  return answer.result as T;
}

interface Receipt {
  status: string;
  gasUsed: string;
  contractAddress: string | null;
}

async function sendAndWait(url: string, wallet: Wallet, fields: { to?: string; data?: string; gasLimit: bigint }): Promise<{ hash: string; receipt: Receipt }> {
  const nonce = Number(await rpc<string>(url, "eth_getTransactionCount", [wallet.address, "pending"]));
  const raw = await wallet.signTransaction({ type: 0, chainId, nonce, gasPrice: 0n, value: 0n, ...fields });
  const hash = await rpc<string>(url, "eth_sendRawTransaction", [raw]);
  for (let poll = 0; poll < receiptPolls; poll++) {
    const receipt = await rpc<Receipt | null>(url, "eth_getTransactionReceipt", [hash]);
    if (receipt !== null) {
      if (receipt.status !== "0x1") throw new Error(`transaction ${hash} failed`);
      return { hash, receipt };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`transaction ${hash} was not mined`);
}

/** Deploys the loop and runs it once: the hash and receipt of a transaction of `expectedSteps` steps. */
export async function sendTraceLoop(url: string): Promise<{ hash: string; receipt: Receipt }> {
  const wallet = new Wallet(keccak256(toUtf8Bytes("cow")));
  const deployment = await sendAndWait(url, wallet, { data: initCode, gasLimit: 500_000n });
  const contract = deployment.receipt.contractAddress!;
  return sendAndWait(url, wallet, { to: contract, gasLimit: 2_000_000n });
}

/** The tracer options timed: the node's and geth's defaults, the stack on without memory, and neither stack nor memory. */
export const traceVariants: readonly { name: string; options: Record<string, boolean> }[] = [
  { name: "defaults", options: {} },
  { name: "stack on", options: { disableMemory: true } },
  { name: "struct logs", options: { disableStack: true, disableMemory: true } },
];

/** One trace request: its time in milliseconds and the answer's size in bytes. */
export async function timeTrace(url: string, hash: string, options: Record<string, boolean>): Promise<{ ms: number; bytes: number; steps: number }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "debug_traceTransaction", params: [hash, options] }),
    signal: AbortSignal.timeout(60_000),
  });
  const body = await response.arrayBuffer();
  const ms = performance.now() - started;
  const answer = JSON.parse(Buffer.from(body).toString("utf8")) as { result?: { structLogs?: unknown[] }; error?: { code: number; message: string } };
  if (answer.error !== undefined) throw new Error(`debug_traceTransaction ${JSON.stringify(options)}: ${answer.error.code} ${answer.error.message}`);
  return { ms, bytes: body.byteLength, steps: answer.result?.structLogs?.length ?? 0 };
}

function medianOf(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Deploys the loop, runs it once, and times its struct-log trace with each of `traceVariants` (median of 10). */
export async function benchStructLogTrace(url: string): Promise<void> {
  const loop = await sendTraceLoop(url);
  for (const variant of traceVariants) {
    const first = await timeTrace(url, loop.hash, variant.options);
    if (first.steps !== expectedSteps) throw new Error(`expected ${expectedSteps} struct logs, got ${first.steps}`);
    // Two more untimed: the tracer's code compiled for these options before the runs are timed.
    for (let warmUp = 0; warmUp < 2; warmUp++) await timeTrace(url, loop.hash, variant.options);
    const timesMs: number[] = [];
    for (let run = 0; run < runs; run++) timesMs.push((await timeTrace(url, loop.hash, variant.options)).ms);
    timesMs.sort((a, b) => a - b);
    const medianMs = medianOf(timesMs);
    // The figure issues 5 and 6 set is the one without stack and memory; the others are reference figures (issue 39: at most Anvil's).
    const workload = variant.name === "struct logs" ? "debug_traceTransaction struct logs" : `debug_traceTransaction ${variant.name}`;
    const verdict = recordResult(workload, medianMs, "ms", variant.name === "struct logs" ? targets : [], { bestMs: timesMs[0]!, worstMs: timesMs[runs - 1]!, steps: first.steps, answerBytes: first.bytes });
    console.log(`${workload.padEnd(34)} median ${medianMs.toFixed(1).padStart(7)} ms  best ${timesMs[0]!.toFixed(1)} ms  worst ${timesMs[runs - 1]!.toFixed(1)} ms  ${verdict}`);
    console.log(`  ${first.steps} steps, ${BigInt(loop.receipt.gasUsed)} gas, options ${JSON.stringify(variant.options)}, answer ${(first.bytes / 1e6).toFixed(2)} MB, ${runs} runs`);
  }
}
