// evm_: the dev methods (snapshots, reverts, reset, time, explicit blocks, pausing mining). Thin:
// parameters are read here, the work is the mining module's DevChain.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { EvmSeconds, EvmTimestamp } from "../../../generated/types.js";
import { toQuantity } from "../../common/hex.js";
import type { DevChain } from "../../mining/devChain.js";
import type { RpcCallContext } from "../dispatch.js";
import { devChainErrorToRpc, invalidParamsError, withErrorsMapped } from "../errors.js";

export interface EvmDependencies {
  devChain: DevChain;
}

/**
 * A validated EvmSeconds / EvmTimestamp: QUANTITY, decimal string or JSON integer. A JSON number
 * past 2^53 has already lost digits on the way in, so it is refused rather than guessed.
 */
function secondsOf(value: EvmSeconds | EvmTimestamp, argument: number): bigint {
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw invalidParamsError(`invalid argument ${argument}: ${value} is not an exact integer; pass a QUANTITY`);
    return BigInt(value);
  }
  return BigInt(value);
}

/** Dev-chain errors of a time given as argument 0. */
const timeArgumentError = (error: unknown) => devChainErrorToRpc(error, 0);

export function createEvmHandlers(deps: EvmDependencies): NamespaceHandlers<"evm", RpcCallContext> {
  const { devChain } = deps;
  return {
    evm_snapshot: async () => toQuantity(await devChain.snapshot()),
    evm_revert: ([snapshotId]) => devChain.revert(BigInt(snapshotId)),
    evm_reset: async () => {
      await devChain.reset();
      return null;
    },
    evm_increaseTime: async ([seconds]) => toQuantity(await withErrorsMapped(() => devChain.increaseTime(secondsOf(seconds, 0)), timeArgumentError)),
    evm_mine: async ([timestamp]) => {
      await withErrorsMapped(() => devChain.mine(timestamp === undefined ? undefined : secondsOf(timestamp, 0)), timeArgumentError);
      return null;
    },
    evm_stopMining: () => {
      devChain.stopMining();
      return null;
    },
    evm_startMining: async () => {
      await withErrorsMapped(() => devChain.startMining(), timeArgumentError);
      return null;
    },
  };
}
