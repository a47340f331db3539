// make bench-compare: this build of the node against another, side by side. Whole runs of one build
// differ by ±10 % on a shared 2-core host, more than most changes are worth; here both nodes run at
// once, each on a fresh LevelDB data dir, and get the same workload in alternating blocks of
// transactions, so that the host's changes of speed fall on both alike. What it prints per build:
// transactions a second, wall time and CPU (main thread, all threads) per transaction; and the
// median of the per-block ratios of wall time (the other build's over this one's) with its quartiles.
// One build against itself gave 0.977 and 0.967 here: differences below some 4 % are noise.
//   BENCH_OTHER     the other build's bundle (dist/bundle/cli/chain-node.cjs of another checkout
//                   built with make build; a git worktree of the commit to compare with does)
//   BENCH_KIND      erc20 (sequential token transfers from one sender, the default), transfers
//                   (value transfers from 8 senders at once) or call (eth_call of a token's balanceOf
//                   at 32 connections: the first block is a fresh node's first calls, reported apart
//                   from the warm blocks after it; blocks of 5,000 calls by default)
//   BENCH_OTHER_ARGS   command-line options for the other build's node only (say, --no-call-worker,
//                   with BENCH_OTHER naming this build: calls on the main thread against the worker)
//   BENCH_PROFILE_DIR  each node writes its CPU profile (--cpu-prof) into a folder of this one
//   BENCH_BLOCK     transactions per block (default 200); BENCH_BLOCKS blocks per build (default 30),
//                   after 2 blocks of warm-up each
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cliPath, commandRuntimeFlags, startListeningProcess, type NodeProcess } from "../test/helpers/nodeProcess.js";
import { compileFixture } from "../test/helpers/solidity.js";
import { cpuMsOf, deploy, developmentSigners, encodeTokenConstructor, median, rpcBody, signedRaw, type Signer } from "./chainClient.js";
import { runSequences } from "./loadClient.js";

const otherBundle = process.env.BENCH_OTHER;
const kind = process.env.BENCH_KIND ?? "erc20";
const blockSize = Number(process.env.BENCH_BLOCK ?? (kind === "call" ? 5_000 : 200));
const measuredBlocks = Number(process.env.BENCH_BLOCKS ?? (kind === "call" ? 10 : 30));
/** Calls: no warm-up, the first block is the fresh node's (reported apart). */
const warmUpBlocks = kind === "call" ? 0 : 2;
const callConnections = 32;
/** BENCH_PROFILE_DIR: each build's node writes a CPU profile there (in a folder named by its label) when it stops. */
const profileDirectory = process.env.BENCH_PROFILE_DIR;
const otherArguments = process.env.BENCH_OTHER_ARGS?.split(" ").filter(Boolean) ?? [];
const senderCount = 8;

if (otherBundle === undefined) throw new Error("set BENCH_OTHER to the other build's dist/bundle/cli/chain-node.cjs");
if (kind !== "erc20" && kind !== "transfers" && kind !== "call") throw new Error(`BENCH_KIND is erc20, transfers or call, not ${kind}`);
if (kind === "transfers" && blockSize % senderCount !== 0) throw new Error(`BENCH_BLOCK must be a multiple of ${senderCount} for transfers`);

interface Build {
  readonly label: string;
  readonly node: NodeProcess;
  readonly dataDir: string;
  /** Request bodies, block by block; each block one list per connection. */
  readonly blocks: string[][][];
  readonly blockWallMs: number[];
  /** CPU time per measured block, main thread and all threads. */
  readonly blockMainCpuMs: number[];
  readonly blockAllCpuMs: number[];
}

const tokenCode = `${compileFixture("Token.sol", "Token").bytecode}${encodeTokenConstructor(10n ** 30n)}`;

