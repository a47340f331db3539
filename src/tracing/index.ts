// Tracing: transactions of stored blocks replayed with a struct logger, a call tracer or flat traces.
export { ReplayFailedError, ReplayStateMissingError } from "./replay.js";
export { defaultTraceServiceOptions, toCallAccessList, TraceService, type CreatedAccessList, type BlockCallTrace, type DebugTracerOptions, type FlatTraceFilter, type TraceServiceOptions } from "./traceService.js";
export type { CallFrame } from "./callTracer.js";
export type { FlatTrace } from "./flatTraces.js";
export { StructLogTooLargeError, StructLogTraceJson, type StructLog, type StructLogTrace } from "./structLogger.js";
