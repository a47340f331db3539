// make bench-anvil: the node side by side with Anvil 1.7.1 (the @foundry-rs/anvil dev dependency;
// its binary comes in the platform package) in one run, on the figures issue 39 names. Both get the
// same workload from the same client, in alternating rounds (which one goes first alternates too),
// so that the host's changes of speed fall on both:
//   - start-up: from spawning the process to the first answer of eth_blockNumber, for the node (fresh
//     LevelDB data dir), Anvil, and the floor: a bare node:http server answering a constant
//     (bench/baselineServer.ts); the node's ratio to the floor is issue 39's target (at most 1.5x),
//     both started without NODE_EXTRA_CA_CERTS (withoutExtraCaCertificates says why);
//   - call: eth_call of a token's balanceOf at 32 keep-alive connections, in blocks of 5,000 calls:
//     the first block is a fresh process's first calls (reported apart), the others warm; calls a
//     second and the CPU a call of all the process's threads;
//   - logs: the first eth_getLogs of 1,000 Transfer logs right after their 1,000 token transfers
//     were sent one after another to a fresh process (one query per fresh pair, in rounds), then
//     the median of repeated queries;
//   - trace: debug_traceTransaction of bench/tracing.ts's 25,002-step loop with the tracer's
//     defaults (`{}`), with the stack on, and without stack and memory: median time, CPU and size
//     (Anvil started with --steps-tracing here: without it its struct-log traces are empty).
// Anvil runs with --chain-id 33 and --base-fee 0, so that the same pre-signed legacy transactions
// (price 0 or 1) go to both, its accounts funded by anvil_setBalance; and with --silent, since it
// otherwise prints a line per request: it then prints no listening line either, so it gets a port
// picked here and is asked until it answers (every millisecond: its start-up reads at most about
// that much high). Anvil keeps its chain in memory, the node on disk.
//   BENCH_ANVIL=start-up,call,logs,trace picks parts; BENCH_ROUNDS start-up rounds (default 11);
//   BENCH_CALL_BLOCKS call blocks (default 10); BENCH_LOG_ROUNDS fresh pairs for logs (default 3);
//   BENCH_TRACE_ROUNDS trace rounds (default 10).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { keccak256 } from "ethers";
import { startListeningProcess, startNodeProcess, type NodeProcess } from "../test/helpers/nodeProcess.js";
import { compileFixture } from "../test/helpers/solidity.js";
import { cpuMsOf, developmentSigners, encodeTokenConstructor, median, rpc, rpcBody, signedRaw, withoutExtraCaCertificates, type Signer } from "./chainClient.js";
import { runSequences } from "./loadClient.js";
import { recordResult, targetsOf, writeResults } from "./results.js";
import { sendTraceLoop, timeTrace, traceVariants } from "./tracing.js";

const require = createRequire(import.meta.url);
const platformArch: Record<string, string> = { x64: "amd64", arm64: "arm64" };
/** The binary itself: the package's bin.mjs wrapper would put a second process in front of it. */
export const anvilPath = require.resolve(`@foundry-rs/anvil-${process.platform}-${platformArch[process.arch] ?? process.arch}/bin/anvil`);

const parts = new Set((process.env.BENCH_ANVIL ?? "start-up,call,logs,trace").split(","));
const startUpRounds = Number(process.env.BENCH_ROUNDS ?? 11);
const callBlocks = Number(process.env.BENCH_CALL_BLOCKS ?? 10);
const logRounds = Number(process.env.BENCH_LOG_ROUNDS ?? 3);
const traceRounds = Number(process.env.BENCH_TRACE_ROUNDS ?? 10);
const callConnections = 32;
const callsPerConnection = Math.ceil(5_000 / callConnections);
const tokenCode = `${compileFixture("Token.sol", "Token").bytecode}${encodeTokenConstructor(10n ** 30n)}`;
const transferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const baselineScript = fileURLToPath(new URL("./baselineServer.js", import.meta.url));

