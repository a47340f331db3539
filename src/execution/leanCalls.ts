// Transactions that call an account, run through the EVM without @ethereumjs/vm's runTx around it.
// runTx is written for every rule set the package knows (typed transactions, blobs, EIP-7702
// authorities, the EIP-8037 gas reservoir, block-level access lists...): for a token transfer it
// spent about 100 µs here before and after the EVM's own work (checkpoints nested three deep, the
// sender put twice, a receipt and two events nobody reads), as much as the contract's code took.
// Under this node's rules a legacy call does a fixed set of things around the message call, and
// this module does just those, on the same journal and state manager, in the package's order:
//   - warm the precompiles, the sender, the recipient and (EIP-3651) the miner (EIP-2929);
//   - take the nonce and the whole gas limit at the gas price from the sender;
//   - run the message with the gas left after the intrinsic gas (the EVM's runCall);
//   - cap the refund (EIP-3529), give the sender back the unused gas, pay the miner the fee above
//     the base fee, and let the journal delete the touched empty accounts (EIP-161).
//
// As for plain transfers, only a transaction the package would run takes this path: one the
// package would refuse (a wrong nonce, too little balance or gas, a sender with code, a gas price
// under the base fee, a gas limit over the block's) goes to runTx, which refuses it in its own words.
// Typed transactions (--typed-transactions) go to runTx too: their access lists and fee caps are its.
// A creation goes to runTx too, and so does a call whose execution destroyed an account: its
// changes are reverted here and runTx runs it again (the package's SELFDESTRUCT processing is
// long, and such calls are rare). The differential test (test/unit/execution/differential.test.ts)
// holds both paths to the same state roots and receipts.
import type { Block as EngineBlock } from "@ethereumjs/block";
import type { Common } from "@ethereumjs/common";
import type { EVM } from "@ethereumjs/evm";
import type { MerkleStateManager } from "@ethereumjs/statemanager";
import { Account, Address } from "@ethereumjs/util";
import type { ChainTransaction } from "../chain/transactions.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import { runTxTakesSender } from "./engine.js";
import { enginePackages, loadEnginePackages } from "./enginePackages.js";

/**
 * EIPs that change what happens around a call (or that this module does not do): with any of them
 * on, runTx runs every transaction. EIP-2929 (warm addresses) and EIP-1559 (the base fee) must be on.
 */
const eipsChangingCalls = [2780, 4844, 6800, 7623, 7702, 7708, 7778, 7864, 7928, 8037, 8246] as const;

/** Whether the rule set lets calls take this path. */
export function leanCallsApply(common: Common): boolean {
  return (
    common.gteHardfork("london") &&
    common.isActivatedEIP(2929) &&
    common.isActivatedEIP(1559) &&
    common.consensusType() !== "poa" &&
    !eipsChangingCalls.some((eip) => common.isActivatedEIP(eip))
  );
}

export interface LeanCallContext {
  readonly evm: EVM;
  readonly state: MerkleStateManager;
  /** The engine's block (EVM.runCall takes it for the opcodes that read the block). */
  readonly block: EngineBlock;
}

export interface LeanCallOutcome {
  /** Gas charged to the block and the sender, after the refund. */
  readonly gasUsed: bigint;
  readonly success: boolean;
  readonly logsBloom: Uint8Array;
  readonly logs: [address: Uint8Array, topics: Uint8Array[], data: Uint8Array][];
  /**
   * None: a lean call creates no contract. Present all the same, so outcomes of the lean path and
   * of runTx (blockBuilder.ts) are objects of one hidden class for the code reading both.
   */
  readonly contractAddress: undefined;
}

/** What the rule set fixes for every call: read once per Common. */
interface CallRules {
  readonly maxRefundQuotient: bigint;
  readonly warmMiner: boolean;
}

const rulesByCommon = new WeakMap<Common, CallRules>();

function callRules(common: Common): CallRules {
  let rules = rulesByCommon.get(common);
  if (rules === undefined) {
    rules = { maxRefundQuotient: common.param("maxRefundQuotient"), warmMiner: common.isActivatedEIP(3651) };
    rulesByCommon.set(common, rules);
  }
  return rules;
}

