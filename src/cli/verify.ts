// `chain-node verify`: runs the check of a stopped node's data directory (node/verifyDataDirectory.ts)
// with its progress on standard error (a bar on a terminal, a line every few seconds otherwise)
// and its findings on standard output. Exit code 0 when nothing is wrong, 1 otherwise.
import { verifyDataDirectory, type VerifyProgress } from "../node/index.js";

const plainProgressIntervalMs = 5000;
const barWidth = 30;

function describe(progress: VerifyProgress): { line: string; fraction?: number } {
  if (progress.phase === "files") return { line: "reading LevelDB's files" };
  if (progress.phase === "state") return { line: `head state: ${progress.nodes} trie nodes` };
  const fraction = progress.total === 0n ? 1 : Number(progress.done) / Number(progress.total);
  return { line: `blocks ${progress.done}/${progress.total}`, fraction };
}

function progressWriter(terminal: boolean): (progress: VerifyProgress) => void {
  let lastPlainLine = 0;
  const started = Date.now();
  return (progress) => {
    const { line, fraction } = describe(progress);
    if (terminal) {
      const filled = fraction === undefined ? 0 : Math.round(fraction * barWidth);
      const bar = fraction === undefined ? "" : `[${"#".repeat(filled)}${".".repeat(barWidth - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% `;
      process.stderr.write(`\r\x1b[K${bar}${line}`);
    } else if (Date.now() - lastPlainLine >= plainProgressIntervalMs || progress.phase === "files") {
      lastPlainLine = Date.now();
      process.stderr.write(`verify: ${line} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
    }
  };
}

export async function runVerify(dataDir: string): Promise<number> {
  const terminal = process.stderr.isTTY === true;
  const started = Date.now();
  let report;
  try {
    report = await verifyDataDirectory(dataDir, progressWriter(terminal));
  } finally {
    if (terminal) process.stderr.write("\r\x1b[K");
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const counts = `${report.tablesRead} LevelDB tables, ${report.blocksChecked} blocks, ${report.stateNodes} state trie nodes (${report.accounts} accounts) in ${seconds} s`;
  if (report.problems.length === 0) {
    process.stdout.write(`${dataDir}: no problem found in ${counts}\n`);
    return 0;
  }
  process.stdout.write(`${dataDir}: ${report.problems.length} problem${report.problems.length === 1 ? "" : "s"} found (checked ${counts}):\n`);
  for (const problem of report.problems) process.stdout.write(`  ${problem}\n`);
  return 1;
}