async function startBuild(label: string, bundle: string, extraArguments: string[] = []): Promise<Build> {
  const dataDir = await mkdtemp(join(tmpdir(), "chain-node-compare-"));
  const profileFlags = profileDirectory === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(profileDirectory, label.split(" ")[0]!)}`];
  const node = await startListeningProcess(bundle, ["--port", "0", "--data-dir", dataDir, ...extraArguments], 15_000, [...commandRuntimeFlags(bundle), ...profileFlags]);
  try {
    return { label, node, dataDir, blocks: await prepareBlocks(node), blockWallMs: [], blockMainCpuMs: [], blockAllCpuMs: [] };
  } catch (error) {
    await node.stop();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** The workload's request bodies for `node`, block by block (a token deployed first for erc20). */
async function prepareBlocks(node: NodeProcess): Promise<string[][][]> {
  // Each build has a chain of its own: its own signers, from nonce 0.
  const signers = developmentSigners();
  const blockCount = warmUpBlocks + measuredBlocks;
  if (kind === "call") {
    const owner = signers[9]!;
    const token = await deploy(node, owner, tokenCode);
    const balanceOf = rpcBody("eth_call", [{ to: token, data: `0x70a08231${owner.address.slice(2).padStart(64, "0")}` }, "latest"]);
    const perConnection = Math.ceil(blockSize / callConnections);
    return Array.from({ length: blockCount }, () => Array.from({ length: callConnections }, () => Array.from({ length: perConnection }, () => balanceOf)));
  }
  if (kind === "erc20") {
    const owner = signers[9]!;
    const token = await deploy(node, owner, tokenCode);
    const transfer = (index: number): string =>
      rpcBody("eth_sendRawTransaction", [signedRaw(owner, { to: token, data: `0xa9059cbb${signers[index % senderCount]!.address.slice(2).padStart(64, "0")}${"1".padStart(64, "0")}`, gasLimit: 100_000n })], index);
    return Array.from({ length: blockCount }, () => [Array.from({ length: blockSize }, (_, index) => transfer(index))]);
  }
  const senders = signers.slice(0, senderCount);
  const transfer = (sender: Signer, index: number, id: number): string =>
    rpcBody("eth_sendRawTransaction", [signedRaw(sender, { to: signers[(index + 1) % signers.length]!.address, value: 1n, gasLimit: 21_000n })], id);
  return Array.from({ length: blockCount }, () => senders.map((sender, index) => Array.from({ length: blockSize / senderCount }, (_, id) => transfer(sender, index, id))));
}

async function runBlock(build: Build, block: number): Promise<void> {
  const pid = build.node.child.pid!;
  const mainBefore = cpuMsOf(pid, true);
  const allBefore = cpuMsOf(pid, false);
  const started = performance.now();
  const result = await runSequences({ url: build.node.url, bodies: build.blocks[block]! });
  const wallMs = performance.now() - started;
  if (result.errors > 0) throw new Error(`${build.label}: ${result.errors} failed requests; first: ${result.firstError}`);
  if (block < warmUpBlocks) return;
  build.blockWallMs.push(wallMs);
  build.blockMainCpuMs.push(cpuMsOf(pid, true) - mainBefore);
  build.blockAllCpuMs.push(cpuMsOf(pid, false) - allBefore);
}

const builds: Build[] = [];
try {
  // The load client's own code is compiled before either node starts, on a bare node:http server
  // (bench/baselineServer.ts): otherwise a fresh node's first block of calls, for the build that
  // goes first, carries it.
  if (kind === "call") {
    const floor = await startListeningProcess(fileURLToPath(new URL("./baselineServer.js", import.meta.url)), ["node-http"]);
    const body = rpcBody("eth_call", [{ to: `0x${"ca".repeat(20)}`, data: `0x70a08231${"00".repeat(32)}` }, "latest"]);
    const bodies = Array.from({ length: callConnections }, () => Array.from({ length: Math.ceil(blockSize / callConnections) }, () => body));
    try {
      for (let round = 0; round < 2; round++) await runSequences({ url: floor.url, bodies });
    } finally {
      await floor.stop();
    }
  }
  builds.push(await startBuild("this build", cliPath));
  builds.push(await startBuild(`other (${resolve(otherBundle)}${otherArguments.length > 0 ? ` ${otherArguments.join(" ")}` : ""})`, otherBundle, otherArguments));
  const workload = kind === "call" ? `eth_call balanceOf at ${callConnections} connections` : kind === "erc20" ? "sequential token transfers" : `value transfers from ${senderCount} senders`;
  console.log(`${workload}: ${measuredBlocks} blocks of ${blockSize} per build, alternating`);
  for (let block = 0; block < warmUpBlocks + measuredBlocks; block++) {
    // Which build goes first alternates too: neither always follows the other.
    for (const build of block % 2 === 0 ? builds : [...builds].reverse()) await runBlock(build, block);
  }
  const sum = (values: number[]) => values.reduce((total, each) => total + each, 0);
  const unit = kind === "call" ? "calls/s" : "tx/s";
  const each = kind === "call" ? "a call" : "a transaction";
  // Calls: the fresh node's first block apart from the warm ones.
  const parts: [string, number, number][] = kind === "call" ? [["fresh", 0, 1], ["warm", 1, measuredBlocks]] : [["", 0, measuredBlocks]];
  for (const [part, from, to] of parts) {
    for (const build of builds) {
      const transactions = (to - from) * (kind === "call" ? Math.ceil(blockSize / callConnections) * callConnections : blockSize);
      const wallMs = sum(build.blockWallMs.slice(from, to));
      console.log(
        `${`${part} ${build.label.split(" (")[0]}`.trim().padEnd(18)} ${((transactions / wallMs) * 1000).toFixed(0).padStart(6)} ${unit}  wall ${((wallMs / transactions) * 1000).toFixed(0)} µs  ` +
          `CPU main ${((sum(build.blockMainCpuMs.slice(from, to)) / transactions) * 1000).toFixed(0)} µs, all threads ${((sum(build.blockAllCpuMs.slice(from, to)) / transactions) * 1000).toFixed(0)} µs ${each}`,
      );
    }
  }
  const ratios = builds[1]!.blockWallMs.map((otherMs, block) => otherMs / builds[0]!.blockWallMs[block]!).sort((a, b) => a - b);
  const quartile = (fraction: number) => ratios[Math.min(ratios.length - 1, Math.floor(ratios.length * fraction))]!;
  console.log(`the other build's time per block over this one's: median ${median(ratios).toFixed(3)} (quartiles ${quartile(0.25).toFixed(3)}–${quartile(0.75).toFixed(3)})`);
} finally {
  for (const build of builds) {
    await build.node.stop();
    await rm(build.dataDir, { recursive: true, force: true });
  }
}
