// Message calls: a transaction executed without being sent (eth_call, eth_estimateGas). It runs as
// a real transaction would (intrinsic gas, value transfer, fees at the given price, refunds) from
// any sender without a signature, on a checkpoint of the engine's state that is always reverted:
// nothing a call does, its state overrides included, outlives it.
import type { Block as EngineBlock } from "@ethereumjs/block";
import type { MerkleStateManager } from "@ethereumjs/statemanager";
import { createLegacyTx } from "@ethereumjs/tx";
import { Account, Address, bytesToBigInt, setLengthLeft } from "@ethereumjs/util";
import { runTx } from "@ethereumjs/vm";
import { ExecutionTimeoutError, type ExecutionEngine, type GasSlack } from "./engine.js";

export interface MessageCall {
  /** 20 bytes; the zero address when the caller names none. */
  from: Uint8Array;
  /** undefined for a contract creation. */
  to: Uint8Array | undefined;
  gasLimit: bigint;
  gasPrice: bigint;
  value: bigint;
  data: Uint8Array;
}

/** Temporary changes to one account for the duration of a call. */
export interface AccountOverride {
  balance?: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  /** Replaces the whole storage: slots not listed read as zero. Slot key -> 32-byte value. */
  replaceStorage?: ReadonlyMap<Uint8Array, Uint8Array>;
  /** Overrides the listed slots only. */
  storageChanges?: ReadonlyMap<Uint8Array, Uint8Array>;
}

/** Account (20 bytes) -> its override. */
export type StateOverrides = ReadonlyArray<readonly [Uint8Array, AccountOverride]>;

/** Gas figures of a run: `gasUsed` is what the transaction is charged, `gasConsumed` the same before refunds. */
interface GasFigures {
  gasUsed: bigint;
  gasConsumed: bigint;
  /** Measured when asked for (see ExecutionEngine.measureGasSlack). */
  slack?: GasSlack;
}

export type MessageCallResult =
  /** Ran to the end. */
  | ({ kind: "success"; returnData: Uint8Array } & GasFigures)
  /** REVERT: `returnData` is the revert payload. */
  | ({ kind: "revert"; returnData: Uint8Array } & GasFigures)
  /** Any other exceptional halt: out of gas, invalid opcode, stack errors... (`reason` in the engine's words). */
  | ({ kind: "halt"; reason: string } & GasFigures);

/** The call cannot run as a transaction at all (too little gas for its intrinsic cost, funds...). */
export class CallNotExecutableError extends Error {}

/** Writes `overrides` into the state (call it inside a checkpoint). */
async function applyStateOverrides(state: MerkleStateManager, overrides: StateOverrides): Promise<void> {
  for (const [addressBytes, override] of overrides) {
    const address = new Address(addressBytes);
    const account = (await state.getAccount(address)) ?? new Account();
    if (override.balance !== undefined) account.balance = override.balance;
    if (override.nonce !== undefined) account.nonce = override.nonce;
    await state.putAccount(address, account);
    if (override.code !== undefined) await state.putCode(address, override.code);
    if (override.replaceStorage !== undefined) await state.clearStorage(address);
    for (const slots of [override.replaceStorage, override.storageChanges]) {
      if (slots === undefined) continue;
      for (const [slot, value] of slots) await state.putStorage(address, setLengthLeft(slot, 32), value);
    }
  }
}

/** The engine's words for a failed transaction, without its debugging suffix. */
function engineReason(error: unknown): string {
  return (error as Error).message.replace(/ \(tx type=.*$/s, "").replace(/ \(hardfork=.*$/s, "");
}

/**
 * Runs `call` in `block` on the engine's current state, with `overrides` applied first, and
 * reverts everything afterwards. Throws CallNotExecutableError when the engine refuses the
 * transaction before running it, ExecutionTimeoutError past `timeLimitMs` (the engine is then
 * mid-checkpoint and must be dropped).
 */
export async function runMessageCall(
  engine: ExecutionEngine,
  block: EngineBlock,
  call: MessageCall,
  overrides: StateOverrides | undefined,
  timeLimitMs: number | undefined,
  measureSlack = false,
): Promise<MessageCallResult> {
  const { vm, state } = engine;
  const from = new Address(call.from);
  await state.checkpoint();
  try {
    if (overrides !== undefined) await applyStateOverrides(state, overrides);
    const tx = createLegacyTx(
      { gasLimit: call.gasLimit, gasPrice: call.gasPrice, to: call.to === undefined ? undefined : new Address(call.to), value: call.value, data: call.data },
      { common: vm.common, freeze: false },
    );
    // Unsigned: the engine asks the transaction for its sender, and this one names it.
    tx.getSenderAddress = () => from;
    const execute = () => runTx(vm, { tx, block, skipNonce: true, skipBlockGasLimitValidation: true, skipHardForkValidation: true });
    let result;
    let slack: GasSlack | undefined;
    try {
      if (measureSlack) ({ result, slack } = await engine.withTimeLimit(timeLimitMs, () => engine.measureGasSlack(execute)));
      else result = await engine.withTimeLimit(timeLimitMs, execute);
    } catch (error) {
      if (error instanceof ExecutionTimeoutError) throw error;
      throw new CallNotExecutableError(engineReason(error));
    }
    const { execResult } = result;
    const gas: GasFigures = { gasUsed: result.totalGasSpent, gasConsumed: execResult.executionGasUsed + tx.getIntrinsicGas(), slack };
    const error = execResult.exceptionError;
    if (error === undefined) return { kind: "success", returnData: execResult.returnValue, ...gas };
    if (error.error === "revert") return { kind: "revert", returnData: execResult.returnValue, ...gas };
    return { kind: "halt", reason: error.error, ...gas };
  } finally {
    await state.revert();
  }
}

const errorSelector = "08c379a0";
const panicSelector = "4e487b71";

/** What the Solidity compiler's Panic(uint256) codes mean. */
const panicMeanings = new Map<bigint, string>([
  [0x00n, "generic compiler panic"],
  [0x01n, "assertion failed"],
  [0x11n, "arithmetic overflow or underflow"],
  [0x12n, "division or modulo by zero"],
  [0x21n, "conversion to an invalid enum value"],
  [0x22n, "incorrectly encoded storage byte array"],
  [0x31n, "pop() on an empty array"],
  [0x32n, "array index out of bounds"],
  [0x41n, "too much memory allocated"],
  [0x51n, "call to a zero-initialised internal function"],
]);

/**
 * The revert reason a payload carries: the message of Error(string), the meaning of
 * Panic(uint256), or undefined for any other payload (custom errors, empty).
 */
export function decodeRevertReason(payload: Uint8Array): string | undefined {
  if (payload.length < 4) return undefined;
  const selector = Buffer.from(payload.subarray(0, 4)).toString("hex");
  const body = payload.subarray(4);
  if (selector === panicSelector && body.length === 32) {
    const code = bytesToBigInt(body);
    return `panic code 0x${code.toString(16)} (${panicMeanings.get(code) ?? "unknown panic code"})`;
  }
  if (selector !== errorSelector || body.length < 64) return undefined;
  const offset = bytesToBigInt(body.subarray(0, 32));
  if (offset + 32n > BigInt(body.length)) return undefined;
  const start = Number(offset);
  const length = bytesToBigInt(body.subarray(start, start + 32));
  if (BigInt(start + 32) + length > BigInt(body.length)) return undefined;
  return new TextDecoder().decode(body.subarray(start + 32, start + 32 + Number(length)));
}
