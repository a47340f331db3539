// Plain value transfers without the EVM. A legacy transaction with no data, sent to an account
// without code, changes the state in a fixed way: the sender's nonce goes up by one and its balance
// down by the value and the fee (the intrinsic gas, all of which the transaction uses, at its gas
// price); the recipient's balance goes up by the value and the miner's by the fee. @ethereumjs/vm's
// runTx spends about 200 µs on that (the journal and its checkpoints, the warm address sets, a
// message frame, the receipt); here it is three account reads and writes.
//
// Only a legacy transaction whose outcome is certain takes this path; any other goes to the engine,
// which runs or refuses it as before. To the engine go: typed transactions (--typed-transactions:
// their access lists and fee caps are the engine's to apply); a sender without the balance, with another
// nonce or with code (EIP-3607); a recipient with code or that is a precompile; a gas price below
// the block's base fee; less gas than the intrinsic gas; a value that would take the recipient's
// balance past 2^256 - 1 (the engine fails the transfer); and the cases where the engine's touch
// and clean-up (EIP-161) deletes an existing account: a zero-value transfer to an empty account, no
// fee beyond the base fee to an empty miner account (the engine deletes it, storage and all, then
// pays the base-fee share to a new one). An absent account the engine touches is created and
// deleted again: here it is left absent. The differential test (test/unit/execution/
// differential.test.ts) holds the two paths to the same state roots and receipts.
import type { Common, StateManagerInterface } from "@ethereumjs/common";
import { Account, Address } from "@ethereumjs/util";
import type { ChainTransaction } from "../chain/transactions.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import { hasCode, runTxTakesSender } from "./engine.js";

/** EIPs that change what a plain transfer costs, touches or logs: with any of them on, the engine runs every transaction. */
const eipsChangingTransfers = [2780, 6800, 7702, 7708, 7864, 7928, 8037] as const;

const maxBalance = 2n ** 256n - 1n;

/** Whether the rule set leaves plain transfers as this module runs them. */
export function plainTransfersApply(common: Common): boolean {
  return common.gteHardfork("spuriousDragon") && !eipsChangingTransfers.some((eip) => common.isActivatedEIP(eip));
}

export interface PlainTransferContext {
  readonly state: StateManagerInterface;
  /** The engine's precompiles, by address in unprefixed hex (EVM.precompiles). */
  readonly precompiles: ReadonlyMap<string, unknown>;
  readonly coinbase: Address;
  /** The block's base fee: a gas price below it is the engine's to refuse. */
  readonly baseFee: bigint;
}

/**
 * Applies `transaction` to the state when it is a plain transfer whose outcome is certain, paying
 * the whole fee to the miner (the engine's priority fee and the block's base-fee share together).
 * Answers the gas it used, or undefined, having changed nothing, when the engine must run it.
 */
export async function runPlainTransfer(context: PlainTransferContext, transaction: ChainTransaction): Promise<bigint | undefined> {
  const { tx } = transaction;
  if (tx.type !== 0 || tx.to === undefined || tx.data.length !== 0 || tx.gasPrice < context.baseFee) return undefined;
  const gasUsed = tx.getIntrinsicGas();
  if (tx.gasLimit < gasUsed || context.precompiles.has(bytesToUnprefixedHex(tx.to.bytes))) return undefined;

  const { state } = context;
  const senderAddress = new Address(transaction.sender);
  const sender = await state.getAccount(senderAddress);
  if (!runTxTakesSender(sender, tx)) return undefined;
  const recipient = await state.getAccount(tx.to);
  if (recipient !== undefined && hasCode(recipient)) return undefined;
  if (tx.value === 0n && recipient?.isEmpty() === true) return undefined;
  // The engine refuses to credit past 2^256 - 1: the value stays with the sender, status 0.
  if ((recipient?.balance ?? 0n) + tx.value > maxBalance) return undefined;
  // Read before any write, as the sender and the recipient are: a store that fails a read fails
  // the transfer with nothing changed (the reads below find the accounts in the state's cache).
  const miner = await state.getAccount(context.coinbase);
  // With no fee beyond the base fee the engine touches the miner with nothing, and an empty miner
  // account is deleted, storage and all, before the base fee's share is paid to a new one.
  if (tx.gasPrice === context.baseFee && miner !== undefined && miner.isEmpty()) return undefined;
  const fee = gasUsed * tx.gasPrice;

  // Every check passed: nothing below can refuse. Each account is read again after the previous
  // write, so a sender that is also the recipient or the miner ends up as the engine leaves it.
  sender.nonce += 1n;
  sender.balance -= tx.value + fee;
  await state.putAccount(senderAddress, sender);
  if (tx.value > 0n) {
    const credited = (await state.getAccount(tx.to)) ?? new Account();
    credited.balance += tx.value;
    await state.putAccount(tx.to, credited);
  }
  if (fee > 0n) {
    const miner = (await state.getAccount(context.coinbase)) ?? new Account();
    miner.balance += fee;
    await state.putAccount(context.coinbase, miner);
  }
  return gasUsed;
}
