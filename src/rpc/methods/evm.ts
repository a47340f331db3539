// evm_: the dev methods (snapshots, reverts, reset, time, explicit blocks, pausing mining, the
// mining mode). Thin: parameters are read here, the work is the mining module's DevChain.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { EvmMineOptions, EvmSeconds, EvmTimestamp } from "../../../generated/types.js";
import { toQuantity } from "../../common/hex.js";
import type { DevChain } from "../../mining/devChain.js";
import type { PeerNetwork } from "../../p2p/index.js";
import type { RpcCallContext } from "../dispatch.js";
import { devChainErrorToRpc, historyRewriteWithPeersError, invalidParamsError, withErrorsMapped } from "../errors.js";

export interface EvmDependencies {
  devChain: DevChain;
  /** While peers are connected, the methods that rewrite history refuse (they hold that history too). */
  peers: PeerNetwork;
}

/**
 * A validated EvmSeconds / EvmTimestamp: QUANTITY, decimal string or JSON integer. A JSON number
 * past 2^53 has already lost digits on the way in, so it is refused rather than guessed.
 */
export function secondsOf(value: EvmSeconds | EvmTimestamp, argument: number): bigint {
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw invalidParamsError(`invalid argument ${argument}: ${value} is not an exact integer; pass a QUANTITY`);
    return BigInt(value);
  }
  return BigInt(value);
}

/** Most blocks one evm_mine may mine. */
export const maxBlocksPerMine = 10_000;

/** evm_mine's object form: how many blocks, and the first one's timestamp. */
function miningOptions(options: EvmMineOptions): { blocks: number; timestamp: bigint | undefined } {
  const blocks = options.blocks === undefined ? 1n : secondsOf(options.blocks, 0);
  if (blocks < 1n || blocks > BigInt(maxBlocksPerMine)) {
    throw invalidParamsError(`invalid argument 0: field blocks: must be 1 to ${maxBlocksPerMine}, got ${blocks}`);
  }
  return { blocks: Number(blocks), timestamp: options.timestamp === undefined || options.timestamp === null ? undefined : secondsOf(options.timestamp, 0) };
}

/** Dev-chain errors of a time given as argument 0. */
export const timeArgumentError = (error: unknown) => devChainErrorToRpc(error, 0);

/**
 * Longest interval evm_setIntervalMining takes: setInterval's own limit (2^31 - 1 ms, some 24.8
 * days); a longer one would fire at once, every millisecond.
 */
export const maxIntervalSeconds = Math.floor((2 ** 31 - 1) / 1000);

export function createEvmHandlers(deps: EvmDependencies): NamespaceHandlers<"evm", RpcCallContext> {
  const { devChain, peers } = deps;
  /** Refuses `method` while peers are connected: it would rewrite blocks or time they share. */
  const refuseWithPeers = (method: string) => {
    const connected = peers.connectedPeers().length;
    if (connected > 0) throw historyRewriteWithPeersError(method, connected);
  };
  return {
    evm_snapshot: async () => toQuantity(await devChain.snapshot()),
    evm_revert: ([snapshotId]) => {
      refuseWithPeers("evm_revert");
      return devChain.revert(BigInt(snapshotId));
    },
    evm_reset: async () => {
      refuseWithPeers("evm_reset");
      await devChain.reset();
      return null;
    },
    evm_increaseTime: async ([seconds]) => {
      refuseWithPeers("evm_increaseTime");
      return toQuantity(await withErrorsMapped(() => devChain.increaseTime(secondsOf(seconds, 0)), timeArgumentError));
    },
    evm_mine: async ([what]) => {
      const { blocks, timestamp } = typeof what === "object" ? miningOptions(what) : { blocks: 1, timestamp: what === undefined ? undefined : secondsOf(what, 0) };
      await withErrorsMapped(async () => {
        // The first block at the timestamp (when given); the clock continues from it for the rest.
        for (let block = 0; block < blocks; block++) await devChain.mine(block === 0 ? timestamp : undefined);
      }, timeArgumentError);
      return null;
    },
    evm_setNextBlockTimestamp: async ([timestamp]) => {
      await withErrorsMapped(() => devChain.setNextBlockTimestamp(secondsOf(timestamp, 0)), timeArgumentError);
      return null;
    },
    evm_setAutomine: async ([enabled]) => {
      await withErrorsMapped(() => devChain.setAutomine(enabled), timeArgumentError);
      return null;
    },
    evm_setIntervalMining: ([interval]) => {
      const seconds = secondsOf(interval, 0);
      if (seconds > BigInt(maxIntervalSeconds)) throw invalidParamsError(`invalid argument 0: interval must be at most ${maxIntervalSeconds} seconds, got ${seconds}`);
      try {
        devChain.setIntervalMining(Number(seconds));
      } catch (error) {
        throw devChainErrorToRpc(error, 0);
      }
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
