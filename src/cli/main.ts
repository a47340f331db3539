#!/usr/bin/env -S node --v8-pool-size=0
// chain-node command: flags -> options -> node; signals; exit codes
// (0 clean stop, 1 failure at start or forced stop, 2 bad usage). `chain-node verify` checks a
// stopped node's data directory instead (cli/verify.ts); `chain-node export` and `chain-node
// import` move blocks between a data directory and a file (cli/export.ts, cli/import.ts).
//
// The first line gives node its runtime flags, the ones that cannot be set once it runs (make run
// and the tests start the command with them too, read from that line):
//   --v8-pool-size=0  V8's background threads (optimizing compiler, concurrent and parallel
//                     garbage collection) are one fewer than the cores, not node's fixed 4. On a
//                     2-core machine four of them, the main thread and a client compete for two
//                     cores while V8 compiles a fresh node's hot code; measured with make bench,
//                     five alternating runs each: value transfers 1,315-1,501 tx/s (median 1,384)
//                     with 4, 1,455-1,692 (1,533) with 1; sequential ERC-20 transfers 713-906
//                     (829) against 734-999 (959).
import { createLogger } from "../common/logger.js";
import { clientVersionString } from "../common/version.js";
import { startNode, NodeConfigurationError, type RunningNode } from "../node/index.js";
import { parseCommandLine, UsageError } from "./args.js";
import { formatBanner } from "./banner.js";
import { runExport } from "./export.js";
import { setHeapGrowth } from "./heapGrowth.js";
import { runImport } from "./import.js";
import { formatDuration, progressLine, type ProgressLine } from "./progress.js";
import { runVerify } from "./verify.js";

function showSyncProgress(node: RunningNode): void {
  let progress: ProgressLine | undefined;
  let started = 0;
  node.onSyncProgress((step) => {
    if (step === undefined) {
      progress?.clear();
      progress = undefined;
      return;
    }
    if (progress === undefined) {
      progress = progressLine("sync");
      started = performance.now();
    }
    const done = Number(step.currentBlock - step.startingBlock);
    const total = Number(step.highestBlock - step.startingBlock);
    const rate = done / Math.max(0.001, (performance.now() - started) / 1000);
    progress.update(`sync: block ${step.currentBlock} of ${step.highestBlock}, ${rate.toFixed(0)} blocks/s, ${formatDuration((total - done) / rate)} left`, total === 0 ? 1 : done / total);
  });
}

async function main(): Promise<void> {
  let command;
  try {
    command = parseCommandLine(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`chain-node: ${error.message}\nRun chain-node --help for the options.\n`);
    process.exit(2);
  }
  if (command.kind === "help") {
    process.stdout.write(command.text);
    return;
  }
  if (command.kind === "verify") {
    process.exitCode = await runVerify(command.dataDir).catch((error: unknown) => {
      process.stderr.write(`chain-node verify: ${(error as Error).message}\n`);
      return 1;
    });
    return;
  }
  if (command.kind === "export" || command.kind === "import") {
    // The node's own log lines (the chain opened, warnings) go to standard error with the progress.
    // No setHeapGrowth here: a command that ends is better served by V8's own heap growth (fewer full
    // collections). Importing 10,000 mixed blocks alternating: 407/590 blocks/s at 100 %, 470/801 at 300 %.
    const log = createLogger("warn", process.stderr, process.stderr.isTTY === true ? "pretty" : "json");
    const run = command.kind === "export" ? runExport(command, log) : runImport(command, log);
    process.exitCode = await run.catch((error: unknown) => {
      process.stderr.write(`chain-node ${command.kind}: ${(error as Error)?.stack ?? String(error)}\n`);
      return 1;
    });
    return;
  }
  if (command.kind === "version") {
    process.stdout.write(`${clientVersionString()}\n`);
    return;
  }

  setHeapGrowth();
  const logFormat = command.logFormat ?? (process.stdout.isTTY === true ? "pretty" : "json");
  const log = createLogger(command.options.logLevel, undefined, logFormat);
  // Signals are handled from the start: a stop requested while the node is starting waits for it.
  let stopRequested: NodeJS.Signals | undefined;
  let stop: (() => Promise<void>) | undefined;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopRequested !== undefined) {
      log.warn({ signal }, "second signal: exiting without waiting");
      process.exit(1);
    }
    stopRequested = signal;
    log.info({ signal }, "stopping");
    stop?.().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, "error while stopping");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);

  try {
    const node = await startNode(command.options, log);
    stop = () => node.stop();
    if (logFormat === "pretty") process.stdout.write(`${await formatBanner(node, { version: clientVersionString(), mining: command.options.chain.mining })}\n`);
    // A long sync from peers draws a bar on a terminal in the foreground (the log has a line every 5 s).
    if (logFormat === "pretty" && process.stderr.isTTY === true) showSyncProgress(node);
  } catch (error) {
    const expected = error instanceof NodeConfigurationError;
    const code = (error as NodeJS.ErrnoException).code;
    if (expected || code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      log.fatal(`cannot start: ${(error as Error).message}`);
    } else {
      log.fatal({ err: error }, "cannot start");
    }
    process.exit(1);
  }
  if (stopRequested !== undefined) {
    await stop();
    process.exit(0);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`chain-node: unexpected failure: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