/** A port free a moment ago, for Anvil (which, --silent, does not say where it listens). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

/** Asks `url` for eth_blockNumber every millisecond until it answers (fails after `timeoutMs`). */
async function firstAnswer(url: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      await rpc(url, "eth_blockNumber", []);
      return;
    } catch (error) {
      if (performance.now() > deadline) throw new Error(`no answer from ${url} within ${timeoutMs} ms: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
}

/** Starts Anvil and resolves once it answers; the same shape as the node's process. */
export async function startAnvil(port?: number, extraArgs: readonly string[] = [], timeoutMs = 15_000): Promise<NodeProcess> {
  port ??= await freePort();
  const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", "33", "--base-fee", "0", "--silent", ...extraArgs];
  const child = spawn(anvilPath, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const url = `http://127.0.0.1:${port}`;
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`anvil exited with ${code} before answering; stderr: ${stderr}`);
  });
  try {
    await Promise.race([firstAnswer(url, timeoutMs), exited]);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  exited.catch(() => {});
  return {
    child,
    url,
    lines: [],
    async stop(signal: NodeJS.Signals = "SIGTERM", stopTimeoutMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const done = once(child, "exit");
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), stopTimeoutMs);
      const [code] = (await done) as [number | null];
      clearTimeout(timer);
      return code;
    },
  };
}

interface Side {
  readonly name: "node" | "anvil";
  readonly process: NodeProcess;
  readonly dataDir: string | undefined;
}

/** A fresh node (its own LevelDB data dir under `workDir`) or a fresh Anvil with the development accounts funded. */
async function startSide(name: Side["name"], workDir: string, anvilArgs: readonly string[]): Promise<Side> {
  if (name === "node") {
    const dataDir = await mkdtemp(join(workDir, "node-"));
    return { name, process: await startNodeProcess(["--port", "0", "--data-dir", dataDir], 30_000), dataDir };
  }
  const anvil = await startAnvil(undefined, anvilArgs);
  try {
    for (const signer of developmentSigners()) await rpc(anvil.url, "anvil_setBalance", [signer.address, `0x${(10n ** 30n).toString(16)}`]);
  } catch (error) {
    await anvil.stop();
    throw error;
  }
  return { name, process: anvil, dataDir: undefined };
}

/** Says so when a side's process ends before the bench stops it (the next figure would fail on its pid). */
function watchExit(side: Side): Side {
  const exitedEarly = (code: number | null, signal: NodeJS.Signals | null) => console.error(`${side.name} (pid ${side.process.child.pid}) exited with ${code ?? signal} during the bench`);
  side.process.child.once("exit", exitedEarly);
  side.process.child.stderr?.on("data", (chunk: Buffer) => process.stderr.write(`[${side.name}] ${chunk.toString("utf8")}`));
  stopping.set(side, () => side.process.child.off("exit", exitedEarly));
  return side;
}
const stopping = new Map<Side, () => void>();

async function stopSide(side: Side): Promise<void> {
  stopping.get(side)?.();
  await side.process.stop();
  if (side.dataDir !== undefined) await rm(side.dataDir, { recursive: true, force: true });
}

/** Starts both, runs `work` on them, and stops both whatever happens. */
async function withBoth(workDir: string, work: (sides: Side[]) => Promise<void>, anvilArgs: readonly string[] = []): Promise<void> {
  const sides: Side[] = [];
  try {
    sides.push(watchExit(await startSide("node", workDir, [])));
    sides.push(watchExit(await startSide("anvil", workDir, anvilArgs)));
    await work(sides);
  } finally {
    for (const side of sides) await stopSide(side);
  }
}

/** The order of round `round`: the first side first on even rounds, last on odd ones. */
function inTurn<T>(items: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...items] : [...items].reverse();
}

/** Waits for a transaction's receipt (Anvil mines after answering the send: after a burst of sends, seconds after). */
async function receiptOf(url: string, hash: string): Promise<{ status: string; contractAddress: `0x${string}` | null; blockNumber: string }> {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    const receipt = await rpc<{ status: string; contractAddress: `0x${string}` | null; blockNumber: string } | null>(url, "eth_getTransactionReceipt", [hash]);
    if (receipt !== null) return receipt;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`transaction ${hash} was not mined`);
}

async function deployToken(url: string, owner: Signer): Promise<`0x${string}`> {
  const hash = await rpc<string>(url, "eth_sendRawTransaction", [signedRaw(owner, { data: tokenCode as `0x${string}`, gasLimit: 3_000_000n })]);
  const receipt = await receiptOf(url, hash);
  if (receipt.status !== "0x1" || receipt.contractAddress === null) throw new Error("the token's deployment failed");
  return receipt.contractAddress;
}

function ratioLine(name: string, node: number, anvil: number, unit: string, better: "higher" | "lower"): string {
  const ahead = better === "higher" ? node / anvil : anvil / node;
  return `${name.padEnd(40)} node ${node.toFixed(unit === "ms" ? 1 : 0).padStart(8)} ${unit.padEnd(7)} anvil ${anvil.toFixed(unit === "ms" ? 1 : 0).padStart(8)} ${unit.padEnd(7)} node/anvil ${ahead.toFixed(2)}x`;
}

