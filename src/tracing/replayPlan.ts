// A replay described as plain data: which transactions of a block to trace and with which tracer.
// The same plan runs on the main thread or on the call worker's thread (node/callWorker.ts), so
// both make the same tracers, share a struct-log budget the same way and answer the same traces.
import type { Block } from "../chain/block.js";
import { CallTracer, type CallFrame, type CallTracerOptions } from "./callTracer.js";
import { FlatTracer, type FlatTrace } from "./flatTraces.js";
import { replayBlock, type ReplayDependencies, type TransactionTracer } from "./replay.js";
import { createStructLogBudget, StructLogger, StructLogTraceJson, type StructLogLimit, type StructLogOptions } from "./structLogger.js";

/** The tracer of every traced transaction of one replay. */
export type TracerChoice =
  /** `limit`: the struct-log text all traces of the replay may hold together. */
  | { kind: "structLog"; options: StructLogOptions; limit: StructLogLimit }
  | { kind: "call"; options: CallTracerOptions }
  | { kind: "flat" };

export interface ReplayPlan {
  tracer: TracerChoice;
  /** Positions in the block of the transactions to trace, ascending; the replay stops after the last. */
  traced: readonly number[];
}

/** One traced transaction's trace, by tracer: StructLogTraceJson, CallFrame or FlatTrace[]. */
export type ReplayOutput = StructLogTraceJson | CallFrame | FlatTrace[];

/** Runs `plan` on `block`: the traces of the traced transactions, in block order. */
export function runReplayPlan(deps: ReplayDependencies, block: Block, plan: ReplayPlan, deadline: number): Promise<ReplayOutput[]> {
  const traced = new Set(plan.traced);
  const lastIndex = plan.traced.length === 0 ? -1 : plan.traced[plan.traced.length - 1]!;
  const makeTracer = tracerMaker(plan.tracer, block);
  return replayBlock<ReplayOutput>(deps, block, lastIndex, (_transaction, index) => (traced.has(index) ? makeTracer() : undefined), deadline);
}

function tracerMaker(choice: TracerChoice, block: Block): () => TransactionTracer<ReplayOutput> {
  switch (choice.kind) {
    case "structLog": {
      // One budget for the whole replay: a block's struct logs share the response they go into.
      const budget = createStructLogBudget(choice.limit);
      return () => new StructLogger(choice.options, budget);
    }
    case "call":
      return () => new CallTracer(choice.options);
    case "flat":
      return () => new FlatTracer(block);
  }
}

/**
 * Traces as they cross to another thread: a struct-log trace as its JSON parts and length (the
 * class does not survive a structured clone; its chunks of bytes move without a copy: see
 * transferablesOf), the others as the plain objects they are.
 */
export type ReplayOutputOnWire = { parts: readonly (string | Uint8Array)[]; byteLength: number } | CallFrame | FlatTrace[];

export function replayOutputsToWire(choice: TracerChoice, outputs: readonly ReplayOutput[]): ReplayOutputOnWire[] {
  if (choice.kind !== "structLog") return outputs as ReplayOutputOnWire[];
  return outputs.map((output) => ({ parts: (output as StructLogTraceJson).parts, byteLength: (output as StructLogTraceJson).byteLength }));
}

/**
 * The memory of the struct-log chunks among `outputs`, to be handed to the other thread rather
 * than copied (postMessage's transfer list): a trace of a gigabyte is never held twice.
 */
export function transferablesOf(outputs: readonly ReplayOutputOnWire[]): ArrayBuffer[] {
  const buffers: ArrayBuffer[] = [];
  for (const output of outputs) {
    if (!("parts" in output)) continue;
    for (const part of output.parts) {
      // Only a chunk that has its memory to itself can move: Buffer's shared pool serves only
      // allocations under half its size, and the struct logger allocates none of them.
      if (typeof part !== "string" && part.buffer instanceof ArrayBuffer && part.buffer.byteLength > Buffer.poolSize >>> 1) buffers.push(part.buffer);
    }
  }
  return buffers;
}

export function replayOutputsFromWire(choice: TracerChoice, outputs: readonly ReplayOutputOnWire[]): ReplayOutput[] {
  if (choice.kind !== "structLog") return outputs as ReplayOutput[];
  return outputs.map((output) => {
    const { parts, byteLength } = output as { parts: readonly (string | Uint8Array)[]; byteLength: number };
    return new StructLogTraceJson(parts, byteLength);
  });
}
