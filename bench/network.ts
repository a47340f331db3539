// make bench-network: the peer-to-peer figures of issue 38, node processes of the built command
// talking libp2p over TCP on their own loopback addresses (127.0.0.2, .3, .4), driven over HTTP
// and WebSocket from this process.
//   - sync: a node on a data dir holding BENCH_SYNC_BLOCKS (default 10,000) blocks of mixed
//     transactions (bench/importChain.ts's chain: value transfers, ERC-20 transfers, a token
//     deployment every 500 transactions of a sender) serves a fresh node started with --bootnodes
//     naming it; timed from the fresh node's spawn until its head is the server's, in blocks/s and
//     Mgas/s. Beside it, in the same run, `chain-node import` of the same chain exported to a file
//     into a fresh data dir, timed from its spawn to its exit (target: the sync at least as fast in
//     blocks/s; both figures count the process's start, and the sync its peer's connection too).
//     The long sync's own seconds and the import's own (after the command's start) are printed
//     beside them;
//   - block propagation: three in-memory nodes in a line, A—B—C (B dials A, C dials B; the line is
//     checked: A and C have one peer each). A automines transfers sent to it one every
//     BENCH_PACE_MS (default 50 ms); for each of BENCH_PROPAGATIONS (default 200) blocks after 20 of
//     warm-up, the time from A's newHeads notification (the block on A's disk) to C's, both over
//     WebSocket to this process: median and p99 (target p99 under 250 ms);
//   - transaction propagation: the same line with A's automine off (evm_setAutomine; B and C never
//     mine), transfers sent to A at the same pace, the time from A's newPendingTransactions
//     notification to C's: median and p99 (target p99 under 150 ms); from the send to C's notification
//     is reported too;
//   - start-up: spawn to the first eth_blockNumber answer of a lone dev node (--in-memory), this
//     build alternating with BENCH_OTHER (another build's dist/bundle/cli/chain-node.cjs, say the
//     build before issue 38) over BENCH_START_ROUNDS rounds (default 15): at most 10 ms slower than it. Only
//     with BENCH_OTHER.
// The figures go to dist/bench/results/network.json (bench/results.ts). BENCH_ONLY=sync,blocks,
// transactions,start-up picks workloads; BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=DIR" profiles
// every node started (and the import command); BENCH_NODE_ARGS adds options to every node (say,
// --log-level debug) and BENCH_LOG_DIR keeps every node's log there.
import { writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cliPath, commandRuntimeFlags, startListeningProcess, startNodeProcess, type NodeProcess } from "../test/helpers/nodeProcess.js";
import { cpuMsOf, developmentSigners, mainThreadScheduleOf, threadCpuMsOf, threadCpuText, median, percentile, rpc, rpcBody, signedRaw, type Signer } from "./chainClient.js";
import { exportChain, importChainFile, mineMixedChain } from "./importChain.js";
import { recordResult, targetsOf, writeResults } from "./results.js";
import { seededRandom } from "../test/helpers/seededRandom.js";
import { openRawWebSocket, textFrame, type RawWebSocket } from "./webSocketClient.js";

const syncBlocks = Number(process.env.BENCH_SYNC_BLOCKS ?? 10_000);
const propagations = Number(process.env.BENCH_PROPAGATIONS ?? 200);
const paceMs = Number(process.env.BENCH_PACE_MS ?? 50);
const warmUp = 20;
const startRounds = Number(process.env.BENCH_START_ROUNDS ?? 15);
const otherBundle = process.env.BENCH_OTHER === undefined ? undefined : resolve(process.env.BENCH_OTHER);
const selected = new Set((process.env.BENCH_ONLY ?? "sync,blocks,transactions,start-up").split(","));
const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
const nodeArguments = process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
/** Issue 38's targets. */
const blockP99Ms = 250;
const transactionP99Ms = 150;
const startUpToleranceMs = 10;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every `everyMs` until it answers true; fails after `timeoutMs`. */
async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** A node of the command with the network on, its libp2p listener on `p2pHost`, port 0. */
function startPeer(p2pHost: string, args: string[], bootnode?: string): Promise<NodeProcess> {
  const network = bootnode === undefined ? ["--p2p"] : ["--bootnodes", bootnode];
  return startNodeProcess(["--port", "0", "--p2p-host", p2pHost, "--p2p-port", "0", ...network, ...args, ...nodeArguments], 30_000, nodeFlags);
}

