// `chain-node import FILE`: a file of blocks into a data dir through the node's block importer
// (node/chainTransfer.ts). Progress on standard error (blocks, blocks/s, Mgas/s, time left: a bar
// on a terminal, a plain line every few seconds otherwise), the summary on standard output. Exit
// code 0 when every block of the file is in the data dir, 1 when the import stopped at a block
// (the message names it, where it starts in the file and why) or was refused, 130 when interrupted.
import type { Logger } from "../common/logger.js";
import { bytesToHex } from "../common/hex.js";
import { ChainTransferError, importChain, type ImportProgress, type ImportReport, type ImportStop, type NetworkProfile } from "../node/index.js";
import { formatDuration, progressLine } from "./progress.js";

export interface ImportCommand {
  readonly file: string;
  readonly dataDir: string;
  readonly network: NetworkProfile;
  readonly genesisFile: string | undefined;
  readonly typedTransactions: boolean;
  readonly verifyWithReferenceEngine: boolean;
}

function rates(imported: number, gasUsed: bigint, seconds: number): string {
  const elapsed = Math.max(seconds, 0.001);
  return `${(imported / elapsed).toFixed(0)} blocks/s, ${(Number(gasUsed) / 1e6 / elapsed).toFixed(1)} Mgas/s`;
}

function describeStop(stop: ImportStop, file: string): string {
  const block = stop.number === undefined ? "the block" : `block ${stop.number}${stop.hash === undefined ? "" : ` ${bytesToHex(stop.hash)}`}`;
  const where = `${block} at offset ${stop.offset} of ${file}`;
  switch (stop.kind) {
    case "invalid":
      return `stopped: ${where} is invalid: ${stop.reason}`;
    case "noParent":
      return `stopped: ${where}: ${stop.reason}`;
    case "malformed":
      return stop.number === undefined ? `stopped: ${stop.reason}` : `stopped: ${where} is malformed: ${stop.reason}`;
    case "interrupted":
      return `interrupted before ${where}`;
  }
}

function summary(report: ImportReport, seconds: number, importingSeconds: number): string {
  const head = (label: string, { number, hash }: ImportReport["headBefore"]) => `${label} ${number} ${bytesToHex(hash)}`;
  const side = report.sideBranch > 0 ? ` (${report.sideBranch} on a side branch)` : "";
  return (
    `imported ${report.imported} blocks${side}, ${report.existing} already present; ${head("head before", report.headBefore)}, ${head("after", report.headAfter)}; ` +
    `${seconds.toFixed(1)} s (${importingSeconds.toFixed(1)} s importing, ${rates(report.imported, report.gasUsed, importingSeconds)}, ${(Number(report.gasUsed) / 1e6).toFixed(1)} Mgas)\n`
  );
}

export async function runImport(command: ImportCommand, log: Logger): Promise<number> {
  const progress = progressLine("import");
  const started = Date.now();
  const interrupt = new AbortController();
  const onSignal = () => {
    // A second signal does not wait: what was acknowledged is in the write-ahead log already.
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const show = (step: ImportProgress) => {
    // The first second's rates say little (one block in a millisecond is not 1,000 blocks/s).
    if (step.elapsedMs < 1000 && step.bytesRead < step.fileBytes) return;
    const seconds = step.elapsedMs / 1000;
    const byteRate = step.bytesRead / Math.max(seconds, 0.001);
    const left = formatDuration((step.fileBytes - step.bytesRead) / byteRate);
    progress.update(`blocks ${step.blocks} (${step.existing} already present), ${rates(step.imported, step.gasUsed, seconds)}, ${left} left`, step.fileBytes === 0 ? 1 : step.bytesRead / step.fileBytes);
  };
  let report;
  try {
    report = await importChain(command, log, show, interrupt.signal);
  } catch (error) {
    progress.clear();
    if (!(error instanceof ChainTransferError)) throw error;
    process.stderr.write(`chain-node import: ${error.message}\n`);
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  progress.clear();
  process.stdout.write(summary(report, (Date.now() - started) / 1000, report.elapsedMs / 1000));
  if (report.stop === undefined) return 0;
  process.stderr.write(`chain-node import: ${describeStop(report.stop, command.file)}\n`);
  return report.stop.kind === "interrupted" ? 130 : 1;
}
