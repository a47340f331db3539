// The command's background threads run under Linux's SCHED_IDLE policy, so that they give way to
// the thread that answers requests and to the clients that send them. Besides the main thread a
// node has V8's platform thread (the optimizing compiler, concurrent marking, the helpers of
// parallel scavenges; one on a 2-core machine, --v8-pool-size=0), libuv's pool (LevelDB's writes
// and opening) and LevelDB's compaction thread. With two cores the compiler keeps one busy while a
// fresh node warms up, and a client woken by an answer then ran on the main thread's core,
// between the answer and the work after it. The kernel counts a core that runs only SCHED_IDLE
// threads as free when it places a woken thread, and such a thread runs whenever a core has
// nothing else to run, so on a machine with cores to spare nothing changes.
//
// node has no call for a thread's policy; chrt (util-linux) sets it for one thread id. Where chrt
// is missing or refuses, or on another system, the threads keep their policy. Threads started
// later by the main thread (the call worker, which answers eth_call) take the main thread's policy.
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { promisify } from "node:util";

const runFile = promisify(execFile);

/** The process's threads other than the main one, as thread ids (Linux); empty where they cannot be listed. */
export function backgroundThreadIds(): number[] {
  if (process.platform !== "linux") return [];
  try {
    return readdirSync("/proc/self/task")
      .map(Number)
      .filter((threadId) => Number.isInteger(threadId) && threadId !== process.pid);
  } catch {
    return [];
  }
}

/** The outcome of moving the background threads to SCHED_IDLE. */
export interface BackgroundThreadsOutcome {
  /** Threads now under SCHED_IDLE. */
  readonly idle: number;
  /** Why the others were left as they were, when any were. */
  readonly refusal?: string;
}

/**
 * Puts every thread of the process but the main one, as they are now, under SCHED_IDLE. Call it
 * once the node has started (V8's threads exist from the start, libuv's pool and LevelDB's from the
 * store's opening) and before threads that serve requests start (the call worker starts on first
 * use). A thread that ended meanwhile is skipped; at the first other refusal (no chrt) it stops.
 */
export async function idleBackgroundThreads(threadIds: readonly number[] = backgroundThreadIds()): Promise<BackgroundThreadsOutcome> {
  let idle = 0;
  for (const threadId of threadIds) {
    try {
      await runFile("chrt", ["--idle", "--pid", "0", String(threadId)], { timeout: 5_000 });
      idle++;
    } catch (error) {
      const ended = readThreadIds().includes(threadId) === false;
      if (ended) continue;
      return { idle, refusal: (error as Error).message.split("\n")[0] };
    }
  }
  return { idle };
}

function readThreadIds(): number[] {
  try {
    return readdirSync("/proc/self/task").map(Number);
  } catch {
    return [];
  }
}
