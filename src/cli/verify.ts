// `chain-node verify`: runs the check of a stopped node's data directory (node/verifyDataDirectory.ts)
// with its progress on standard error (a bar on a terminal, a line every few seconds otherwise)
// and its findings on standard output. Exit code 0 when nothing is wrong, 1 otherwise.
import { verifyDataDirectory, type VerifyProgress } from "../node/index.js";
import { progressLine } from "./progress.js";

function describe(progress: VerifyProgress): { line: string; fraction?: number } {
  if (progress.phase === "files") return { line: "reading LevelDB's files" };
  if (progress.phase === "state") return { line: `head state: ${progress.nodes} trie nodes` };
  const fraction = progress.total === 0n ? 1 : Number(progress.done) / Number(progress.total);
  return { line: `blocks ${progress.done}/${progress.total}`, fraction };
}

export async function runVerify(dataDir: string): Promise<number> {
  const started = Date.now();
  const progress = progressLine("verify");
  let report;
  try {
    report = await verifyDataDirectory(dataDir, (step) => {
      const { line, fraction } = describe(step);
      progress.update(line, fraction, step.phase === "files");
    });
  } finally {
    progress.clear();
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
