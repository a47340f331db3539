// The node's heap growth, a V8 flag set at run time (cli/main.ts), and its undoing for the code
// cache (cli/launch.ts): V8 takes a code cache only under the flags it was made with, so the cache
// written at the end of a run is made under the flags a start compiles with, before main.ts sets this.
import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the old generation grow past what was live after a full collection, in percent.
 * By default V8 picks up to 300 % on a machine with memory to spare (a heap limit of 2 GiB or
 * more): the node's live heap is some 60 MiB, but under a steady load its heap grew towards 250
 * MiB and its resident memory kept rising for minutes (issue 6). At 100 % the heap stays near
 * twice what is live. Measured with make bench: at 50 % full collections came often enough to cost
 * a third of the sequential token transfers (about 250 against 340 tx/s) and doubled eth_call's
 * p99; 100 % was the best of 50, 100 and 200. Not a limit: the heap still grows with what is live.
 * A flag given to node (--heap-growing-percent, directly or in NODE_OPTIONS) wins.
 */
const heapGrowingPercent = 100;

function givenToNode(): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((flag) => /heap[-_]growing[-_]percent/.test(flag));
}

export function setHeapGrowth(): void {
  if (!givenToNode()) setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
}

/** Back to V8's default (0: V8 picks), unless node was given the flag. */
export function restoreDefaultHeapGrowth(): void {
  if (!givenToNode()) setFlagsFromString("--heap-growing-percent=0");
}