/** The multiaddr of a node's "p2p listening" line (logged before the JSON-RPC server's). */
function multiaddrOf(node: NodeProcess): string {
  for (const line of node.lines) {
    if (!line.includes('"p2p listening"')) continue;
    const record = JSON.parse(line) as { multiaddrs: string[] };
    return record.multiaddrs[0]!;
  }
  throw new Error(`no "p2p listening" line among ${node.lines.length} lines`);
}

/** The first log line with this message, parsed; undefined if none yet. */
function logLine(node: NodeProcess, message: string): Record<string, unknown> | undefined {
  const line = node.lines.find((candidate) => candidate.includes(`"msg":"${message}"`));
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
}

/** BENCH_LOG_DIR: each node's log lines, to read where a block waited (with BENCH_NODE_ARGS="--log-level debug"). */
function writeLogs(nodes: Record<string, NodeProcess>): void {
  const directory = process.env.BENCH_LOG_DIR;
  if (directory !== undefined) for (const [name, node] of Object.entries(nodes)) writeFileSync(join(directory, `${name}.log`), `${node.lines.join("\n")}\n`);
}

function wsUrl(node: NodeProcess): string {
  return `${node.url.replace(/^http/, "ws")}/`;
}

/** A subscription over WebSocket: when each notification's key (a block's or transaction's hash) arrived. */
async function subscribe(node: NodeProcess, kind: "newHeads" | "newPendingTransactions"): Promise<{ arrivals: Map<string, number>; socket: RawWebSocket }> {
  const arrivals = new Map<string, number>();
  let subscribed: (() => void) | undefined;
  const socket = await openRawWebSocket(wsUrl(node), (payload, atMs) => {
    const message = JSON.parse(payload.toString("utf8")) as { id?: number; params?: { result: string | { hash: string } } };
    if (message.id === 1) return subscribed?.();
    if (message.params === undefined) return;
    const result = message.params.result;
    const key = typeof result === "string" ? result : result.hash;
    if (!arrivals.has(key)) arrivals.set(key, atMs);
  });
  await new Promise<void>((resolve) => {
    subscribed = resolve;
    socket.send(textFrame(rpcBody("eth_subscribe", [kind])));
  });
  return { arrivals, socket };
}

function line(name: string, value: string, rest: string, verdict: string): void {
  console.log(`${name.padEnd(40)} ${value.padStart(16)}  ${rest}  ${verdict}`);
}

// --- sync ---

