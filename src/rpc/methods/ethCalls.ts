// eth_call and eth_estimateGas: the call object and state overrides mapped onto the call service,
// its outcomes onto the reference's answers.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { AccountOverride as AccountOverrideParam, BlockNumberOrTag, CallObject, EstimateGasCallObject, StateOverrideSet } from "../../../generated/types.js";
import type { Chain } from "../../chain/chain.js";
import { nextEventLoopTurn } from "../../common/eventLoop.js";
import { bytesToHex, hexToBytes, toQuantity } from "../../common/hex.js";
import { CallGasCapExceededError, EstimateRevertedError, GasEstimationError, type CallService, type CallTarget } from "../../execution/callService.js";
import { ExecutionTimeoutError } from "../../execution/engine.js";
import { CallNotExecutableError, decodeRevertReason, type AccountOverride, type MessageCall, type StateOverrides } from "../../execution/messageCall.js";
import type { StateDatabase } from "../../state/stateDatabase.js";
import type { TransactionPool } from "../../txpool/transactionPool.js";
import { findBlockByNumberOrTag } from "../blockParameters.js";
import type { RpcCallContext } from "../dispatch.js";
import type { RequestWorkLimits } from "../options.js";
import {
  callGasCapExceededError,
  callNotExecutableError,
  executionRevertedError,
  executionTimeoutError,
  gasEstimationFailedError,
  invalidBlockNumberError,
  invalidParamsError,
  movePrecompileNotSupportedError,
  stateNotFoundError,
  withErrorsMapped,
} from "../errors.js";

export interface EthCallDependencies {
  chain: Chain;
  state: StateDatabase;
  calls: CallService;
  /** The pool, for eth_estimateGas without a block: whether executable transactions wait. */
  pool: Pick<TransactionPool, "pending">;
  requestLimits: RequestWorkLimits;
}

type CallHandlers = Pick<NamespaceHandlers<"eth", RpcCallContext>, "eth_call" | "eth_estimateGas">;

const zeroAddress = new Uint8Array(20);

/** The call's fields with the defaults of a call; gas stays undefined when not given. */
export function toMessageCall(callObject: CallObject | EstimateGasCallObject): Omit<MessageCall, "gasLimit"> & { gasLimit: bigint | undefined } {
  const { data, input } = callObject;
  if (data !== undefined && input !== undefined && data.toLowerCase() !== input.toLowerCase()) {
    throw invalidParamsError('invalid argument 0: "data" and "input" are both given and differ');
  }
  return {
    from: callObject.from === undefined ? zeroAddress : hexToBytes(callObject.from),
    to: callObject.to === undefined || callObject.to === null ? undefined : hexToBytes(callObject.to),
    gasLimit: callObject.gas === undefined ? undefined : BigInt(callObject.gas),
    gasPrice: callObject.gasPrice === undefined ? 0n : BigInt(callObject.gasPrice),
    value: callObject.value === undefined ? 0n : BigInt(callObject.value),
    data: hexToBytes(input ?? data ?? "0x"),
  };
}

function toStorageMap(slots: Record<string, string>): Map<Uint8Array, Uint8Array> {
  return new Map(Object.entries(slots).map(([slot, value]) => [hexToBytes(slot), hexToBytes(value)]));
}

/** Refuses an override set that names more accounts or writes more slots than the limits allow. */
function checkOverrideSize(overrides: StateOverrideSet, limits: RequestWorkLimits, where: string): void {
  const accounts = Object.values(overrides);
  if (accounts.length > limits.overrideAccountsLimit) {
    throw invalidParamsError(`${where}: the state override names ${accounts.length} accounts, more than the limit of ${limits.overrideAccountsLimit}`);
  }
  let slots = 0;
  for (const fields of accounts) {
    if (fields.state !== undefined) slots += Object.keys(fields.state).length;
    if (fields.stateDiff !== undefined) slots += Object.keys(fields.stateDiff).length;
  }
  if (slots > limits.overrideSlotsLimit) {
    throw invalidParamsError(`${where}: the state override sets ${slots} storage slots, more than the limit of ${limits.overrideSlotsLimit}`);
  }
}

/** An override set is converted this long between two turns of the event loop. */
const overrideConversionSliceMs = 5;

/**
 * The override set as the engine applies it, within the limits; two spellings of one address are
 * refused. `where` names the parameter in messages ("invalid argument 2").
 */
