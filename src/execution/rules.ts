// The execution rule set: the closest @ethereumjs/common configuration to the reference network's
// rules (facts section 13). Shanghai gives PUSH0, CREATE2, CHAINID, SELFBALANCE, EXTCODEHASH, the
// 0xEF code rejection (EIP-3541) and the initcode limit (EIP-3860); EIP-1153 adds TLOAD/TSTORE and
// EIP-5656 MCOPY. Cancun is not used: its blob opcodes and EIP-6780 SELFDESTRUCT are not the
// reference's. EIP-1559 stays on only so that BASEFEE exists: every block's base fee is its minimum
// gas price, and the block builder pays that part of the fee to the miner instead of burning it.
// Where gas accounting still differs from the reference is listed in docs/design.md.
import { Common, createCustomCommon, Hardfork, Mainnet } from "@ethereumjs/common";

export const executionHardfork = Hardfork.Shanghai;
export const extraEips = [1153, 5656] as const;

export function createExecutionRules(chainId: bigint): Common {
  return createCustomCommon({ chainId: Number(chainId), name: `chain-${chainId}` }, Mainnet, { hardfork: executionHardfork, eips: [...extraEips] });
}