async function timeSpawnToAnswer(start: () => Promise<NodeProcess>, answered: (process: NodeProcess) => Promise<void>): Promise<number> {
  const started = performance.now();
  const process = await start();
  try {
    await answered(process);
    return performance.now() - started;
  } finally {
    await process.stop();
  }
}

async function benchStartUp(workDir: string): Promise<void> {
  const times: Record<"floor" | "node" | "anvil", number[]> = { floor: [], node: [], anvil: [] };
  const ask = (process: NodeProcess) => rpc(process.url, "eth_blockNumber", []).then(() => {});
  const kinds = ["floor", "node", "anvil"] as const;
  const { removed } = await withoutExtraCaCertificates(async () => {
    for (let round = 0; round < startUpRounds; round++) {
      for (const kind of inTurn(kinds, round)) {
        if (kind === "floor") times.floor.push(await timeSpawnToAnswer(() => startListeningProcess(baselineScript, ["node-http"]), ask));
        else if (kind === "anvil") {
          const port = await freePort();
          times.anvil.push(await timeSpawnToAnswer(() => startAnvil(port), async () => {}));
        } else {
          const dataDir = await mkdtemp(join(workDir, "start-up-"));
          try {
            times.node.push(await timeSpawnToAnswer(() => startNodeProcess(["--port", "0", "--data-dir", dataDir]), ask));
          } finally {
            await rm(dataDir, { recursive: true, force: true });
          }
        }
      }
    }
  });
  const floor = median(times.floor);
  const node = median(times.node);
  const anvil = median(times.anvil);
  console.log(`start-up, spawn to first answer, medians of ${startUpRounds} alternating rounds${removed ? " (without NODE_EXTRA_CA_CERTS, which node loads at every start: bench/chainClient.ts)" : ""}`);
  console.log(`  ${ratioLine("start-up to first answer", node, anvil, "ms", "lower")}`);
  const verdict = recordResult("start-up to first answer (side by side)", node, "ms", targetsOf("lower", [39, Math.round(1.5 * floor)]), { anvilMs: anvil, floorMs: floor, overFloor: node / floor });
  console.log(`  bare node:http floor ${floor.toFixed(1)} ms: node ${(node / floor).toFixed(2)}x the floor, anvil ${(anvil / floor).toFixed(2)}x  ${verdict}`);
}

/** Runs the load client twice through `bodies` against the bare node:http server (bench/baselineServer.ts). */
async function warmUpClient(bodies: string[][]): Promise<void> {
  const floor = await startListeningProcess(baselineScript, ["node-http"]);
  try {
    for (let round = 0; round < 2; round++) await runSequences({ url: floor.url, bodies });
  } finally {
    await floor.stop();
  }
}

