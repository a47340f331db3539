// What eth_createAccessList and debug_traceCall share: a call object made into the call the trace
// path runs (gas defaulted to and bounded by the call gas cap, as eth_call's; the access list
// kept), the stored block it runs after, and the trace path's errors as eth_call words them.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { BlockParameterNoPending, EstimateGasCallObject } from "../../../generated/types.js";
import type { Chain } from "../../chain/chain.js";
import { bytesToHex, hexToBytes, toQuantity } from "../../common/hex.js";
import type { CallService } from "../../execution/callService.js";
import type { Block } from "../../chain/block.js";
import { CallNotExecutableError, type MessageCall } from "../../execution/messageCall.js";
import type { StateDatabase } from "../../state/stateDatabase.js";
import { toCallAccessList, type TraceService } from "../../tracing/index.js";
import type { RpcCallContext } from "../dispatch.js";
import { resolveStateBlock } from "../blockParameters.js";
import { callGasCapExceededError, callNotExecutableError, stateNotFoundError, tracingErrorToRpc, withErrorsMapped } from "../errors.js";
import { toMessageCall } from "./ethCalls.js";

/** The call object as the trace path runs it; a gas above the cap is refused, as eth_call refuses it. */
export function tracedMessageCall(callObject: EstimateGasCallObject, gasCap: bigint): MessageCall {
  const { gasLimit, ...call } = toMessageCall(callObject);
  if (gasLimit !== undefined && gasLimit > gasCap) throw callGasCapExceededError(gasLimit, gasCap);
  const accessList = callObject.accessList?.map((entry) => ({ address: hexToBytes(entry.address), storageKeys: entry.storageKeys.map(hexToBytes) }));
  return { ...call, gasLimit: gasLimit ?? gasCap, ...(accessList === undefined ? {} : { accessList }) };
}

/** The stored block a traced call runs after (default: the head), with its state. */
export async function tracedCallBlock(chain: Chain, state: StateDatabase, block: BlockParameterNoPending | undefined): Promise<Block> {
  const selected = await resolveStateBlock(chain, block ?? "latest");
  if (!state.hasRoot(selected.header.fields.stateRoot)) throw stateNotFoundError(bytesToHex(selected.hash));
  return selected;
}

/** The trace path's errors -> JSON-RPC errors; a call that cannot run as a transaction as eth_call answers it. */
export function tracedCallErrorToRpc(error: unknown): unknown {
  if (error instanceof CallNotExecutableError) return callNotExecutableError(error.message);
  return tracingErrorToRpc(error);
}

export interface AccessListDependencies {
  chain: Chain;
  state: StateDatabase;
  calls: Pick<CallService, "limits">;
  tracer: TraceService;
}

export function createAccessListHandlers(deps: AccessListDependencies): Pick<NamespaceHandlers<"eth", RpcCallContext>, "eth_createAccessList"> {
  const { chain, state, calls, tracer } = deps;
  return {
    eth_createAccessList: async ([callObject, block]) => {
      const call = tracedMessageCall(callObject, calls.limits.gasCap);
      const selected = await tracedCallBlock(chain, state, block);
      const created = await withErrorsMapped(() => tracer.createAccessList(selected, call), tracedCallErrorToRpc);
      const accessList = toCallAccessList(created.accessList).map((entry) => ({ address: bytesToHex(entry.address), storageKeys: entry.storageKeys.map(bytesToHex) }));
      return { accessList, gasUsed: toQuantity(created.gasUsed), ...(created.error === undefined ? {} : { error: created.error }) };
    },
  };
}
