// A call traced as the transaction it would be (debug_traceCall, eth_createAccessList): on the
// state after a stored block, in that block's context, as eth_call runs it (the same unsigned
// transaction, the same state overrides, a base fee of zero for a call that pays no gas price),
// with one of the replay's tracers watching. Nothing it does is kept.
import type { Common } from "@ethereumjs/common";
import { Address } from "@ethereumjs/util";
import type { RunTxResult } from "@ethereumjs/vm";
import { enginePackages, loadEnginePackages } from "../execution/enginePackages.js";
import type { Block } from "../chain/block.js";
import type { ChainTransaction } from "../chain/transactions.js";
import { engineErrorMessage } from "../common/engineErrors.js";
import { createExecutionEngine, ExecutionClock, ExecutionTimeoutError, type CanonicalHashLookup } from "../execution/engine.js";
import { applyStateOverrides, CallNotExecutableError, unsignedCallTransaction, type MessageCall, type StateOverrides } from "../execution/messageCall.js";
import type { StateDatabase } from "../state/stateDatabase.js";
import { executionBlockOf, ReplayStateMissingError, type ReplayContext, type TransactionTracer } from "./replay.js";

export interface CallTraceDependencies {
  common: Common;
  state: StateDatabase;
  canonicalHash: CanonicalHashLookup;
}

/** What a traced call gave: the tracer's trace and the run's result. */
export interface TracedCall<T> {
  trace: T;
  result: RunTxResult;
}

/** Hash of a call's transaction in a trace: it was never signed, so it has none. */
const noTransactionHash = new Uint8Array(32);

/**
 * Runs `call` after `block` with `tracer` watching. ReplayStateMissingError when the block's state
 * is not stored, CallNotExecutableError when the engine refuses the transaction (funds, intrinsic
 * gas), ExecutionTimeoutError past `deadline` (performance.now()).
 */
export async function traceCall<T>(deps: CallTraceDependencies, block: Block, call: MessageCall, overrides: StateOverrides | undefined, tracer: TransactionTracer<T>, deadline: number): Promise<TracedCall<T>> {
  const stateRoot = block.header.fields.stateRoot;
  if (!deps.state.hasRoot(stateRoot)) throw new ReplayStateMissingError(block.hash);
  const clock = new ExecutionClock("tracing time limit reached");
  clock.startUntil(deadline);
  const context: ReplayContext = { countStorageSlots: (address) => deps.state.countStorageSlots(stateRoot, address, () => clock.check()) };
  const engine = await createExecutionEngine(deps.common, deps.state.overlayAt(stateRoot), deps.canonicalHash);
  // A call that pays no gas price runs with a base fee of zero, as eth_call.
  const executionBlock = executionBlockOf(deps.common, block, call.gasPrice === 0n ? 0n : block.header.fields.minimumGasPrice);
  await engine.state.checkpoint();
  try {
    if (overrides !== undefined) await applyStateOverrides(engine.state, overrides);
    // The sender's nonce, so that a creation's address is the one a sent transaction would get.
    const nonce = (await engine.state.getAccount(new Address(call.from)))?.nonce ?? 0n;
    const tx = unsignedCallTransaction(deps.common, call, nonce);
    const transaction = { tx, raw: new Uint8Array(0), hash: noTransactionHash, sender: call.from } as unknown as ChainTransaction;
    await tracer.start(engine, transaction, context);
    let result: RunTxResult;
    try {
      const timeLeft = deadline - performance.now();
      if (timeLeft <= 0) throw new ExecutionTimeoutError("tracing time limit reached");
      const { runTx } = (enginePackages ?? (await loadEnginePackages())).vm;
      result = await engine.withTimeLimit(timeLeft, () => runTx(engine.vm, { tx, block: executionBlock, skipNonce: true, skipBlockGasLimitValidation: true, skipHardForkValidation: true }));
    } catch (error) {
      await tracer.finish(undefined);
      if (error instanceof ExecutionTimeoutError) throw error;
      throw new CallNotExecutableError(engineErrorMessage(error));
    }
    return { trace: await tracer.finish({ transaction, index: 0, result }), result };
  } finally {
    await engine.state.revert();
  }
}
