// Message calls: a transaction executed without being sent (eth_call, eth_estimateGas). It runs as
// a real transaction would (intrinsic gas, value transfer, fees at the given price, refunds) from
// any sender without a signature, on a checkpoint of the engine's state that is always reverted:
// nothing a call does, its state overrides included, outlives it.
import type { Block as EngineBlock } from "@ethereumjs/block";
import type { Common, StateManagerInterface } from "@ethereumjs/common";
import type { EVM } from "@ethereumjs/evm";
import { createAccessList2930Tx, createLegacyTx, type AccessList2930Tx, type LegacyTx } from "@ethereumjs/tx";
import { Account, Address, bytesToBigInt, equalsBytes, KECCAK256_NULL, setLengthLeft } from "@ethereumjs/util";
import { engineErrorMessage } from "../common/engineErrors.js";
import { nextEventLoopTurn } from "../common/eventLoop.js";
import { hexOfStableBytes } from "../common/hex.js";
import { enginePackages, loadEnginePackages } from "./enginePackages.js";
import { ExecutionTimeoutError, type ExecutionEngine, type ExecutionMeasurements, type GasSlack, type Measured } from "./engine.js";

export interface MessageCall {
  /** 20 bytes; the zero address when the caller names none. */
  from: Uint8Array;
  /** undefined for a contract creation. */
  to: Uint8Array | undefined;
  gasLimit: bigint;
  gasPrice: bigint;
  value: bigint;
  data: Uint8Array;
  /**
   * EIP-2930 access list: the call then runs as a type-1 transaction would (the listed accounts
   * and slots warm, their intrinsic gas charged). Only eth_createAccessList and debug_traceCall
   * set it: eth_call and eth_estimateGas ignore access lists, as the reference node does.
   */
  accessList?: CallAccessList;
}

/** Accounts (20 bytes) with the storage keys (32 bytes) listed for each. */
export type CallAccessList = ReadonlyArray<{ readonly address: Uint8Array; readonly storageKeys: readonly Uint8Array[] }>;

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
  /** Measured when asked for (see ExecutionEngine.measure). */
  slack?: GasSlack;
  /** Counted when asked for (see ExecutionEngine.measure). */
  framesOutOfGas?: number;
}

/** What a run measures besides its result (eth_estimateGas asks for these). */
export type RunMeasurements = ExecutionMeasurements;

export type MessageCallResult =
  /** Ran to the end. */
  | ({ kind: "success"; returnData: Uint8Array } & GasFigures)
  /** REVERT: `returnData` is the revert payload. */
  | ({ kind: "revert"; returnData: Uint8Array } & GasFigures)
  /** Any other exceptional halt: out of gas, invalid opcode, stack errors... (`reason` in the engine's words). */
  | ({ kind: "halt"; reason: string } & GasFigures);

/** The call cannot run as a transaction at all (too little gas for its intrinsic cost, funds...). */
export class CallNotExecutableError extends Error {}

/**
 * An override set gives the event loop a turn after this long: its writes resolve as microtasks,
 * and 1,000 accounts with 10,000 slots held the thread for 60-70 ms at once (make bench, bounds).
 */
const overrideSliceMs = 5;

/** Writes `overrides` into the state (call it inside a checkpoint). */
export async function applyStateOverrides(state: StateManagerInterface, overrides: StateOverrides): Promise<void> {
  let sliceEndsAt = performance.now() + overrideSliceMs;
  const nextSlice = async () => {
    await nextEventLoopTurn();
    sliceEndsAt = performance.now() + overrideSliceMs;
  };
  for (const [addressBytes, override] of overrides) {
    if (performance.now() >= sliceEndsAt) await nextSlice();
    const address = new Address(addressBytes);
    const account = (await state.getAccount(address)) ?? new Account();
    if (override.balance !== undefined) account.balance = override.balance;
    if (override.nonce !== undefined) account.nonce = override.nonce;
    await state.putAccount(address, account);
    if (override.code !== undefined) await state.putCode(address, override.code);
    if (override.replaceStorage !== undefined) await state.clearStorage(address);
    for (const slots of [override.replaceStorage, override.storageChanges]) {
      if (slots === undefined) continue;
      for (const [slot, value] of slots) {
        await state.putStorage(address, setLengthLeft(slot, 32), value);
        if (performance.now() >= sliceEndsAt) await nextSlice();
      }
    }
  }
}

