// The figures of a bench run as JSON, beside the printed lines: one file per suite under
// dist/bench/results/ (or $BENCH_RESULTS_DIR), so runs can be compared by a script.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface BenchResult {
  workload: string;
  value: number;
  unit: string;
  /** The target and which side of it is good; absent for reference figures. */
  target?: { value: number; better: "higher" | "lower"; met: boolean };
  /** Other figures of the same workload (p50, p99, best, worst, RSS...). */
  details?: Record<string, number | string>;
}

const results: BenchResult[] = [];

/** Records one figure; with a target, whether it is met. */
export function recordResult(workload: string, value: number, unit: string, target?: { value: number; better: "higher" | "lower" }, details?: Record<string, number | string>): boolean | undefined {
  const met = target === undefined ? undefined : target.better === "higher" ? value >= target.value : value <= target.value;
  results.push({ workload, value, unit, ...(target === undefined ? {} : { target: { ...target, met: met! } }), ...(details === undefined ? {} : { details }) });
  return met;
}

/** Writes the run's figures to <dir>/<suite>.json and says where. */
export function writeResults(suite: string): void {
  const directory = process.env.BENCH_RESULTS_DIR ?? join("dist", "bench", "results");
  mkdirSync(directory, { recursive: true });
  const file = join(directory, `${suite}.json`);
  writeFileSync(file, `${JSON.stringify({ suite, finishedAt: new Date().toISOString(), node: process.version, results }, null, 2)}\n`);
  console.log(`results written to ${file}`);
}
