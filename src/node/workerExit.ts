// The end of a worker thread that was asked to leave: it gets a grace period to leave on its own
// (at a point of its choosing, between two pieces of work) and is terminated only past it. A thread
// terminated from outside while it runs native code can abort the whole process (the secp256k1
// binding throws a C++ exception it cannot deliver), so terminate() is the last resort.
import type { Worker } from "node:worker_threads";

/**
 * Waits, at most `graceMs`, for `worker` to exit on its own; past that it is terminated. Answers
 * which happened. Call it in the same turn of the event loop as the request to leave, so that the
 * exit cannot come before it listens. The worker holds the process open meanwhile (else a command
 * with nothing else open would leave in the middle of it).
 */
export async function leftOrTerminated(worker: Worker, graceMs: number): Promise<"left" | "terminated"> {
  const exited = new Promise<"left">((resolve) => worker.once("exit", () => resolve("left")));
  worker.ref();
  let grace: NodeJS.Timeout | undefined;
  const ended = await Promise.race([exited, new Promise<"terminated">((resolve) => (grace = setTimeout(() => resolve("terminated"), graceMs)))]);
  clearTimeout(grace);
  if (ended === "terminated") await worker.terminate();
  return ended;
}