export async function checkedStateOverrides(overrides: StateOverrideSet, limits: RequestWorkLimits, where = "invalid argument 2"): Promise<StateOverrides> {
  checkOverrideSize(overrides, limits, where);
  return toStateOverrides(overrides, where);
}

/**
 * The conversion gives the event loop a turn every 5 ms between accounts: the 20,000 hex texts of
 * 10,000 slots took 10-20 ms to convert, in the same turn as the request's parsing and validation.
 */
async function toStateOverrides(overrides: StateOverrideSet, where: string): Promise<StateOverrides> {
  const seen = new Set<string>();
  const converted: [Uint8Array, AccountOverride][] = [];
  let sliceEndsAt = performance.now() + overrideConversionSliceMs;
  for (const [address, fields] of Object.entries(overrides) as [string, AccountOverrideParam][]) {
    if (performance.now() >= sliceEndsAt) {
      await nextEventLoopTurn();
      sliceEndsAt = performance.now() + overrideConversionSliceMs;
    }
    const normalised = address.toLowerCase();
    if (seen.has(normalised)) throw invalidParamsError(`${where}: the account ${normalised} is overridden twice`);
    seen.add(normalised);
    if (fields.movePrecompileToAddress !== undefined) throw movePrecompileNotSupportedError();
    const override: AccountOverride = {
      balance: fields.balance === undefined ? undefined : BigInt(fields.balance),
      nonce: fields.nonce === undefined ? undefined : BigInt(fields.nonce),
      code: fields.code === undefined ? undefined : hexToBytes(fields.code),
      replaceStorage: fields.state === undefined ? undefined : toStorageMap(fields.state),
      storageChanges: fields.stateDiff === undefined ? undefined : toStorageMap(fields.stateDiff),
    };
    converted.push([hexToBytes(address), override]);
  }
  return converted;
}

function revertedError(payload: Uint8Array) {
  return executionRevertedError(decodeRevertReason(payload), bytesToHex(payload));
}

/** What the call service throws -> the reference's errors; anything else passes through. */
function executionErrorToRpc(error: unknown, whenNotExecutable: (reason: string) => Error): unknown {
  if (error instanceof ExecutionTimeoutError) return executionTimeoutError;
  if (error instanceof CallGasCapExceededError) return callGasCapExceededError(error.gas, error.cap);
  if (error instanceof EstimateRevertedError) return revertedError(error.payload);
  if (error instanceof GasEstimationError || error instanceof CallNotExecutableError) return whenNotExecutable(error.message);
  return error;
}

export function createEthCallHandlers(deps: EthCallDependencies): CallHandlers {
  const { chain, state, calls, pool } = deps;

  /** The block a call runs after; a number beyond the head is an invalid argument (reference). */
  async function resolveCallTarget(block: BlockNumberOrTag | undefined): Promise<CallTarget> {
    if (block === "pending") return { kind: "pending" };
    const found = await findBlockByNumberOrTag(chain, block ?? "latest");
    if (found === undefined) throw invalidBlockNumberError(BigInt(block as string));
    if (!state.hasRoot(found.header.fields.stateRoot)) throw stateNotFoundError(bytesToHex(found.hash));
    return { kind: "block", block: found };
  }

  return {
    eth_call: async ([callObject, block, overrides]) => {
      const call = toMessageCall(callObject);
      const stateOverrides = overrides === undefined ? undefined : await checkedStateOverrides(overrides, deps.requestLimits);
      const target = await resolveCallTarget(block);
      const result = await withErrorsMapped(() => calls.call(target, call, stateOverrides), (error) => executionErrorToRpc(error, callNotExecutableError));
      if (result.kind === "revert") throw revertedError(result.returnData);
      // Other halts (out of gas, invalid opcode) are not errors for a call: no return data (reference).
      return result.kind === "success" ? bytesToHex(result.returnData) : "0x";
    },

    eth_estimateGas: async ([callObject, block]) => {
      const call = toMessageCall(callObject);
      // Without a block, a transaction sent now runs after the executable ones in the pool (under
      // interval mining, or with mining stopped): the estimate runs after them too, as Hardhat's
      // and Anvil's do. With none waiting the pending state is the latest block's.
      const target = await resolveCallTarget(block ?? (pool.pending().length > 0 ? "pending" : "latest"));
      const estimate = await withErrorsMapped(() => calls.estimateGas(target, call), (error) => executionErrorToRpc(error, gasEstimationFailedError));
      return toQuantity(estimate);
    },
  };
}
