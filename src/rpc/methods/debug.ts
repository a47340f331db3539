// debug_: transactions and blocks traced by replaying them, and calls traced as the transactions
// they would be (struct logs or the call tree), and the size of the inbound peer-message queue.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { DebugTraceBlockByHashResult, DebugTransactionTrace, DebugTraceCallTraceConfigParam, DebugTraceTransactionResult, TraceOptions } from "../../../generated/types.js";
import type { Chain } from "../../chain/chain.js";
import type { CallService } from "../../execution/callService.js";
import type { StateDatabase } from "../../state/stateDatabase.js";
import { hexToBytes, toQuantity } from "../../common/hex.js";
import type { PeerNetwork } from "../../p2p/interface.js";
import { StructLogTraceJson, type DebugTracerOptions, type TraceService } from "../../tracing/index.js";
import { EncodedJson, type RpcCallContext } from "../dispatch.js";
import { invalidParamsError, traceTransactionNotFoundError, tracingErrorToRpc, withErrorsMapped } from "../errors.js";
import type { RequestWorkLimits } from "../options.js";
import { tracedCallBlock, tracedCallErrorToRpc, tracedMessageCall } from "./callTracing.js";
import { checkedStateOverrides } from "./ethCalls.js";

export interface DebugDependencies {
  chain: Chain;
  tracer: TraceService;
  peers: PeerNetwork;
  /** The largest answer the dispatcher sends: struct logs stop being built past it. */
  responseLimitBytes: number;
  /** debug_traceCall: the state a call runs on, the call gas cap, the state override limits. */
  state: StateDatabase;
  calls: Pick<CallService, "limits">;
  requestLimits: RequestWorkLimits;
}

type TracerSwitchName = "disableStack" | "disableMemory" | "disableStorage" | "onlyTopCall" | "withLog";

/** Tracer names in lower case (names are matched without regard to case, as the reference does). */
const structLogTracerNames = new Set(["structlogtracer", "rsktracer"]);
const callTracerName = "calltracer";

/**
 * The options object as the tracers take it: a switch in tracerConfig wins over the same one at
 * the top level, and "true"/"false" read as the booleans.
 */
export function debugTracerOptions(options: TraceOptions | undefined, position = 1): DebugTracerOptions {
  const flag = (name: TracerSwitchName): boolean => {
    const value = options?.tracerConfig?.[name] ?? options?.[name];
    return value === true || value === "true";
  };
  const tracer = options?.tracer?.toLowerCase();
  if (tracer === callTracerName) return { tracer: "callTracer", onlyTopCall: flag("onlyTopCall"), withLog: flag("withLog") };
  if (tracer !== undefined && !structLogTracerNames.has(tracer)) {
    throw invalidParamsError(`invalid argument ${position}: field tracer: unknown tracer ${JSON.stringify(options!.tracer)}: use structLogTracer (or rskTracer) or callTracer`);
  }
  return { tracer: "structLogTracer", disableStack: flag("disableStack"), disableMemory: flag("disableMemory"), disableStorage: flag("disableStorage") };
}

/** debug_traceCall's state overrides; geth's blockOverrides is refused rather than silently ignored. */
async function stateOverridesOf(traceConfig: DebugTraceCallTraceConfigParam | undefined, limits: RequestWorkLimits) {
  if (traceConfig?.blockOverrides !== undefined) throw invalidParamsError("invalid argument 2: field blockOverrides: block overrides are not supported");
  return traceConfig?.stateOverrides === undefined ? undefined : checkedStateOverrides(traceConfig.stateOverrides, limits);
}

/** Struct-log traces come as JSON text: spliced into the response as they are. */
function asResult<T>(trace: StructLogTraceJson | object): T {
  return (trace instanceof StructLogTraceJson ? new EncodedJson(trace.parts) : trace) as unknown as T;
}

export function createDebugHandlers(deps: DebugDependencies): NamespaceHandlers<"debug", RpcCallContext> {
  const { chain, tracer, peers, responseLimitBytes } = deps;
  return {
    debug_traceTransaction: async ([transactionHash, options]) => {
      const tracerOptions = debugTracerOptions(options);
      const trace = await withErrorsMapped(() => tracer.debugTraceTransaction(hexToBytes(transactionHash), tracerOptions, responseLimitBytes), tracingErrorToRpc);
      if (trace === undefined) {
        if (tracerOptions.tracer === "callTracer") throw traceTransactionNotFoundError(transactionHash);
        return null;
      }
      return asResult<DebugTraceTransactionResult>(trace);
    },

    debug_traceBlockByHash: async ([blockHash, options]) => {
      const tracerOptions = debugTracerOptions(options);
      const block = await chain.getBlockByHash(hexToBytes(blockHash));
      if (block === undefined) return null;
      const traces = await withErrorsMapped(() => tracer.debugTraceBlock(block, tracerOptions, responseLimitBytes), tracingErrorToRpc);
      return asResult<DebugTraceBlockByHashResult>(traces);
    },

    debug_traceCall: async ([callObject, block, traceConfig]) => {
      const tracerOptions = debugTracerOptions(traceConfig, 2);
      const overrides = await stateOverridesOf(traceConfig, deps.requestLimits);
      const call = tracedMessageCall(callObject, deps.calls.limits.gasCap);
      const selected = await tracedCallBlock(chain, deps.state, block);
      const trace = await withErrorsMapped(() => tracer.debugTraceCall(selected, call, overrides, tracerOptions, responseLimitBytes), tracedCallErrorToRpc);
      return asResult<DebugTransactionTrace>(trace);
    },

    debug_wireProtocolQueueSize: () => toQuantity(peers.inboundQueueSize()),
  };
}