async function benchSync(workDir: string): Promise<void> {
  const source = join(workDir, "sync-source");
  const chain = await mineMixedChain(source, syncBlocks);
  const blocks = Number(chain.head);
  const file = join(workDir, "sync.blocks");
  await exportChain(source, file);
  console.log(`  ${blocks} blocks mined under automine in ${chain.minedSeconds.toFixed(1)} s (${(chain.mixed / chain.minedSeconds).toFixed(0)} blocks/s) and exported`);

  const imported = await importChainFile(file, join(workDir, "sync-import"), nodeFlags);
  // From spawn to exit, like the sync's from spawn to the head: both count a process's start.
  const importRate = blocks / imported.commandSeconds;
  const mgas = imported.mgas;
  line("chain-node import of the same chain", `${importRate.toFixed(0)} blocks/s`, `${(mgas / imported.commandSeconds).toFixed(1)} Mgas/s (${imported.commandSeconds.toFixed(1)} s from spawn to exit; its own ${imported.importingSeconds.toFixed(1)} s importing, ${(blocks / imported.importingSeconds).toFixed(0)} blocks/s; CPU ${imported.cpuSeconds.toFixed(1)} s, main thread ${imported.mainThreadCpuSeconds.toFixed(1)} s)`, "-");
  console.log(`  the import's threads: ${threadCpuText(imported.threadCpuMs)}; its main thread waited ${imported.mainThreadWaitingForCoreSeconds.toFixed(1)} s for a core, and had nothing to do for ${(imported.commandSeconds - imported.mainThreadCpuSeconds - imported.mainThreadWaitingForCoreSeconds).toFixed(1)} s`);
  recordResult("chain-node import (sync's chain)", importRate, "blocks/s", [], { mgasPerSecond: mgas / imported.commandSeconds, importingSeconds: imported.importingSeconds, commandSeconds: imported.commandSeconds, cpuSeconds: imported.cpuSeconds, mainThreadCpuSeconds: imported.mainThreadCpuSeconds, blocks, mgas });

  const server = await startPeer("127.0.0.2", ["--data-dir", source, "--no-mining"]);
  try {
    const serverHead = await rpc<{ hash: string; number: string }>(server.url, "eth_getBlockByNumber", ["latest", false]);
    if (Number(serverHead.number) !== blocks) throw new Error(`the server's head is ${Number(serverHead.number)}, not ${blocks}`);
    const serverCpuBefore = cpuMsOf(server.child.pid!);
    const started = performance.now();
    const follower = await startPeer("127.0.0.3", ["--data-dir", join(workDir, "sync-follower"), "--no-mining"], multiaddrOf(server));
    try {
      const listeningMs = performance.now() - started;
      // Polled every 100 ms; a head that stays put for a minute ends the run (a sync that stalled).
      let lastHead = -1n;
      let lastMove = performance.now();
      await waitFor(
        "the follower at the server's head",
        async () => {
          const head = BigInt(await rpc<string>(follower.url, "eth_blockNumber", []));
          if (head !== lastHead) [lastHead, lastMove] = [head, performance.now()];
          else if (performance.now() - lastMove > 60_000) throw new Error(`the sync stalled at block ${head} of ${chain.head}: eth_syncing ${JSON.stringify(await rpc(follower.url, "eth_syncing", []))}`);
          return head >= chain.head;
        },
        30 * 60_000,
        100,
      );
      const seconds = (performance.now() - started) / 1000;
      // Busy or waiting: each process's CPU (all threads) over the sync's wall time.
      const followerCpu = cpuMsOf(follower.child.pid!) / 1000;
      const followerMainThreadCpu = cpuMsOf(follower.child.pid!, true) / 1000;
      const followerThreads = threadCpuMsOf(follower.child.pid!);
      const followerMainThread = mainThreadScheduleOf(follower.child.pid!);
      const serverCpu = (cpuMsOf(server.child.pid!) - serverCpuBefore) / 1000;
      const followerHead = await rpc<{ hash: string }>(follower.url, "eth_getBlockByNumber", [serverHead.number, false]);
      if (followerHead.hash !== serverHead.hash) throw new Error(`block ${blocks}: the follower has ${followerHead.hash}, the server ${serverHead.hash}`);
      const done = logLine(follower, "long sync done");
      const rate = blocks / seconds;
      const verdict = recordResult(`sync of ${blocks} mixed blocks to a fresh node`, rate, "blocks/s", targetsOf("higher", [38, Math.round(importRate)]), {
        mgasPerSecond: mgas / seconds,
        seconds,
        listeningMs,
        longSyncSeconds: Number(done?.seconds ?? Number.NaN),
        importBlocksPerSecond: importRate,
        blocks,
        followerCpuSeconds: followerCpu,
        followerMainThreadCpuSeconds: followerMainThreadCpu,
        serverCpuSeconds: serverCpu,
        followerMainThreadWaitingForCoreSeconds: followerMainThread.waitingForCoreMs / 1000,
      });
      line(`sync of ${blocks} mixed blocks`, `${rate.toFixed(0)} blocks/s`, `${(mgas / seconds).toFixed(1)} Mgas/s (${seconds.toFixed(1)} s from spawn; listening after ${listeningMs.toFixed(0)} ms, the long sync's own ${String(done?.seconds ?? "?")} s, ${done?.seconds === undefined ? "?" : (blocks / Number(done.seconds)).toFixed(0)} blocks/s)`, verdict);
      console.log(`  CPU (all threads) in those ${seconds.toFixed(1)} s: the fresh node ${followerCpu.toFixed(1)} s (main thread ${followerMainThreadCpu.toFixed(1)} s), the node it syncs from ${serverCpu.toFixed(1)} s`);
      console.log(`  the fresh node's threads: ${threadCpuText(followerThreads)}; its main thread waited ${(followerMainThread.waitingForCoreMs / 1000).toFixed(1)} s for a core, and had nothing to do for ${(seconds - (followerMainThread.runningMs + followerMainThread.waitingForCoreMs) / 1000).toFixed(1)} s`);
    } finally {
      await follower.stop();
      writeLogs({ "sync-follower": follower });
    }
  } finally {
    await server.stop();
    writeLogs({ "sync-server": server });
  }
}

