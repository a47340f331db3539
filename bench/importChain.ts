// make bench, BENCH_ONLY=import: `chain-node import` of an exported chain of mixed transactions,
// next to the rate the same transactions were mined at under automine. A node on a fresh data dir
// mines BENCH_IMPORT_BLOCKS (default 10,000) blocks, one transaction each, sent pre-signed on 8
// connections (one sender each): value transfers, ERC-20 transfers and a token deployment every 500
// transactions of a sender. The node stops, `chain-node export` writes the chain to a file and
// `chain-node import` reads it into a fresh data dir, proving and executing every block. Target
// (issue 35): the import at least as fast, in blocks/s, as the mining was. bench/network.ts syncs
// the same chain between two nodes (mineMixedChain, exportChain, importChainFile).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { cliPath, commandRuntimeFlags, startNodeProcess } from "../test/helpers/nodeProcess.js";
import { compileFixture } from "../test/helpers/solidity.js";
import { abiWord, cpuMsOf, mainThreadScheduleOf, threadCpuMsOf, deploy, developmentSigners, encodeTokenConstructor, minedReceipt, rpc, rpcBody, signedRaw } from "./chainClient.js";
import { runSequences } from "./loadClient.js";
import { recordResult, targetsOf } from "./results.js";

const importBlocks = Number(process.env.BENCH_IMPORT_BLOCKS ?? 10_000);
const senderCount = 8;
const deploymentEvery = 500;

/**
 * Runs the built command to its end; answers its exit code, output, wall time and CPU time (all
 * threads, and the main thread's, read every 100 ms while it runs: the last moments are not counted).
 */
export function runCommand(args: string[], nodeFlags: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number; cpuSeconds: number; mainThreadCpuSeconds: number; threadCpuMs: number[]; mainThreadWaitingForCoreSeconds: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [...commandRuntimeFlags(), ...nodeFlags, cliPath, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let cpuMs = 0;
  let mainThreadCpuMs = 0;
  let threadCpuMs: number[] = [];
  let waitingForCoreMs = 0;
  const sampler = setInterval(() => {
    try {
      cpuMs = cpuMsOf(child.pid!);
      mainThreadCpuMs = cpuMsOf(child.pid!, true);
      threadCpuMs = threadCpuMsOf(child.pid!);
      waitingForCoreMs = mainThreadScheduleOf(child.pid!).waitingForCoreMs;
    } catch {
      // exited between the interval and the read
    }
  }, 100);
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearInterval(sampler);
      resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000, cpuSeconds: cpuMs / 1000, mainThreadCpuSeconds: mainThreadCpuMs / 1000, threadCpuMs, mainThreadWaitingForCoreSeconds: waitingForCoreMs / 1000 });
    }),
  );
}

/** A chain of mixed blocks in a data dir: its head, the mixed blocks among them and the seconds they took to mine. */
export interface MinedChain {
  readonly head: bigint;
  readonly mixed: number;
  readonly minedSeconds: number;
}

/**
 * Mines `blocks` blocks of mixed transactions (one each, 8 senders, automine) into a fresh data dir
 * `dataDir`, after the token's deployment and a token transfer to each sender; the node stops at the end.
 */
export async function mineMixedChain(dataDir: string, blocks: number): Promise<MinedChain> {
  const signers = developmentSigners();
  const senders = signers.slice(0, senderCount);
  const tokenOwner = signers[9]!;
  const tokenCode = `${compileFixture("Token.sol", "Token").bytecode}${encodeTokenConstructor(10n ** 30n)}`;
  const node = await startNodeProcess(["--port", "0", "--data-dir", dataDir]);
  try {
    // Set-up (not timed): the token, and tokens for every sender.
    const token = await deploy(node, tokenOwner, tokenCode);
    for (const sender of senders) {
      const hash = await rpc<string>(node.url, "eth_sendRawTransaction", [signedRaw(tokenOwner, { to: token, data: `0xa9059cbb${abiWord(sender.address)}${abiWord(10n ** 24n)}`, gasLimit: 100_000n })]);
      await minedReceipt(node.url, hash);
    }
    const perSender = Math.ceil(blocks / senderCount);
    const bodies = senders.map((sender, index) => {
      const next = senders[(index + 1) % senders.length]!;
      return Array.from({ length: perSender }, (_, count) => {
        const raw =
          count % deploymentEvery === deploymentEvery / 2
            ? signedRaw(sender, { data: tokenCode as `0x${string}`, gasLimit: 3_000_000n })
            : count % 2 === 0
              ? signedRaw(sender, { to: token, data: `0xa9059cbb${abiWord(next.address)}${abiWord(BigInt(count + 1))}`, gasLimit: 100_000n })
              : signedRaw(sender, { to: next.address, value: 1n, gasLimit: 21_000n });
        return rpcBody("eth_sendRawTransaction", [raw], count);
      });
    });
    // Signing took seconds: the node may have closed the kept-alive connection meanwhile, once.
    const before = BigInt(await rpc<string>(node.url, "eth_blockNumber", []).catch(() => rpc<string>(node.url, "eth_blockNumber", [])));
    const result = await runSequences({ url: node.url, bodies });
    const head = BigInt(await rpc<string>(node.url, "eth_blockNumber", []));
    if (result.errors > 0 || head - before !== BigInt(perSender * senderCount)) throw new Error(`mining: ${result.errors} errors, ${head - before} blocks (${result.firstError ?? ""})`);
    return { head, mixed: Number(head) - senderCount - 1, minedSeconds: result.seconds };
  } finally {
    await node.stop();
  }
}

