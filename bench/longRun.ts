// make bench-long: the node's resident memory over a long repeated run (issue 6: flat within 10 %
// over 10 minutes). One node on a LevelDB data dir in a fresh temporary directory; the same round
// of work again and again until the time is up: value transfers from 8 senders, sequential token
// transfers, eth_call of balanceOf at 32 connections, a ~1.6M-gas call mined, an eth_estimateGas,
// eth_getLogs over the round's Transfer logs and a struct-log trace. RSS is read after every round.
// Flat means: past the first minute (caches fill up then), the highest reading of each later minute
// stays within 10 % of the highest reading of the second minute. Peaks of whole minutes are
// compared, not single readings: a reading lands anywhere in the garbage collector's cycle (the
// old generation grows to twice what is live between full collections), and single readings of
// one minute spread over some 15 % of the resident memory with no trend at all. The drift of
// single readings against the first one past the first minute is printed too.
//   BENCH_LONG_MINUTES (default 10) sets the length; BENCH_NODE_FLAGS passes flags to the node
//   (say --heapsnapshot-signal=SIGUSR2 to look at its heap while it runs).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNodeProcess } from "../test/helpers/nodeProcess.js";
import { compileFixture } from "../test/helpers/solidity.js";
import { abiWord, deploy, developmentSigners, encodeTokenConstructor, memoryOf, minedReceipt, rpc, rpcBody, signedRaw } from "./chainClient.js";
import { runLoad, runSequences } from "./loadClient.js";
import { recordResult, targetsOf, writeResults } from "./results.js";
import { driftFrom, largestPeakDrift, peaksPerWindow, type RssReading, type WindowPeak } from "./rssWindows.js";

const minutes = Number(process.env.BENCH_LONG_MINUTES ?? 10);
const warmUpMs = Math.min(60_000, (minutes * 60_000) / 5);
const allowedDrift = 0.1;
const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
const signers = developmentSigners();
const tokenOwner = signers[9]!;
const probeOwner = signers[8]!;

const workDir = await mkdtemp(join(tmpdir(), "chain-node-long-"));
try {
  const node = await startNodeProcess(["--port", "0", "--data-dir", join(workDir, "chain")], 15_000, nodeFlags);
  try {
    const token = await deploy(node, tokenOwner, `${compileFixture("Token.sol", "Token").bytecode}${encodeTokenConstructor(10n ** 30n)}`);
    const probe = await deploy(node, probeOwner, compileFixture("Probe.sol", "Probe").bytecode);
    const balanceOf = rpcBody("eth_call", [{ to: token, data: `0x70a08231${abiWord(tokenOwner.address)}` }, "latest"]);
    const transferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

    const started = performance.now();
    const samples: RssReading[] = [];
    console.log(`long run: ${minutes} min on a LevelDB data dir in ${tmpdir()} (node ${process.version}); RSS after each round`);
    for (let round = 1; performance.now() - started < minutes * 60_000; round++) {
      const senders = signers.slice(0, 8);
      await runSequences({
        url: node.url,
        bodies: senders.map((sender, index) =>
          Array.from({ length: 25 }, (_, id) => rpcBody("eth_sendRawTransaction", [signedRaw(sender, { to: signers[(index + 1) % 8]!.address, value: 1n, gasLimit: 21_000n })], id)),
        ),
      });
      const firstTokenBlock = BigInt(await rpc<string>(node.url, "eth_blockNumber", [])) + 1n;
      await runSequences({
        url: node.url,
        bodies: [Array.from({ length: 100 }, (_, id) => rpcBody("eth_sendRawTransaction", [signedRaw(tokenOwner, { to: token, data: `0xa9059cbb${abiWord(signers[id % 8]!.address)}${abiWord(1n)}`, gasLimit: 100_000n })], id))],
      });
      await runLoad({ url: node.url, body: balanceOf, connections: 32, durationMs: 2_000 });
      const fill = await rpc<string>(node.url, "eth_sendRawTransaction", [signedRaw(probeOwner, { to: probe, data: `0x3fda5389${abiWord(300n)}`, gasLimit: 7_000_000n })]);
      if ((await minedReceipt(node.url, fill)).status !== "0x1") throw new Error("fill(300) failed");
      await rpc(node.url, "eth_estimateGas", [{ from: probeOwner.address, to: probe, data: `0xa5b6ea8f${abiWord(600n)}` }]);
      const logs = await rpc<unknown[]>(node.url, "eth_getLogs", [{ fromBlock: `0x${firstTokenBlock.toString(16)}`, toBlock: "latest", address: token, topics: [transferTopic] }]);
      if (logs.length !== 100) throw new Error(`eth_getLogs found ${logs.length} Transfer logs, not 100`);
      await rpc(node.url, "debug_traceTransaction", [fill, { disableStack: true, disableMemory: true, disableStorage: true }]);

      const { rssMiB } = memoryOf(node.child.pid!);
      const atMs = performance.now() - started;
      samples.push({ atMs, rssMiB });
      console.log(`  round ${String(round).padStart(3)} at ${(atMs / 1000).toFixed(0).padStart(4)} s: RSS ${rssMiB.toFixed(0)} MiB`);
    }

    const last = samples[samples.length - 1]!;
    const peakMiB = memoryOf(node.child.pid!).peakMiB;
    recordResult("RSS at the end of the long run", last.rssMiB, "MiB", targetsOf("lower", [6, 300]), { peakMiB });
    judgeFlatness(samples, peakMiB);
  } finally {
    await node.stop();
  }
} finally {
  await rm(workDir, { recursive: true, force: true });
}
writeResults("long");