// --- propagation in a line of three ---

interface Line {
  readonly a: NodeProcess;
  readonly b: NodeProcess;
  readonly c: NodeProcess;
}

async function startLine(): Promise<Line> {
  const a = await startPeer("127.0.0.2", ["--in-memory"]);
  const b = await startPeer("127.0.0.3", ["--in-memory", "--no-mining"], multiaddrOf(a)).catch(async (error: unknown) => {
    await a.stop();
    throw error;
  });
  const c = await startPeer("127.0.0.4", ["--in-memory", "--no-mining"], multiaddrOf(b)).catch(async (error: unknown) => {
    await Promise.all([a.stop(), b.stop()]);
    throw error;
  });
  const line = { a, b, c };
  try {
    const peers = (node: NodeProcess) => rpc<string>(node.url, "net_peerCount", []).then(Number);
    await waitFor("the line A—B—C connected", async () => (await peers(a)) === 1 && (await peers(b)) === 2 && (await peers(c)) === 1, 30_000, 100);
  } catch (error) {
    await stopLine(line);
    throw error;
  }
  return line;
}

/** CPU time (ms, all threads) of A, B and C so far. */
function cpuOfLine({ a, b, c }: Line): number[] {
  return [a, b, c].map((node) => cpuMsOf(node.child.pid!));
}

/** CPU ms each of A, B, C spent per item since `before`, as "a / b / c". */
function cpuPerItem(nodes: Line, before: number[], items: number): number[] {
  return cpuOfLine(nodes).map((now, index) => (now - before[index]!) / items);
}

async function stopLine({ a, b, c }: Line): Promise<void> {
  writeLogs({ "line-a": a, "line-b": b, "line-c": c });
  await Promise.all([a.stop(), b.stop(), c.stop()]);
}

/** Sends `raws` to `node` one every `paceMs` (not waiting for an answer before the next); answers when each send started. */
async function sendPaced(node: NodeProcess, raws: readonly string[]): Promise<{ sentAt: number[]; hashes: string[] }> {
  const sentAt: number[] = [];
  const answers: Promise<string>[] = [];
  const started = performance.now();
  for (const [index, raw] of raws.entries()) {
    const due = started + index * paceMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    sentAt.push(performance.now());
    answers.push(rpc<string>(node.url, "eth_sendRawTransaction", [raw]));
  }
  return { sentAt, hashes: await Promise.all(answers) };
}

/** Transfers among the first eight development accounts, taking turns. */
function transfers(signers: Signer[], count: number): string[] {
  return Array.from({ length: count }, (_, index) => {
    const sender = signers[index % 8]!;
    return signedRaw(sender, { to: signers[(index + 1) % 8]!.address, value: 1n, gasLimit: 21_000n });
  });
}

/** Latencies (ms) of the keys seen by both subscriptions, and the keys the far one missed. */
function latencies(keys: readonly string[], near: Map<string, number>, far: Map<string, number>): { values: number[]; missing: number } {
  const values: number[] = [];
  let missing = 0;
  for (const key of keys) {
    const from = near.get(key);
    const to = far.get(key);
    if (from === undefined || to === undefined) missing++;
    else values.push(to - from);
  }
  return { values, missing };
}

function reportLatency(name: string, values: readonly number[], missing: number, p99Target: number, details: Record<string, number | string>): void {
  const p50 = percentile(values, 0.5);
  const p99 = percentile(values, 0.99);
  const verdict = recordResult(name, p99, "ms", targetsOf("lower", [38, p99Target]), { p50Ms: p50, maxMs: Math.max(...values), count: values.length, missing, ...details });
  line(name, `p99 ${p99.toFixed(1)} ms`, `median ${p50.toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms (${values.length} measured, ${missing} missing)`, verdict);
}

