// The figures of a bench run as JSON, beside the printed lines: one file per suite under
// dist/bench/results/ (or $BENCH_RESULTS_DIR), so runs can be compared by a script.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A figure an issue asks of a workload, and which side of it is good. */
export interface Target {
  value: number;
  better: "higher" | "lower";
  /** The issue that sets it (several issues can ask different figures of one workload). */
  issue: number;
}

export interface BenchResult {
  workload: string;
  value: number;
  unit: string;
  /** The issues' targets, each with whether it is met; empty for reference figures. */
  targets: (Target & { met: boolean })[];
  /** Other figures of the same workload (p50, p99, best, worst, RSS...). */
  details?: Record<string, number | string>;
}

const results: BenchResult[] = [];

/** Targets of the same kind from several issues: `[issue, value]` pairs. */
export function targetsOf(better: Target["better"], ...byIssue: [issue: number, value: number][]): Target[] {
  return byIssue.map(([issue, value]) => ({ issue, value, better }));
}

/**
 * Records one figure against its targets (none for reference figures); answers the verdict to
 * print, one per target, say ">= 1,000 (issue 3) met, >= 1,500 (issue 6) NOT met", or "-".
 */
export function recordResult(workload: string, value: number, unit: string, targets: readonly Target[], details?: Record<string, number | string>): string {
  const judged = targets.map((target) => ({ ...target, met: target.better === "higher" ? value >= target.value : value <= target.value }));
  results.push({ workload, value, unit, targets: judged, ...(details === undefined ? {} : { details }) });
  if (judged.length === 0) return "-";
  return judged.map((target) => `${target.better === "higher" ? ">=" : "<="} ${target.value.toLocaleString("en-US")}${unit === "%" ? " %" : ""} (issue ${target.issue}) ${target.met ? "met" : "NOT met"}`).join(", ");
}

/** Writes the run's figures to <dir>/<suite>.json and says where. */
export function writeResults(suite: string): void {
  const directory = process.env.BENCH_RESULTS_DIR ?? join("dist", "bench", "results");
  mkdirSync(directory, { recursive: true });
  const file = join(directory, `${suite}.json`);
  writeFileSync(file, `${JSON.stringify({ suite, finishedAt: new Date().toISOString(), node: process.version, results }, null, 2)}\n`);
  console.log(`results written to ${file}`);
}