/**
 * Runs `call` in `block` on the engine's current state, with `overrides` applied first, and
 * reverts everything afterwards. Throws CallNotExecutableError when the engine refuses the
 * transaction before running it, ExecutionTimeoutError past `timeLimitMs` (the engine is then
 * mid-checkpoint and must be dropped).
 *
 * A call to an account runs on the lean path (see runAsLeanCall); a creation, and a call the
 * engine would refuse, run through the engine's runTx, which words the refusal.
 */
export async function runMessageCall(
  engine: ExecutionEngine,
  block: EngineBlock,
  call: MessageCall,
  overrides: StateOverrides | undefined,
  timeLimitMs: number | undefined,
  measurements: RunMeasurements = {},
): Promise<MessageCallResult> {
  if (overrides === undefined) {
    // Without overrides nothing is written before the lean path's own checkpoint, whose revert
    // takes everything back: no checkpoint around it.
    const lean = await leanCallPlan(engine, block, call);
    if (lean !== undefined) return measured(engine, () => runAsLeanCall(engine, block, call, lean), timeLimitMs, measurements);
  }
  return runWithOverrides(engine, overrides, async () => {
    const lean = await leanCallPlan(engine, block, call);
    const execute = lean === undefined ? () => runAsTransaction(engine, block, call) : () => runAsLeanCall(engine, block, call, lean);
    return measured(engine, execute, timeLimitMs, measurements);
  });
}

/** The same as runMessageCall, always through the engine's runTx (tests compare both paths). */
export async function runMessageCallAsTransaction(
  engine: ExecutionEngine,
  block: EngineBlock,
  call: MessageCall,
  overrides: StateOverrides | undefined,
  timeLimitMs: number | undefined,
  measurements: RunMeasurements = {},
): Promise<MessageCallResult> {
  return runWithOverrides(engine, overrides, () => measured(engine, () => runAsTransaction(engine, block, call), timeLimitMs, measurements));
}

async function runWithOverrides(engine: ExecutionEngine, overrides: StateOverrides | undefined, run: () => Promise<MessageCallResult>): Promise<MessageCallResult> {
  const { state } = engine;
  await state.checkpoint();
  try {
    if (overrides !== undefined) await applyStateOverrides(state, overrides);
    return await run();
  } finally {
    await state.revert();
  }
}

/** What one run gives, before it is classified. */
interface RunOutcome {
  execResult: { exceptionError?: { error: string }; returnValue: Uint8Array; executionGasUsed: bigint };
  gasUsed: bigint;
  intrinsicGas: bigint;
}

async function measured(engine: ExecutionEngine, execute: () => Promise<RunOutcome>, timeLimitMs: number | undefined, measurements: RunMeasurements): Promise<MessageCallResult> {
  let run: Measured<RunOutcome>;
  try {
    // A plain call measures nothing and pays for no measurement.
    if (measurements.gasSlack || measurements.framesOutOfGas) run = await engine.withTimeLimit(timeLimitMs, () => engine.measure(measurements, execute));
    else run = { result: await engine.withTimeLimit(timeLimitMs, execute) };
  } catch (error) {
    if (error instanceof ExecutionTimeoutError) throw error;
    throw new CallNotExecutableError(engineErrorMessage(error));
  }
  const { result: outcome, slack, framesOutOfGas } = run;
  const { execResult } = outcome;
  const gas: GasFigures = { gasUsed: outcome.gasUsed, gasConsumed: execResult.executionGasUsed + outcome.intrinsicGas, slack, framesOutOfGas };
  const error = execResult.exceptionError;
  if (error === undefined) return { kind: "success", returnData: execResult.returnValue, ...gas };
  if (error.error === "revert") return { kind: "revert", returnData: execResult.returnValue, ...gas };
  return { kind: "halt", reason: error.error, ...gas };
}

/**
 * The transaction a call runs as: unsigned, legacy (type 1 with an access list), whose sender is
 * the call's `from` (the engine asks the transaction for its sender, and this one names it).
 */
export function unsignedCallTransaction(common: Common, call: MessageCall, nonce = 0n): LegacyTx | AccessList2930Tx {
  const fields = { nonce, gasLimit: call.gasLimit, gasPrice: call.gasPrice, to: call.to === undefined ? undefined : new Address(call.to), value: call.value, data: call.data };
  const tx =
    call.accessList === undefined
      ? createLegacyTx(fields, { common, freeze: false })
      : createAccessList2930Tx(
          { ...fields, chainId: common.chainId(), accessList: call.accessList.map((entry) => [entry.address, [...entry.storageKeys]] as [Uint8Array, Uint8Array[]]) },
          { common, freeze: false },
        );
  const from = new Address(call.from);
  tx.getSenderAddress = () => from;
  return tx;
}