/** `chain-node export` of a data dir's chain to `file`; answers the command's seconds. */
export async function exportChain(dataDir: string, file: string): Promise<number> {
  const exported = await runCommand(["export", file, "--data-dir", dataDir], []);
  if (exported.code !== 0) throw new Error(`export failed: ${exported.stderr}`);
  return exported.seconds;
}

/** What `chain-node import` says of its run: seconds importing, the gas of the blocks, the command's wall time. */
export interface ImportFigures {
  readonly importingSeconds: number;
  readonly mgas: number;
  readonly commandSeconds: number;
  readonly cpuSeconds: number;
  readonly mainThreadCpuSeconds: number;
  /** CPU by thread name (threadCpuMsOf), last read shortly before the command ended. */
  readonly threadCpuMs: readonly number[];
  /** The main thread's time runnable but waiting for a core (mainThreadScheduleOf), read the same way. */
  readonly mainThreadWaitingForCoreSeconds: number;
}

/** `chain-node import` of `file` into the data dir `dataDir` (fresh). */
export async function importChainFile(file: string, dataDir: string, nodeFlags: readonly string[]): Promise<ImportFigures> {
  const imported = await runCommand(["import", file, "--data-dir", dataDir], nodeFlags);
  if (imported.code !== 0) throw new Error(`import failed: ${imported.stdout}${imported.stderr}`);
  // "...; 41.0 s (40.2 s importing, 249 blocks/s, 8.1 Mgas/s, 325.3 Mgas)"
  const figures = /([\d.]+) s importing, (\d+) blocks\/s, ([\d.]+) Mgas\/s, ([\d.]+) Mgas\)/.exec(imported.stdout);
  if (figures === null) throw new Error(`unexpected import summary: ${imported.stdout}`);
  return { importingSeconds: Number(figures[1]), mgas: Number(figures[4]), commandSeconds: imported.seconds, cpuSeconds: imported.cpuSeconds, mainThreadCpuSeconds: imported.mainThreadCpuSeconds, threadCpuMs: imported.threadCpuMs, mainThreadWaitingForCoreSeconds: imported.mainThreadWaitingForCoreSeconds };
}

export async function benchImport(workDir: string, nodeFlags: readonly string[]): Promise<void> {
  const original = join(workDir, "import-original");
  const { head: blocks, mixed, minedSeconds } = await mineMixedChain(original, importBlocks);
  const minedRate = mixed / minedSeconds;

  const file = join(workDir, "import.blocks");
  const exportSeconds = await exportChain(original, file);
  console.log(`  mined under automine: ${minedRate.toFixed(0)} blocks/s (${mixed} transactions on ${senderCount} connections in ${minedSeconds.toFixed(1)} s); export of ${blocks} blocks ${exportSeconds.toFixed(1)} s`);
  const { importingSeconds, mgas: gas, commandSeconds } = await importChainFile(file, join(workDir, "import-copy"), nodeFlags);
  const importRate = Number(blocks) / importingSeconds;
  const verdict = recordResult("chain-node import (mixed blocks)", importRate, "blocks/s", targetsOf("higher", [35, Math.round(minedRate)]), {
    mgasPerSecond: gas / importingSeconds,
    blocks: Number(blocks),
    commandSeconds,
    minedBlocksPerSecond: minedRate,
    minedMgasPerSecond: gas / minedSeconds,
    exportSeconds,
  });
  console.log(
    `${"chain-node import (mixed blocks)".padEnd(34)} ${importRate.toFixed(0).padStart(7)} blocks/s ${(gas / importingSeconds).toFixed(1)} Mgas/s  (${blocks} blocks, ${gas.toFixed(0)} Mgas in ${importingSeconds.toFixed(1)} s; the command ${commandSeconds.toFixed(1)} s)  ${verdict}`,
  );
}