async function benchBlockPropagation(nodes: Line, signers: Signer[]): Promise<void> {
  const [fromA, toB, toC] = await Promise.all([subscribe(nodes.a, "newHeads"), subscribe(nodes.b, "newHeads"), subscribe(nodes.c, "newHeads")]);
  try {
    // The gossip mesh forms at a heartbeat (1 s); the first blocks also warm the nodes' code.
    await sleep(1_500);
    await sendPaced(nodes.a, transfers(signers, warmUp));
    const cpuBefore = cpuOfLine(nodes);
    const sent = await sendPaced(nodes.a, transfers(signers, propagations));
    const hashes = await Promise.all(sent.hashes.map((hash) => rpc<{ blockHash: string }>(nodes.a.url, "eth_getTransactionReceipt", [hash]).then((receipt) => receipt.blockHash)));
    await waitFor("C has the last block", async () => toC.arrivals.has(hashes.at(-1)!), 10_000).catch(() => undefined);
    const cpu = cpuPerItem(nodes, cpuBefore, propagations);
    await sleep(500);
    const { values, missing } = latencies(hashes, fromA.arrivals, toC.arrivals);
    const firstHop = latencies(hashes, fromA.arrivals, toB.arrivals).values;
    reportLatency("block propagation A→C (on A to on C)", values, missing, blockP99Ms, {
      paceMs,
      firstHopP50Ms: percentile(firstHop, 0.5),
      firstHopP99Ms: percentile(firstHop, 0.99),
      cpuMsPerBlockA: cpu[0]!,
      cpuMsPerBlockB: cpu[1]!,
      cpuMsPerBlockC: cpu[2]!,
    });
    console.log(`  A→B alone: median ${percentile(firstHop, 0.5).toFixed(1)} ms, p99 ${percentile(firstHop, 0.99).toFixed(1)} ms; a block every ${paceMs} ms, one transfer each`);
    console.log(`  CPU a block (all threads, its transaction's gossip with it): A ${cpu[0]!.toFixed(1)} ms, B ${cpu[1]!.toFixed(1)} ms, C ${cpu[2]!.toFixed(1)} ms`);
  } finally {
    for (const subscription of [fromA, toB, toC]) subscription.socket.close();
  }
}

async function benchTransactionPropagation(nodes: Line, signers: Signer[]): Promise<void> {
  await rpc(nodes.a.url, "evm_setAutomine", [false]);
  const [fromA, toB, toC] = await Promise.all([subscribe(nodes.a, "newPendingTransactions"), subscribe(nodes.b, "newPendingTransactions"), subscribe(nodes.c, "newPendingTransactions")]);
  try {
    await sendPaced(nodes.a, transfers(signers, warmUp));
    const cpuBefore = cpuOfLine(nodes);
    const sent = await sendPaced(nodes.a, transfers(signers, propagations));
    await waitFor("C has the last transaction", async () => toC.arrivals.has(sent.hashes.at(-1)!), 10_000).catch(() => undefined);
    const cpu = cpuPerItem(nodes, cpuBefore, propagations);
    await sleep(500);
    const { values, missing } = latencies(sent.hashes, fromA.arrivals, toC.arrivals);
    const firstHop = latencies(sent.hashes, fromA.arrivals, toB.arrivals).values;
    const fromSend = sent.hashes.flatMap((hash, index) => (toC.arrivals.has(hash) ? [toC.arrivals.get(hash)! - sent.sentAt[index]!] : []));
    reportLatency("transaction propagation A→C (pending)", values, missing, transactionP99Ms, {
      paceMs,
      firstHopP50Ms: percentile(firstHop, 0.5),
      firstHopP99Ms: percentile(firstHop, 0.99),
      fromSendP50Ms: percentile(fromSend, 0.5),
      fromSendP99Ms: percentile(fromSend, 0.99),
      cpuMsPerTransactionA: cpu[0]!,
      cpuMsPerTransactionB: cpu[1]!,
      cpuMsPerTransactionC: cpu[2]!,
    });
    console.log(`  CPU a transaction (all threads): A ${cpu[0]!.toFixed(1)} ms, B ${cpu[1]!.toFixed(1)} ms, C ${cpu[2]!.toFixed(1)} ms`);
    console.log(`  A→B alone: median ${percentile(firstHop, 0.5).toFixed(1)} ms, p99 ${percentile(firstHop, 0.99).toFixed(1)} ms; from the send to A to C's notification: median ${percentile(fromSend, 0.5).toFixed(1)} ms, p99 ${percentile(fromSend, 0.99).toFixed(1)} ms`);
    const pending = await Promise.all([nodes.a, nodes.b, nodes.c].map((node) => rpc<{ pending: string }>(node.url, "txpool_status", []).then((status) => Number(status.pending))));
    console.log(`  pending in A, B, C: ${pending.join(", ")}`);
  } finally {
    for (const subscription of [fromA, toB, toC]) subscription.socket.close();
  }
}

