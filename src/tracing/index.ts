// Tracing: transactions of stored blocks (and calls: debug_traceCall, eth_createAccessList) replayed
// with a struct logger, a call tracer, flat traces or an access-list recorder. Replays of stored
// blocks are plans (replayPlan.ts) that the call worker runs when the chain is on disk. Writes no state.
export { ReplayFailedError, ReplayStateMissingError, type ReplayDependencies } from "./replay.js";
export { replayOutputsFromWire, replayOutputsToWire, runReplayPlan, transferablesOf, type ReplayOutput, type ReplayOutputOnWire, type ReplayPlan, type TracerChoice } from "./replayPlan.js";
export {
  defaultTraceServiceOptions,
  toCallAccessList,
  TraceService,
  type BlockCallTrace,
  type CreatedAccessList,
  type DebugTracerOptions,
  type FlatTraceFilter,
  type ReplayOffload,
  type TraceServiceOptions,
} from "./traceService.js";
export type { CallFrame } from "./callTracer.js";
export type { FlatTrace } from "./flatTraces.js";
export { StructLogTooLargeError, StructLogTraceJson, type StructLog, type StructLogLimit, type StructLogTrace } from "./structLogger.js";