async function runAsTransaction(engine: ExecutionEngine, block: EngineBlock, call: MessageCall): Promise<RunOutcome> {
  const { vm } = engine;
  const tx = unsignedCallTransaction(vm.common, call);
  const { runTx } = (enginePackages ?? (await loadEnginePackages())).vm;
  const result = await runTx(vm, { tx, block, skipNonce: true, skipBlockGasLimitValidation: true, skipHardForkValidation: true });
  return { execResult: result.execResult, gasUsed: result.totalGasSpent, intrinsicGas: tx.getIntrinsicGas() };
}

/** What the lean path needs, found while checking that the engine would run the call. */
interface LeanCallPlan {
  caller: Address;
  to: Address;
  sender: Account;
  intrinsicGas: bigint;
}

/**
 * EIPs that change what runTx does around a legacy transaction's message (delegations, the
 * calldata floor, state gas, witnesses, access lists of the block...): with any active, calls go
 * through runTx. The lean path also assumes warm addresses (2929) and a warm coinbase (3651).
 */
const eipsLeanCallsLeaveOut = [2780, 6800, 7623, 7702, 7778, 7864, 7928, 8037] as const;
const eipsLeanCallsFollow = [2929, 3651] as const;
const leanCallRules = new WeakMap<Common, boolean>();

function leanCallsApply(common: Common): boolean {
  let applies = leanCallRules.get(common);
  if (applies === undefined) {
    applies = eipsLeanCallsFollow.every((eip) => common.isActivatedEIP(eip)) && !eipsLeanCallsLeaveOut.some((eip) => common.isActivatedEIP(eip));
    leanCallRules.set(common, applies);
  }
  return applies;
}

/**
 * Whether `call` can take the lean path: a call to an account (not a creation) that the engine's
 * runTx would accept for a legacy transaction under this node's rules (enough gas for the
 * intrinsic cost, a price at least the block's base fee, a sender without code that can pay the
 * gas and the value). undefined otherwise: runTx then runs it, or words why it cannot.
 */
async function leanCallPlan(engine: ExecutionEngine, block: EngineBlock, call: MessageCall): Promise<LeanCallPlan | undefined> {
  const common = engine.vm.common;
  if (call.to === undefined || call.accessList !== undefined || !leanCallsApply(common)) return undefined;
  const gas = intrinsicGasParametersOf(common);
  let intrinsicGas = gas.base;
  for (const byte of call.data) intrinsicGas += byte === 0 ? gas.zeroByte : gas.nonZeroByte;
  if (call.gasLimit < intrinsicGas) return undefined;
  if (call.gasPrice < (block.header.baseFeePerGas ?? 0n)) return undefined;
  const caller = new Address(call.from);
  const sender = (await engine.state.getAccount(caller)) ?? new Account();
  if (!equalsBytes(sender.codeHash, KECCAK256_NULL)) return undefined;
  if (sender.balance < call.gasLimit * call.gasPrice + call.value) return undefined;
  return { caller, to: new Address(call.to), sender, intrinsicGas };
}

/**
 * The precompiles' entries of the journal's always-warm map, by engine: each with one empty set of
 * warm slots that no call adds to (slots become always warm only through a transaction's access
 * list, which the lean path never has, and a precompile has no storage). Looking them up behind a
 * call's own entries (CallWarmAddresses) takes a fraction of building them (a set and two lookups
 * for each of some twenty precompiles) at every call, and of copying them.
 */
const precompilesWarm = new WeakMap<object, ReadonlyMap<string, Set<string>>>();

function warmPrecompiles(evm: ExecutionEngine["vm"]["evm"]): ReadonlyMap<string, Set<string>> {
  let entries = precompilesWarm.get(evm);
  if (entries === undefined) {
    const noSlots = new Set<string>();
    entries = new Map([...evm.precompiles.keys()].map((address) => [address, noSlots]));
    precompilesWarm.set(evm, entries);
  }
  return entries;
}

/**
 * The journal's always-warm map during a lean call: the call's own addresses (sender, recipient,
 * coinbase) in a map of their own, in front of the engine's precompiles (warmPrecompiles), which
 * are not copied for each call. The journal only looks addresses up and adds them (has, get, set),
 * and puts a new Map back when it is cleaned after the call.
 */
