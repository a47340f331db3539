// make bench (chain part): the chain core measured as a user meets it, a node process on a LevelDB
// data dir in a fresh temporary directory, driven over HTTP by bench/loadClient.ts.
//   - start-up: from spawning the process to the first answer of eth_blockNumber (fresh data dir,
//     then a restart on the same dir);
//   - value transfers: pre-signed eth_sendRawTransaction, 8 senders concurrently, automine (one
//     block per transaction);
//   - ERC-20 transfers: pre-signed, one after another from one sender;
//   - eth_getBalance at 32 keep-alive connections;
//   - the node's resident memory (now and peak) at the end.
// BENCH_ONLY=start-up,transfers,erc20,reads picks workloads; BENCH_NODE_FLAGS="--cpu-prof
// --cpu-prof-dir=DIR" profiles the node under load.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { createLegacyTx } from "@ethereumjs/tx";
import { bytesToHex } from "@ethereumjs/util";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { regtestDevelopmentAccounts } from "../src/chain/networks.js";
import { createExecutionRules } from "../src/execution/rules.js";
import { startNodeProcess, type NodeProcess } from "../test/helpers/nodeProcess.js";
import { compileFixture } from "../test/helpers/solidity.js";
import { runLoad, runSequences, type LoadResult } from "./loadClient.js";

const transfersPerSender = Number(process.env.BENCH_TRANSFERS_PER_SENDER ?? 250);
const tokenTransfers = Number(process.env.BENCH_TOKEN_TRANSFERS ?? 1_000);
const readSeconds = Number(process.env.BENCH_SECONDS ?? 10);
const senderCount = 8;
const selected = new Set((process.env.BENCH_ONLY ?? "start-up,transfers,erc20,reads").split(","));
const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
const common = createExecutionRules(33n);
const textEncoder = new TextEncoder();

interface Signer {
  key: Uint8Array;
  address: `0x${string}`;
  nonce: bigint;
}

const signers: Signer[] = regtestDevelopmentAccounts.map((account) => ({ key: keccak_256(textEncoder.encode(account.seed)), address: `0x${account.address}` as const, nonce: 0n }));

function signedRaw(signer: Signer, fields: { to?: `0x${string}`; value?: bigint; data?: `0x${string}`; gasLimit: bigint }): string {
  const tx = createLegacyTx({ nonce: signer.nonce++, gasPrice: 1n, gasLimit: fields.gasLimit, to: fields.to, value: fields.value ?? 0n, data: fields.data }, { common }).sign(signer.key);
  return bytesToHex(tx.serialize());
}

function rpcBody(method: string, params: unknown[], id = 1): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: rpcBody(method, params) });
  const answer = (await response.json()) as { result?: T; error?: { message: string } };
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result as T;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Milliseconds from spawn to the first answer of eth_blockNumber. */
async function timeStartUp(dataDir: string): Promise<number> {
  const started = performance.now();
  const node = await startNodeProcess(["--port", "0", "--data-dir", dataDir]);
  try {
    await rpc(node.url, "eth_blockNumber", []);
    return performance.now() - started;
  } finally {
    await node.stop();
  }
}

async function benchStartUp(dataDir: string): Promise<void> {
  const fresh: number[] = [];
  const restart: number[] = [];
  for (let round = 0; round < 3; round++) {
    await rm(dataDir, { recursive: true, force: true });
    fresh.push(await timeStartUp(dataDir));
    restart.push(await timeStartUp(dataDir));
  }
  const startUp = median(fresh);
  console.log(
    `${"start-up to first answer".padEnd(34)} ${startUp.toFixed(0).padStart(7)} ms    (fresh dir, median of 3; restart on it ${median(restart).toFixed(0)} ms)  <= 400: ${startUp <= 400 ? "met" : "NOT met"}`,
  );
}

/** Resident and peak resident memory of a process, in MiB (Linux /proc). */
function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

function report(name: string, result: LoadResult, unit: string, target: number): void {
  const verdict = `>= ${target}: ${result.perSecond >= target ? "met" : "NOT met"}`;
  console.log(
    `${name.padEnd(34)} ${result.perSecond.toFixed(0).padStart(7)} ${unit.padEnd(5)} p50 ${result.p50Ms.toFixed(2).padStart(6)} ms  p99 ${result.p99Ms.toFixed(2).padStart(6)} ms  errors ${result.errors}  ${verdict}`,
  );
  if (result.firstError !== undefined) console.log(`  first error: ${result.firstError.slice(0, 300)}`);
}