async function benchCalls(workDir: string): Promise<void> {
  // The load client's own code is compiled before either process starts, on a bare node:http
  // server: otherwise the fresh block of the side that goes first carries it (the client's CPU a
  // call there was 50-90 µs against 25-45 for the other side's).
  const warmUpParams = [{ to: `0x${"ca".repeat(20)}`, data: `0x70a08231${"00".repeat(32)}` }, "latest"];
  await warmUpClient(Array.from({ length: callConnections }, () => Array.from({ length: callsPerConnection }, () => rpcBody("eth_call", warmUpParams))));
  await withBoth(workDir, async (sides) => {
    const owner = developmentSigners()[9]!;
    const bodies = new Map<Side, string[][]>();
    for (const side of sides) {
      const token = await deployToken(side.process.url, developmentSigners()[9]!);
      const params = [{ to: token, data: `0x70a08231${owner.address.slice(2).padStart(64, "0")}` }, "latest"];
      if (BigInt(await rpc<string>(side.process.url, "eth_call", params)) !== 10n ** 30n) throw new Error(`${side.name}: balanceOf does not answer the supply`);
      bodies.set(side, Array.from({ length: callConnections }, () => Array.from({ length: callsPerConnection }, () => rpcBody("eth_call", params))));
    }
    // The check call above is each process's first: the first block is its next 5,000.
    const wallMs = new Map(sides.map((side) => [side, [] as number[]]));
    const cpuMs = new Map(sides.map((side) => [side, [] as number[]]));
    // The load client's own CPU: it shares the two cores with the process it measures.
    const clientCpuMs = new Map(sides.map((side) => [side, [] as number[]]));
    for (let block = 0; block < callBlocks; block++) {
      for (const side of inTurn(sides, block)) {
        const pid = side.process.child.pid!;
        const cpuBefore = cpuMsOf(pid);
        const clientBefore = process.cpuUsage();
        const started = performance.now();
        const result = await runSequences({ url: side.process.url, bodies: bodies.get(side)! });
        wallMs.get(side)!.push(performance.now() - started);
        cpuMs.get(side)!.push(cpuMsOf(pid) - cpuBefore);
        const client = process.cpuUsage(clientBefore);
        clientCpuMs.get(side)!.push((client.user + client.system) / 1000);
        if (result.errors > 0) throw new Error(`${side.name}: ${result.errors} failed calls; first: ${result.firstError}`);
      }
    }
    const calls = callConnections * callsPerConnection;
    const sum = (values: number[]) => values.reduce((total, each) => total + each, 0);
    console.log(`eth_call balanceOf at ${callConnections} connections, blocks of ${calls.toLocaleString("en-US")} calls, ${callBlocks} alternating blocks`);
    for (const [part, from, to] of [
      ["fresh, first block", 0, 1],
      ["warm, the other blocks", 1, callBlocks],
    ] as const) {
      const perSecond = (side: Side) => (((to - from) * calls) / sum(wallMs.get(side)!.slice(from, to))) * 1000;
      const cpuUs = (side: Side) => (sum(cpuMs.get(side)!.slice(from, to)) / ((to - from) * calls)) * 1000;
      const [node, anvil] = sides as [Side, Side];
      console.log(`  ${ratioLine(`calls/s, ${part}`, perSecond(node), perSecond(anvil), "calls/s", "higher")}`);
      console.log(`  ${ratioLine(`CPU a call (all threads), ${part}`, cpuUs(node), cpuUs(anvil), "µs", "lower")}`);
      const clientUs = (side: Side) => (sum(clientCpuMs.get(side)!.slice(from, to)) / ((to - from) * calls)) * 1000;
      console.log(`  ${ratioLine(`the client's CPU a call, ${part}`, clientUs(node), clientUs(anvil), "µs", "lower")}`);
      const name = `eth_call balanceOf, ${part.split(",")[0]} (side by side)`;
      recordResult(name, perSecond(node), "calls/s", targetsOf("higher", [39, Math.round(perSecond(anvil))]), { anvilPerSecond: perSecond(anvil), cpuUs: cpuUs(node), anvilCpuUs: cpuUs(anvil) });
    }
  });
}

/** Sends `count` token transfers one after another from `owner`; answers the block range they went into. */
async function sendTransfers(url: string, owner: Signer, token: `0x${string}`, count: number): Promise<{ from: bigint; to: bigint }> {
  const recipients = developmentSigners()
    .slice(0, 8)
    .map((signer) => signer.address.slice(2).padStart(64, "0"));
  const bodies = Array.from({ length: count }, (_, index) =>
    rpcBody("eth_sendRawTransaction", [signedRaw(owner, { to: token, data: `0xa9059cbb${recipients[index % recipients.length]}${"1".padStart(64, "0")}`, gasLimit: 100_000n })], index),
  );
  const before = BigInt(await rpc<string>(url, "eth_blockNumber", []));
  const result = await runSequences({ url, bodies: [bodies] });
  if (result.errors > 0) throw new Error(`${result.errors} failed transfers; first: ${result.firstError}`);
  // Anvil mines just after answering: the last transfer's receipt marks the end of the range.
  const last = JSON.parse(bodies[bodies.length - 1]!) as { params: [string] };
  const receipt = await receiptOf(url, keccak256(last.params[0]));
  return { from: before + 1n, to: BigInt(receipt.blockNumber) };
}

async function benchLogs(workDir: string): Promise<void> {
  const first: Record<Side["name"], number[]> = { node: [], anvil: [] };
  const repeated: Record<Side["name"], number[]> = { node: [], anvil: [] };
  let blocks: Record<Side["name"], bigint> = { node: 0n, anvil: 0n };
  for (let round = 0; round < logRounds; round++) {
    await withBoth(workDir, async (sides) => {
      const filters = new Map<Side, unknown>();
      // Each side loaded and asked at once: the other waits meanwhile.
      for (const side of inTurn(sides, round)) {
        const url = side.process.url;
        const owner = developmentSigners()[9]!;
        const token = await deployToken(url, owner);
        const range = await sendTransfers(url, owner, token, 1_000);
        const filter = { fromBlock: `0x${range.from.toString(16)}`, toBlock: `0x${range.to.toString(16)}`, address: token, topics: [transferTopic] };
        const started = performance.now();
        const logs = await rpc<unknown[]>(url, "eth_getLogs", [filter]);
        first[side.name].push(performance.now() - started);
        if (logs.length !== 1_000) throw new Error(`${side.name}: eth_getLogs found ${logs.length} logs, not 1000`);
        blocks = { ...blocks, [side.name]: range.to - range.from + 1n };
        filters.set(side, filter);
      }
      for (let run = 0; run < 10; run++) {
        for (const side of inTurn(sides, run)) {
          const started = performance.now();
          await rpc(side.process.url, "eth_getLogs", [filters.get(side)]);
          repeated[side.name].push(performance.now() - started);
        }
      }
    });
  }
  console.log(`eth_getLogs of 1,000 Transfer logs (node: ${blocks.node} blocks, anvil: ${blocks.anvil}), ${logRounds} fresh pairs`);
  console.log(`  ${ratioLine("first query, median", median(first.node), median(first.anvil), "ms", "lower")}   (node ${first.node.map((ms) => ms.toFixed(1)).join(", ")}; anvil ${first.anvil.map((ms) => ms.toFixed(1)).join(", ")})`);
  console.log(`  ${ratioLine("repeated queries, median", median(repeated.node), median(repeated.anvil), "ms", "lower")}`);
  recordResult("first eth_getLogs, 1,000 logs (side by side)", median(first.node), "ms", targetsOf("lower", [39, median(first.anvil)]), { anvilMs: median(first.anvil), repeatedMs: median(repeated.node), anvilRepeatedMs: median(repeated.anvil) });
}

async function benchTraces(workDir: string): Promise<void> {
  await withBoth(workDir, async (sides) => {
    const hashes = new Map<Side, string>();
    for (const side of sides) hashes.set(side, (await sendTraceLoop(side.process.url)).hash);
    console.log(`debug_traceTransaction of a 25,002-step transaction, medians of ${traceRounds} alternating rounds`);
    for (const variant of traceVariants) {
      const times = new Map(sides.map((side) => [side, [] as number[]]));
      const cpuMs = new Map(sides.map((side) => [side, 0]));
      const bytes = new Map(sides.map((side) => [side, 0]));
      const steps = new Map(sides.map((side) => [side, 0]));
      // Untimed first: the node's worker started and the replay's code compiled.
      for (let warmUp = 0; warmUp < 3; warmUp++) {
        for (const side of sides) {
          const trace = await timeTrace(side.process.url, hashes.get(side)!, variant.options);
          bytes.set(side, trace.bytes);
          steps.set(side, trace.steps);
        }
      }
      for (let round = 0; round < traceRounds; round++) {
        for (const side of inTurn(sides, round)) {
          const pid = side.process.child.pid!;
          const cpuBefore = cpuMsOf(pid);
          times.get(side)!.push((await timeTrace(side.process.url, hashes.get(side)!, variant.options)).ms);
          cpuMs.set(side, cpuMs.get(side)! + cpuMsOf(pid) - cpuBefore);
        }
      }
      const [node, anvil] = sides as [Side, Side];
      if (steps.get(node) !== steps.get(anvil)) throw new Error(`the traces differ: ${steps.get(node)} steps on the node, ${steps.get(anvil)} on Anvil`);
      console.log(`  ${ratioLine(`${variant.name} ${JSON.stringify(variant.options)}`, median(times.get(node)!), median(times.get(anvil)!), "ms", "lower")}`);
      console.log(
        `    CPU node ${(cpuMs.get(node)! / traceRounds).toFixed(0)} ms, anvil ${(cpuMs.get(anvil)! / traceRounds).toFixed(0)} ms; ` +
          `answer node ${(bytes.get(node)! / 1e6).toFixed(2)} MB, anvil ${(bytes.get(anvil)! / 1e6).toFixed(2)} MB; steps ${steps.get(node)} and ${steps.get(anvil)}`,
      );
      recordResult(`debug_traceTransaction ${variant.name} (side by side)`, median(times.get(node)!), "ms", targetsOf("lower", [39, median(times.get(anvil)!)]), {
        anvilMs: median(times.get(anvil)!),
        answerBytes: bytes.get(node)!,
        anvilAnswerBytes: bytes.get(anvil)!,
      });
    }
  }, ["--steps-tracing"]);
}

const workDir = await mkdtemp(join(tmpdir(), "chain-node-anvil-"));
try {
  console.log(`the node against ${anvilPath} (node ${process.version})`);
  if (parts.has("start-up")) await benchStartUp(workDir);
  if (parts.has("call")) await benchCalls(workDir);
  if (parts.has("logs")) await benchLogs(workDir);
  if (parts.has("trace")) await benchTraces(workDir);
} finally {
  await rm(workDir, { recursive: true, force: true });
}
writeResults("anvil");
