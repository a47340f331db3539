// debug_: transactions and blocks traced by replaying them, and calls traced as the transactions
// they would be (struct logs or the call tree), and the size of the inbound peer-message queue.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { DebugTraceBlockByHashResult, DebugTransactionTrace, DebugTraceCallTraceConfigParam, DebugTraceTransactionResult, TraceOptions } from "../../../generated/types.js";
import type { Chain } from "../../chain/chain.js";
import type { CallService } from "../../execution/callService.js";
import { ExecutionTimeoutError } from "../../execution/engine.js";
import type { StateDatabase } from "../../state/stateDatabase.js";
import { hexToBytes, toQuantity } from "../../common/hex.js";
import type { PeerNetwork } from "../../p2p/interface.js";
import { StructLogTraceJson, type DebugTracerOptions, type StructLogLimit, type TraceService } from "../../tracing/index.js";
import { EncodedJson, type RpcCallContext } from "../dispatch.js";
import { executionTimeoutError, invalidParamsError, RpcError, traceTransactionNotFoundError, tracingErrorToRpc, withErrorsMapped } from "../errors.js";
import { defaultRpcOptions, type RequestWorkLimits } from "../options.js";
import { tracedCallBlock, tracedCallErrorToRpc, tracedMessageCall } from "./callTracing.js";
import { checkedStateOverrides } from "./ethCalls.js";

export interface DebugDependencies {
  chain: Chain;
  tracer: TraceService;
  peers: PeerNetwork;
  /** The largest answer the dispatcher sends: in a batch, struct logs stop being built past it. */
  responseLimitBytes: number;
  /**
   * The largest struct-log trace answered alone (written in parts, not held to the response
   * limit): a bound on the memory one trace takes. Default: defaultRpcOptions'.
   */
  traceAnswerLimitBytes?: number;
  /** debug_traceCall: the state a call runs on, the call gas cap, the state override limits. */
  state: StateDatabase;
  calls: Pick<CallService, "limits">;
  requestLimits: RequestWorkLimits;
}

type TracerSwitchName = "disableStack" | "disableMemory" | "enableMemory" | "disableStorage" | "enableReturnData" | "onlyTopCall" | "withLog";

/** Tracer names in lower case (names are matched without regard to case, as the reference does). */
const structLogTracerNames = new Set(["structlogtracer", "rsktracer"]);
const callTracerName = "calltracer";

/**
 * The options object as the tracers take it: a switch in tracerConfig wins over the same one at
 * the top level, and "true"/"false" read as the booleans. Memory is off unless enableMemory (as
 * geth) or disableMemory set to false (as the reference node, whose default has it) asks for it,
 * and disableMemory still turns it off.
 */
export function debugTracerOptions(options: TraceOptions | undefined, position = 1): DebugTracerOptions {
  const given = (name: TracerSwitchName): boolean | undefined => {
    const value = options?.tracerConfig?.[name] ?? options?.[name];
    return value === undefined ? undefined : value === true || value === "true";
  };
  const flag = (name: TracerSwitchName): boolean => given(name) === true;
  const tracer = options?.tracer?.toLowerCase();
  if (tracer === callTracerName) return { tracer: "callTracer", onlyTopCall: flag("onlyTopCall"), withLog: flag("withLog") };
  if (tracer !== undefined && !structLogTracerNames.has(tracer)) {
    throw invalidParamsError(`invalid argument ${position}: field tracer: unknown tracer ${JSON.stringify(options!.tracer)}: use structLogTracer (or rskTracer) or callTracer`);
  }
  const disableMemory = given("disableMemory");
  const enableMemory = disableMemory === undefined ? flag("enableMemory") : !disableMemory;
  const limit = options?.tracerConfig?.limit ?? options?.limit ?? 0;
  return { tracer: "structLogTracer", disableStack: flag("disableStack"), enableMemory, disableStorage: flag("disableStorage"), enableReturnData: flag("enableReturnData"), limit };
}

/** debug_traceCall's state overrides; geth's blockOverrides is refused rather than silently ignored. */
async function stateOverridesOf(traceConfig: DebugTraceCallTraceConfigParam | undefined, limits: RequestWorkLimits) {
  if (traceConfig?.blockOverrides !== undefined) throw invalidParamsError("invalid argument 2: field blockOverrides: block overrides are not supported");
  return traceConfig?.stateOverrides === undefined ? undefined : checkedStateOverrides(traceConfig.stateOverrides, limits);
}

/**
 * Struct-log traces come as JSON text: spliced into the response as they are, and alone written
 * in parts however long (their limit was the trace answer limit).
 */
function asResult<T>(trace: StructLogTraceJson | object): T {
  return (trace instanceof StructLogTraceJson ? new EncodedJson(trace.parts, true) : trace) as unknown as T;
}

export function createDebugHandlers(deps: DebugDependencies): NamespaceHandlers<"debug", RpcCallContext> {
  const { chain, tracer, peers } = deps;
  const responseLimit: StructLogLimit = { bytes: deps.responseLimitBytes, flag: "--rpc-response-limit" };
  const traceAnswerLimit: StructLogLimit = { bytes: deps.traceAnswerLimitBytes ?? defaultRpcOptions.traceAnswerLimitBytes, flag: "--trace-answer-limit" };
  /** In a batch (or over WebSocket) the answer must fit the response limit; alone, the trace answer limit. */
  const limitFor = (context: RpcCallContext): StructLogLimit => (context.boundedAnswer === true ? responseLimit : traceAnswerLimit);
  /** The reference's words for a trace past its time limit, with the limit named in the data (a long trace meets it first). */
  const timedOut = new RpcError(executionTimeoutError.code, executionTimeoutError.message, `the trace passed its time limit of ${tracer.options.timeLimitMs} ms (--call-timeout)`);
  const traceErrors = (mapErrors: (error: unknown) => unknown) => (error: unknown) => (error instanceof ExecutionTimeoutError ? timedOut : mapErrors(error));
  return {
    debug_traceTransaction: async ([transactionHash, options], context) => {
      const tracerOptions = debugTracerOptions(options);
      const trace = await withErrorsMapped(() => tracer.debugTraceTransaction(hexToBytes(transactionHash), tracerOptions, limitFor(context)), traceErrors(tracingErrorToRpc));
      if (trace === undefined) {
        if (tracerOptions.tracer === "callTracer") throw traceTransactionNotFoundError(transactionHash);
        return null;
      }
      return asResult<DebugTraceTransactionResult>(trace);
    },

    debug_traceBlockByHash: async ([blockHash, options], context) => {
      const tracerOptions = debugTracerOptions(options);
      const block = await chain.getBlockByHash(hexToBytes(blockHash));
      if (block === undefined) return null;
      const traces = await withErrorsMapped(() => tracer.debugTraceBlock(block, tracerOptions, limitFor(context)), traceErrors(tracingErrorToRpc));
      return asResult<DebugTraceBlockByHashResult>(traces);
    },

    debug_traceCall: async ([callObject, block, traceConfig], context) => {
      const tracerOptions = debugTracerOptions(traceConfig, 2);
      const overrides = await stateOverridesOf(traceConfig, deps.requestLimits);
      const call = tracedMessageCall(callObject, deps.calls.limits.gasCap);
      const selected = await tracedCallBlock(chain, deps.state, block);
      const trace = await withErrorsMapped(() => tracer.debugTraceCall(selected, call, overrides, tracerOptions, limitFor(context)), traceErrors(tracedCallErrorToRpc));
      return asResult<DebugTransactionTrace>(trace);
    },

    debug_wireProtocolQueueSize: () => toQuantity(peers.inboundQueueSize()),
  };
}
