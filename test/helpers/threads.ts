// Threads of a process as Linux shows them in /proc.
import { readdirSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";

/** SCHED_IDLE, as /proc shows a thread's scheduling policy. */
export const schedIdlePolicy = 5;

/** Whether chrt (util-linux), which the command sets its background threads' policy with, can run here. */
export const chrtAvailable = process.platform === "linux" && spawnSync("chrt", ["--version"]).status === 0;

/** The thread ids of a process, its main thread (the process id) included. */
export function threadIdsOf(processId: number): number[] {
  return readdirSync(`/proc/${processId}/task`).map(Number);
}

/** The scheduling policy of a thread (field 41 of its stat line): 0 SCHED_OTHER, 5 SCHED_IDLE. */
export function threadPolicy(processId: number, threadId: number): number {
  const stat = readFileSync(`/proc/${processId}/task/${threadId}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[38]);
}