/**
 * Runs `transaction` when it is a call runTx would run, with runTx's outcome; answers undefined,
 * having changed nothing, when runTx must run it (see the module's comment). The caller checked
 * leanCallsApply for the engine's Common.
 */
export async function runLeanCall(context: LeanCallContext, transaction: ChainTransaction): Promise<LeanCallOutcome | undefined> {
  const { evm, state, block } = context;
  const { tx } = transaction;
  const to = tx.to;
  const baseFee = block.header.baseFeePerGas ?? 0n;
  if (tx.type !== 0 || to === undefined || tx.gasLimit > block.header.gasLimit || tx.gasPrice < baseFee) return undefined;
  const precompiles = evm.precompiles;
  const toHex = bytesToUnprefixedHex(to.bytes);
  if (precompiles.has(toHex)) return undefined;
  const intrinsicGas = tx.getIntrinsicGas();
  if (tx.gasLimit < intrinsicGas) return undefined;
  const caller = new Address(transaction.sender);
  const sender = await state.getAccount(caller);
  const gasPrice = tx.gasPrice;
  const gasCost = tx.gasLimit * gasPrice;
  if (!runTxTakesSender(sender, tx)) return undefined;

  const { common } = evm;
  const rules = callRules(common);
  const journal = evm.journal;
  const coinbase = block.header.coinbase;
  await journal.cleanup();
  await journal.checkpoint();
  let committed = false;
  try {
    for (const address of precompiles.keys()) journal.addAlwaysWarmAddress(address);
    journal.addAlwaysWarmAddress(bytesToUnprefixedHex(caller.bytes));
    journal.addAlwaysWarmAddress(toHex);
    if (rules.warmMiner) journal.addAlwaysWarmAddress(bytesToUnprefixedHex(coinbase.bytes));

    sender.balance -= gasCost;
    sender.nonce += 1n;
    await journal.putAccount(caller, sender);

    // The fields and order of runTx's options for runCall (blob hashes and access witness unset, as
    // they are for these transactions): runCall then reads options of one hidden class, not two.
    const { execResult } = await evm.runCall({
      block,
      gasPrice,
      caller,
      gasLimit: tx.gasLimit - intrinsicGas,
      to,
      value: tx.value,
      data: tx.data,
      blobVersionedHashes: undefined,
      accessWitness: undefined,
      skipNonceIncrement: true,
    });
    if (execResult.selfdestruct !== undefined && execResult.selfdestruct.size > 0) return undefined;

    let gasUsed = execResult.executionGasUsed + intrinsicGas;
    const gasRefund = execResult.gasRefund ?? 0n;
    if (gasRefund !== 0n) {
      const maxRefund = gasUsed / rules.maxRefundQuotient;
      gasUsed -= gasRefund < maxRefund ? gasRefund : maxRefund;
    }
    const payer = (await state.getAccount(caller)) ?? new Account();
    payer.balance += gasCost - gasUsed * gasPrice;
    await journal.putAccount(caller, payer);
    // Put even when nothing is paid: the miner is touched, and an empty one is deleted below.
    const miner = (await state.getAccount(coinbase)) ?? new Account();
    miner.balance += gasUsed * (gasPrice - baseFee);
    await journal.putAccount(coinbase, miner);

    const logs = execResult.logs ?? [];
    const { Bloom } = (enginePackages ?? (await loadEnginePackages())).vm;
    const bloom = new Bloom(undefined, common);
    for (const [address, topics] of logs) {
      bloom.add(address);
      for (const topic of topics) bloom.add(topic);
    }
    await journal.cleanup();
    state.originalStorageCache.clear();
    await journal.commit();
    committed = true;
    return { gasUsed, success: execResult.exceptionError === undefined, logsBloom: bloom.bitvector, logs, contractAddress: undefined };
  } finally {
    // A destroyed account: nothing of the attempt stays. After a throw (the engine's own failure)
    // the frames' checkpoints may still be open above this one: the block builder reverts them too.
    if (!committed) await journal.revert();
    journal.cleanJournal();
    state.originalStorageCache.clear();
  }
}