class CallWarmAddresses {
  private readonly own = new Map<string, Set<string>>();

  constructor(private readonly precompiles: ReadonlyMap<string, Set<string>>) {}

  has(addressHex: string): boolean {
    return this.own.has(addressHex) || this.precompiles.has(addressHex);
  }

  get(addressHex: string): Set<string> | undefined {
    return this.own.get(addressHex) ?? this.precompiles.get(addressHex);
  }

  set(addressHex: string, slots: Set<string>): this {
    this.own.set(addressHex, slots);
    return this;
  }
}

/** The intrinsic gas's parameters, read once per rule set (Common.param looks each up by name). */
const intrinsicGasParameters = new WeakMap<Common, { base: bigint; zeroByte: bigint; nonZeroByte: bigint }>();

function intrinsicGasParametersOf(common: Common): { base: bigint; zeroByte: bigint; nonZeroByte: bigint } {
  let parameters = intrinsicGasParameters.get(common);
  if (parameters === undefined) {
    parameters = { base: common.param("txGas"), zeroByte: common.param("txDataZeroGas"), nonZeroByte: common.param("txDataNonZeroGas") };
    intrinsicGasParameters.set(common, parameters);
  }
  return parameters;
}

/**
 * The message a legacy transaction would run, without the transaction around it: the same warm
 * addresses (precompiles, sender, recipient, coinbase), the gas cost taken from the sender and
 * its nonce raised before the message runs, the same gas figures after it (refund capped at a
 * fifth). What runTx does after the message (gas refund to the sender, fee to the miner, touched
 * accounts) changes state only, and a call's state is thrown away: skipping it and the
 * transaction object saves about a third of a small call. The differential tests hold both paths
 * to the same results.
 */
async function runAsLeanCall(engine: ExecutionEngine, block: EngineBlock, call: MessageCall, plan: LeanCallPlan): Promise<RunOutcome> {
  const { vm, state } = engine;
  const evm = vm.evm;
  const journal = evm.journal;
  await journal.cleanup();
  await journal.checkpoint();
  let outcome: RunOutcome;
  let revertStarted = false;
  try {
    // Straight into the journal's always-warm map as unprefixed hex, as addAlwaysWarmAddress would
    // put them (it first runs each address through a regular-expression check of its hex prefix);
    // the precompiles from a map made once per engine (see warmPrecompiles and CallWarmAddresses).
    const alwaysWarm = new CallWarmAddresses(warmPrecompiles(evm));
    (journal as unknown as { alwaysWarmJournal: CallWarmAddresses }).alwaysWarmJournal = alwaysWarm;
    for (const address of [plan.caller, plan.to, block.header.coinbase]) {
      const addressHex = hexOfStableBytes(address.bytes);
      if (!alwaysWarm.has(addressHex)) alwaysWarm.set(addressHex, new Set());
    }
    const { sender } = plan;
    sender.balance -= call.gasLimit * call.gasPrice;
    sender.nonce += 1n;
    await journal.putAccount(plan.caller, sender);
    // The top frame without runCall's checkpoint around it (messageFrames.ts: the revert below
    // takes back everything), where the engine runs lean frames.
    const message = { block, gasPrice: call.gasPrice, caller: plan.caller, gasLimit: call.gasLimit - plan.intrinsicGas, to: plan.to, value: call.value, data: call.data };
    const { frames } = enginePackages ?? (await loadEnginePackages());
    const execResult = (await frames.runTopFrame(evm as EVM, message)) ?? (await evm.runCall({ ...message, skipNonceIncrement: true })).execResult;
    const gasBeforeRefund = execResult.executionGasUsed + plan.intrinsicGas;
    const refundCap = gasBeforeRefund / vm.common.param("maxRefundQuotient");
    const refund = execResult.gasRefund ?? 0n;
    outcome = { execResult, gasUsed: gasBeforeRefund - (refund < refundCap ? refund : refundCap), intrinsicGas: plan.intrinsicGas };
    revertStarted = true;
    await journal.revert();
  } catch (error) {
    // As runTx: the call's own checkpoint goes; an engine stopped mid-message is dropped anyway.
    if (!revertStarted) await journal.revert().catch(() => undefined);
    throw error;
  } finally {
    journal.cleanJournal();
    state.originalStorageCache.clear();
  }
  return outcome;
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
