// debug_: transactions and blocks traced by replaying them (struct logs or the call tree), and the
// size of the inbound peer-message queue.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { DebugTraceBlockByHashResult, DebugTraceTransactionResult, TraceOptions } from "../../../generated/types.js";
import type { Chain } from "../../chain/chain.js";
import { hexToBytes, toQuantity } from "../../common/hex.js";
import type { PeerNetwork } from "../../p2p/interface.js";
import { StructLogTraceJson, type DebugTracerOptions, type TraceService } from "../../tracing/index.js";
import { EncodedJson, type RpcCallContext } from "../dispatch.js";
import { traceTransactionNotFoundError, tracingErrorToRpc, withErrorsMapped } from "../errors.js";

export interface DebugDependencies {
  chain: Chain;
  tracer: TraceService;
  peers: PeerNetwork;
}

type TracerSwitch = "disableStack" | "disableMemory" | "disableStorage" | "onlyTopCall" | "withLog";

/** The options object as the tracers take it: a switch in tracerConfig wins over the same one at the top level. */
export function debugTracerOptions(options: TraceOptions | undefined): DebugTracerOptions {
  const flag = (name: TracerSwitch): boolean => options?.tracerConfig?.[name] ?? options?.[name] ?? false;
  if (options?.tracer === "callTracer") return { tracer: "callTracer", onlyTopCall: flag("onlyTopCall"), withLog: flag("withLog") };
  return { tracer: "structLogTracer", disableStack: flag("disableStack"), disableMemory: flag("disableMemory"), disableStorage: flag("disableStorage") };
}

/** Struct-log traces come as JSON text: spliced into the response as they are. */
function asResult<T>(trace: StructLogTraceJson | object): T {
  return (trace instanceof StructLogTraceJson ? new EncodedJson(trace.json) : trace) as unknown as T;
}

export function createDebugHandlers(deps: DebugDependencies): NamespaceHandlers<"debug", RpcCallContext> {
  const { chain, tracer, peers } = deps;
  return {
    debug_traceTransaction: async ([transactionHash, options]) => {
      const tracerOptions = debugTracerOptions(options);
      const trace = await withErrorsMapped(() => tracer.debugTraceTransaction(hexToBytes(transactionHash), tracerOptions), tracingErrorToRpc);
      if (trace === undefined) {
        if (tracerOptions.tracer === "callTracer") throw traceTransactionNotFoundError(transactionHash);
        return null;
      }
      return asResult<DebugTraceTransactionResult>(trace);
    },

    debug_traceBlockByHash: async ([blockHash, options]) => {
      const block = await chain.getBlockByHash(hexToBytes(blockHash));
      if (block === undefined) return null;
      const tracerOptions = debugTracerOptions(options);
      const traces = await withErrorsMapped(() => tracer.debugTraceBlock(block, tracerOptions), tracingErrorToRpc);
      return asResult<DebugTraceBlockByHashResult>(traces);
    },

    debug_wireProtocolQueueSize: () => toQuantity(peers.inboundQueueSize()),
  };
}