/**
 * Records and prints the drift of each window's highest reading from the first window's (the first
 * window of `warmUpMs` is the warm-up), and the drift of single readings for comparison.
 */
function judgeFlatness(samples: readonly RssReading[], peakMiB: number): void {
  const last = samples[samples.length - 1]!;
  const windows = peaksPerWindow(samples, warmUpMs);
  const compared = largestPeakDrift(windows);
  if (compared === undefined) {
    console.log(`RSS ${last.rssMiB.toFixed(0)} MiB at the end, peak ${peakMiB.toFixed(0)} MiB; too short to compare windows of ${warmUpMs / 1000} s past the first`);
    return;
  }
  const { reference, drift: largestDrift } = compared;
  const settled = samples.filter((sample) => sample.atMs >= warmUpMs);
  const firstSettled = settled[0]!;
  const singleReadingDrift = Math.max(...settled.map((sample) => driftFrom(firstSettled.rssMiB, sample.rssMiB)));
  const windowPeaks = windows.map((window: WindowPeak) => `${(window.fromMs / 1000).toFixed(0)} s: ${window.peakMiB.toFixed(0)}`).join(", ");
  const flatness = recordResult("RSS drift after the first minute", largestDrift * 100, "%", targetsOf("lower", [6, allowedDrift * 100]), {
    measure: `highest reading of each ${warmUpMs / 1000} s past the first, against the first such window's`,
    referenceMiB: Math.round(reference.peakMiB),
    windowPeaksMiB: windowPeaks,
    singleReadingDriftPercent: Number((singleReadingDrift * 100).toFixed(1)),
    lastMiB: last.rssMiB,
    peakMiB,
    rounds: samples.length,
    minutes,
  });
  console.log(`highest RSS of each ${warmUpMs / 1000} s past the first, from: ${windowPeaks} MiB`);
  console.log(
    `RSS ${last.rssMiB.toFixed(0)} MiB at the end, peak ${peakMiB.toFixed(0)} MiB; largest drift of a window's highest reading from the first's ` +
      `${(largestDrift * 100).toFixed(1)} %: ${flatness}; single readings against the first past ${warmUpMs / 1000} s (${firstSettled.rssMiB.toFixed(0)} MiB): ${(singleReadingDrift * 100).toFixed(1)} %`,
  );
}