async function minedReceipt(url: string, hash: string): Promise<{ contractAddress: `0x${string}`; status: string }> {
  const receipt = await rpc<{ contractAddress: `0x${string}`; status: string } | null>(url, "eth_getTransactionReceipt", [hash]);
  if (receipt === null) throw new Error(`no receipt for ${hash}: is the node automining?`);
  return receipt;
}

async function benchTransfers(node: NodeProcess): Promise<void> {
  const senders = signers.slice(0, senderCount);
  const bodies = senders.map((sender, index) =>
    Array.from({ length: transfersPerSender }, (_, nonce) => rpcBody("eth_sendRawTransaction", [signedRaw(sender, { to: signers[(index + 1) % signers.length]!.address, value: 1n, gasLimit: 21_000n })], nonce)),
  );
  const before = BigInt(await rpc<string>(node.url, "eth_blockNumber", []));
  const result = await runSequences({ url: node.url, bodies });
  const blocks = BigInt(await rpc<string>(node.url, "eth_blockNumber", [])) - before;
  report(`value transfers (${senderCount} senders, automine)`, result, "tx/s", 1_000);
  console.log(`  ${result.requests} transactions, ${blocks} blocks mined`);
}

async function benchTokenTransfers(node: NodeProcess): Promise<void> {
  const token = compileFixture("Token.sol", "Token");
  const owner = signers[9]!;
  const constructorArguments = encodeTokenConstructor(10n ** 30n);
  const deployHash = await rpc<string>(node.url, "eth_sendRawTransaction", [signedRaw(owner, { data: `${token.bytecode as `0x${string}`}${constructorArguments}`, gasLimit: 3_000_000n })]);
  const { contractAddress, status } = await minedReceipt(node.url, deployHash);
  if (status !== "0x1") throw new Error("the token deployment failed");
  const recipients = signers.slice(0, 8).map((signer) => signer.address.slice(2).padStart(64, "0"));
  const bodies = Array.from({ length: tokenTransfers }, (_, index) => {
    const data: `0x${string}` = `0xa9059cbb${recipients[index % recipients.length]}${(1n).toString(16).padStart(64, "0")}`;
    return rpcBody("eth_sendRawTransaction", [signedRaw(owner, { to: contractAddress, data, gasLimit: 100_000n })], index);
  });
  const result = await runSequences({ url: node.url, bodies: [bodies] });
  report("ERC-20 transfers (sequential)", result, "tx/s", 800);
}

/** ABI encoding of Token(string name, string symbol, uint256 supply) with name "Bench", symbol "BNC". */
function encodeTokenConstructor(supply: bigint): string {
  const word = (value: bigint) => value.toString(16).padStart(64, "0");
  const text = (value: string) => word(BigInt(value.length)) + Buffer.from(value).toString("hex").padEnd(64, "0");
  return word(0x60n) + word(0xa0n) + word(supply) + text("Bench") + text("BNC");
}

async function benchBalanceReads(node: NodeProcess): Promise<void> {
  const body = rpcBody("eth_getBalance", [signers[0]!.address, "latest"]);
  await runLoad({ url: node.url, body, connections: 32, durationMs: 3_000 });
  const result = await runLoad({ url: node.url, body, connections: 32, durationMs: readSeconds * 1000 });
  report("eth_getBalance (32 connections)", result, "req/s", 12_000);
}

const workDir = await mkdtemp(join(tmpdir(), "chain-node-bench-"));
try {
  console.log(`chain core on a LevelDB data dir in ${tmpdir()} (node ${process.version})`);
  if (selected.has("start-up")) await benchStartUp(join(workDir, "start-up"));
  const node = await startNodeProcess(["--port", "0", "--data-dir", join(workDir, "chain")], 15_000, nodeFlags);
  try {
    if (selected.has("transfers")) await benchTransfers(node);
    if (selected.has("erc20")) await benchTokenTransfers(node);
    if (selected.has("reads")) await benchBalanceReads(node);
    const memory = memoryOf(node.child.pid!);
    console.log(`${"node memory".padEnd(34)} RSS ${memory.rssMiB.toFixed(0)} MiB now, ${memory.peakMiB.toFixed(0)} MiB peak`);
  } finally {
    await node.stop();
  }
} finally {
  await rm(workDir, { recursive: true, force: true });
}
