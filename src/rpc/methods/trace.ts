// trace_: flat (OpenEthereum-style) traces of a transaction, a block, or a filtered block range.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { BlockNumberOrTag, TraceFilter, TraceTransactionResult } from "../../../generated/types.js";
import type { Chain } from "../../chain/chain.js";
import { hexToBytes } from "../../common/hex.js";
import type { FlatTraceFilter, TraceService } from "../../tracing/index.js";
import { findBlockByNumberOrTag } from "../blockParameters.js";
import type { RpcCallContext } from "../dispatch.js";
import { traceFilterAfterTooBigError, traceFilterBlockRangeError, traceFilterCountTooBigError, tracingErrorToRpc, withErrorsMapped } from "../errors.js";

export interface TraceDependencies {
  chain: Chain;
  tracer: TraceService;
}

/** Length of a 32-byte hash as DATA ("0x" + 64 digits); numbers and tags are shorter. */
const hashTextLength = 66;

/** A block number of the filter; "latest" and "pending" read as the head, numbers beyond it stay as they are. */
function filterBlockNumber(chain: Chain, parameter: BlockNumberOrTag): bigint {
  switch (parameter) {
    case "earliest":
      return 0n;
    case "latest":
    case "pending":
      return chain.head.number;
    default:
      return BigInt(parameter);
  }
}

/** trace_filter's object, checked against the node's trace limit. */
export function flatTraceFilter(chain: Chain, filter: TraceFilter, maxTraces: number): FlatTraceFilter {
  const count = filter.count ?? maxTraces;
  if (count > maxTraces) throw traceFilterCountTooBigError(maxTraces);
  const after = filter.after ?? 0;
  if (after > maxTraces) throw traceFilterAfterTooBigError(maxTraces);
  const fromBlock = filterBlockNumber(chain, filter.fromBlock ?? "earliest");
  const toBlock = filterBlockNumber(chain, filter.toBlock ?? "latest");
  if (fromBlock > toBlock) throw traceFilterBlockRangeError();
  const addressKeys = (addresses: readonly string[] | undefined) => new Set((addresses ?? []).map((address) => address.slice(2).toLowerCase()));
  return { fromBlock, toBlock, fromAddresses: addressKeys(filter.fromAddress), toAddresses: addressKeys(filter.toAddress), after, count };
}

function traced<T>(run: () => Promise<T>): Promise<T> {
  return withErrorsMapped(run, tracingErrorToRpc);
}

export function createTraceHandlers(deps: TraceDependencies): NamespaceHandlers<"trace", RpcCallContext> {
  const { chain, tracer } = deps;
  return {
    trace_transaction: async ([transactionHash]) => {
      const traces = await traced(() => tracer.flatTransaction(hexToBytes(transactionHash)));
      return (traces ?? null) as TraceTransactionResult;
    },

    trace_block: async ([blockParameter]) => {
      const block = blockParameter.length === hashTextLength ? await chain.getBlockByHash(hexToBytes(blockParameter)) : await findBlockByNumberOrTag(chain, blockParameter as BlockNumberOrTag);
      if (block === undefined) return null;
      return (await traced(() => tracer.flatBlock(block))) as TraceTransactionResult;
    },

    trace_filter: async ([filter]) => {
      const selection = flatTraceFilter(chain, filter, tracer.options.maxTracesPerRequest);
      return (await traced(() => tracer.flatFilter(selection))) as NonNullable<TraceTransactionResult>;
    },
  };
}
