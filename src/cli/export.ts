// `chain-node export FILE`: canonical blocks of a stopped node's data dir into a file of blocks
// (node/chainTransfer.ts), with the progress on standard error and a summary on standard output.
// Exit code 0 when the file is written, 1 when refused or interrupted (the message says why).
import type { Logger } from "../common/logger.js";
import { bytesToHex } from "../common/hex.js";
import { ChainTransferError, exportChain, type NetworkProfile } from "../node/index.js";
import { formatDuration, progressLine } from "./progress.js";

export interface ExportCommand {
  readonly file: string;
  readonly dataDir: string;
  readonly network: NetworkProfile;
  readonly genesisFile: string | undefined;
  readonly from: bigint | undefined;
  readonly to: bigint | undefined;
  readonly force: boolean;
}

export async function runExport(command: ExportCommand, log: Logger): Promise<number> {
  const progress = progressLine("export");
  const started = Date.now();
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let report;
  try {
    report = await exportChain(command, log, ({ done, total, bytes }) => {
      const seconds = (Date.now() - started) / 1000;
      const rate = done / Math.max(seconds, 0.001);
      progress.update(`blocks ${done}/${total}, ${(bytes / 1e6).toFixed(1)} MB, ${rate.toFixed(0)} blocks/s, ${formatDuration((total - done) / rate)} left`, total === 0 ? 1 : done / total);
    }, interrupt.signal);
  } catch (error) {
    progress.clear();
    if (!(error instanceof ChainTransferError)) throw error;
    process.stderr.write(`chain-node export: ${error.message}\n`);
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  progress.clear();
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(
    `${command.file}: blocks ${report.from} to ${report.to} (${report.blocks} blocks, ${report.bytes} bytes) in ${seconds.toFixed(1)} s; ` +
      `the chain's head is block ${report.headNumber} ${bytesToHex(report.headHash)}\n`,
  );
  return 0;
}