// --- start-up of a lone dev node ---

/** Milliseconds from spawning `bundle` (a lone node in memory) to its first eth_blockNumber answer. */
async function timeStartUp(bundle: string): Promise<number> {
  const started = performance.now();
  const node = await startListeningProcess(bundle, ["--in-memory", "--port", "0"], 15_000, commandRuntimeFlags(bundle));
  try {
    await rpc(node.url, "eth_blockNumber", []);
    return performance.now() - started;
  } finally {
    await node.stop();
  }
}

async function benchStartUp(other: string): Promise<void> {
  const mine: number[] = [];
  const theirs: number[] = [];
  for (let round = 0; round < startRounds; round++) {
    // Alternating which goes first, so that neither always follows the other's exit.
    if (round % 2 === 0) {
      mine.push(await timeStartUp(cliPath));
      theirs.push(await timeStartUp(other));
    } else {
      theirs.push(await timeStartUp(other));
      mine.push(await timeStartUp(cliPath));
    }
  }
  // Each round's two starts ran back to back: their difference leaves out how the host's speed
  // drifted between rounds, which the two medians do not. Its spread: the 5th and 95th percentiles
  // of the median over resamples of the rounds (a bootstrap, seeded, so reruns of the same figures
  // print the same interval).
  const differences = mine.map((ms, round) => ms - theirs[round]!);
  const difference = median([...differences]);
  const [low, high] = bootstrapMedianInterval(differences);
  // "Unchanged" is about slowing down: a start that got faster passes.
  const met = difference <= startUpToleranceMs;
  recordResult("lone dev node start-up, this build less BENCH_OTHER", difference, "ms", [], { thisMs: median(mine), otherMs: median(theirs), rounds: startRounds, other, intervalLowMs: low, intervalHighMs: high, withinTolerance: met ? "yes" : "no" });
  line(
    "lone dev node start-up (in memory)",
    `${median(mine).toFixed(0)} ms`,
    `BENCH_OTHER ${median(theirs).toFixed(0)} ms; median of the ${startRounds} rounds' differences ${difference.toFixed(1)} ms (90 % of resamples within ${low.toFixed(1)} to ${high.toFixed(1)})`,
    `at most ${startUpToleranceMs} ms slower (issue 38) ${met ? "met" : "NOT met"}`,
  );
}

/** The 5th and 95th percentiles of the median of `values` resampled with replacement (2,000 times, seeded). */
function bootstrapMedianInterval(values: readonly number[]): [number, number] {
  const next = seededRandom(38);
  const medians: number[] = [];
  for (let resample = 0; resample < 2_000; resample++) medians.push(median(Array.from(values, () => values[next() % values.length]!)));
  return [percentile(medians, 0.05), percentile(medians, 0.95)];
}

const workDir = await mkdtemp(join(tmpdir(), "chain-node-bench-network-"));
try {
  console.log(`peer-to-peer over TCP on 127.0.0.2-4 (node ${process.version})`);
  if (selected.has("sync")) await benchSync(workDir);
  if (selected.has("blocks") || selected.has("transactions")) {
    const nodes = await startLine();
    try {
      const signers = developmentSigners();
      if (selected.has("blocks")) await benchBlockPropagation(nodes, signers);
      if (selected.has("transactions")) await benchTransactionPropagation(nodes, signers);
    } finally {
      await stopLine(nodes);
    }
  }
  if (selected.has("start-up")) {
    if (otherBundle === undefined) console.log("lone dev node start-up: set BENCH_OTHER to another build's dist/bundle/cli/chain-node.cjs to compare");
    else await benchStartUp(otherBundle);
  }
} finally {
  await rm(workDir, { recursive: true, force: true });
}
writeResults("network");
