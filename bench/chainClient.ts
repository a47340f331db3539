// What the chain benchmarks share: the development accounts as pre-signing senders, JSON-RPC
// over fetch, the node's memory, deployments of the fixtures.
import { readdirSync, readFileSync } from "node:fs";
import { createLegacyTx } from "@ethereumjs/tx";
import { bytesToHex } from "@ethereumjs/util";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { regtestDevelopmentAccounts } from "../src/chain/networks.js";
import { createExecutionRules } from "../src/execution/rules.js";
import type { NodeProcess } from "../test/helpers/nodeProcess.js";

const common = createExecutionRules(33n);
const textEncoder = new TextEncoder();

/** A development account that signs transactions ahead of sending them; `nonce` is its next. */
export interface Signer {
  key: Uint8Array;
  address: `0x${string}`;
  nonce: bigint;
}

/** Fresh signers for the ten development accounts (a node on a new data dir: nonces from 0). */
export function developmentSigners(): Signer[] {
  return regtestDevelopmentAccounts.map((account) => ({ key: keccak_256(textEncoder.encode(account.seed)), address: `0x${account.address}` as const, nonce: 0n }));
}

/** A signed legacy transaction from `signer` at its next nonce, price 1, as raw hex. */
export function signedRaw(signer: Signer, fields: { to?: `0x${string}`; value?: bigint; data?: `0x${string}`; gasLimit: bigint }): string {
  const tx = createLegacyTx({ nonce: signer.nonce++, gasPrice: 1n, gasLimit: fields.gasLimit, to: fields.to, value: fields.value ?? 0n, data: fields.data }, { common }).sign(signer.key);
  return bytesToHex(tx.serialize());
}

export function rpcBody(method: string, params: unknown[], id = 1): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

export async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: rpcBody(method, params) });
  const answer = (await response.json()) as { result?: T; error?: { message: string } };
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result as T;
}

/** The value below which `fraction` of `values` lie (the nearest one; NaN for none). */
export function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

/**
 * Runs start-up rounds (the node's and the bare node:http floor's) with NODE_EXTRA_CA_CERTS out of
 * the environment their processes inherit, and answers whether it was there. Node reads and parses
 * that file at every start, before any script runs: with this machine's CA bundle that took some
 * 50 ms of each start (`node -e 0`: 37-70 against 86-164 ms, 10 starts each, three times). A cost
 * that is the environment's, the same in both, flatters a ratio to the floor: measured in one run,
 * the node was 1.51x the floor with it and 2.02x without.
 */
export async function withoutExtraCaCertificates<T>(rounds: () => Promise<T>): Promise<{ result: T; removed: boolean }> {
  const saved = process.env.NODE_EXTRA_CA_CERTS;
  delete process.env.NODE_EXTRA_CA_CERTS;
  try {
    return { result: await rounds(), removed: saved !== undefined };
  } finally {
    if (saved !== undefined) process.env.NODE_EXTRA_CA_CERTS = saved;
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** CPU time of a process's threads (all, or only its main thread), in milliseconds (Linux /proc). */
export function cpuMsOf(pid: number, mainThreadOnly = false): number {
  return cpuMsOfStat(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`);
}

/** User and system CPU in ms of a /proc stat file (a process's or a thread's). */
function cpuMsOfStat(path: string): number {
  const stat = readFileSync(path, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU of each of a process's live threads in ms, the main thread first, then the largest (Linux
 * /proc; Node leaves its worker threads, V8's helpers and libuv's pool unnamed, so they are told
 * apart only by size). Threads that ended are not counted.
 */
export function threadCpuMsOf(pid: number): number[] {
  const others: number[] = [];
  let main = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ms = cpuMsOfStat(`/proc/${pid}/task/${task}/stat`);
      if (task === String(pid)) main = ms;
      else others.push(ms);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return [main, ...others.sort((a, b) => b - a)];
}

/**
 * A process's main thread as the scheduler saw it (Linux /proc schedstat): ms on a core and ms
 * runnable but waiting for one. Wall time minus both is time it had nothing to do.
 */
export function mainThreadScheduleOf(pid: number): { runningMs: number; waitingForCoreMs: number } {
  const [running, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ").map(Number);
  return { runningMs: running! / 1e6, waitingForCoreMs: waiting! / 1e6 };
}

/** The threads' CPU as "main 9.2 s, others 2.1, 0.8, ... s" (threads under 50 ms left out). */
export function threadCpuText(threadCpuMs: readonly number[]): string {
  const [main = 0, ...others] = threadCpuMs;
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  return `main ${seconds(main)} s, others ${others.filter((ms) => ms >= 50).map(seconds).join(", ")} s`;
}

/** Resident and peak resident memory of a process, in MiB (Linux /proc). */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

export async function minedReceipt(url: string, hash: string): Promise<{ contractAddress: `0x${string}`; status: string }> {
  const receipt = await rpc<{ contractAddress: `0x${string}`; status: string } | null>(url, "eth_getTransactionReceipt", [hash]);
  if (receipt === null) throw new Error(`no receipt for ${hash}: is the node automining?`);
  return receipt;
}

/** Deploys a contract from `owner` and answers its address. */
export async function deploy(node: NodeProcess, owner: Signer, code: string): Promise<`0x${string}`> {
  const deployHash = await rpc<string>(node.url, "eth_sendRawTransaction", [signedRaw(owner, { data: code as `0x${string}`, gasLimit: 3_000_000n })]);
  const { contractAddress, status } = await minedReceipt(node.url, deployHash);
  if (status !== "0x1") throw new Error("a deployment failed");
  return contractAddress;
}

/** One ABI word (64 hex digits, no 0x): a number, or an address / hex value left-padded. */
export function abiWord(value: bigint | `0x${string}`): string {
  return (typeof value === "string" ? value.slice(2) : value.toString(16)).padStart(64, "0");
}

/** ABI encoding of Token(string name, string symbol, uint256 supply) with name "Bench", symbol "BNC". */
export function encodeTokenConstructor(supply: bigint): string {
  const text = (value: string) => abiWord(BigInt(value.length)) + Buffer.from(value).toString("hex").padEnd(64, "0");
  return abiWord(0x60n) + abiWord(0xa0n) + abiWord(supply) + text("Bench") + text("BNC");
}
