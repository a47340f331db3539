// anvil_ and hardhat_: the test helpers under the names Foundry's and Hardhat's tools call (viem's
// testClient picks the prefix by its mode). One implementation each, answered under both names;
// only the result differs where the two tools answer differently (Anvil null, Hardhat true).
// Thin: parameters are read here, the work is the mining module's DevChain and the impersonation set.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { Uint64 } from "../../../generated/types.js";
import type { ImpersonatedAccounts } from "../../accounts/impersonation.js";
import { bytesToHex, hexToBytes } from "../../common/hex.js";
import type { DevChain } from "../../mining/devChain.js";
import type { AccountChange } from "../../mining/devState.js";
import type { RpcCallContext } from "../dispatch.js";
import { devChainErrorToRpc, invalidParamsError, withErrorsMapped } from "../errors.js";
import { maxBlocksPerMine, secondsOf, timeArgumentError } from "./evm.js";

export interface DevHelperDependencies {
  devChain: DevChain;
  impersonated: ImpersonatedAccounts;
}

/** Largest nonce an account may be given: a transaction at it leaves the account at 2^64 - 1. */
const maxSettableNonce = 2n ** 64n - 2n;

/** The shared implementations; each answers what the caller maps to its tool's result. */
function createDevHelpers(deps: DevHelperDependencies) {
  const { devChain, impersonated } = deps;
  const changeAccount = (change: AccountChange) => withErrorsMapped(() => devChain.changeAccount(change), timeArgumentError);
  return {
    async mine(count: Uint64 | number | undefined, interval: Parameters<typeof secondsOf>[0] | undefined): Promise<void> {
      const blocks = count === undefined ? 1n : typeof count === "number" ? secondsOf(count, 0) : BigInt(count);
      if (blocks < 1n || blocks > BigInt(maxBlocksPerMine)) throw invalidParamsError(`invalid argument 0: count must be 1 to ${maxBlocksPerMine}, got ${blocks}`);
      const seconds = interval === undefined ? 0n : secondsOf(interval, 1);
      await withErrorsMapped(() => devChain.mineSeries(Number(blocks), seconds), (error) => devChainErrorToRpc(error, 1));
    },
    setBalance: (address: string, balance: string) => changeAccount({ kind: "balance", address: hexToBytes(address), balance: BigInt(balance) }),
    setCode: (address: string, code: string) => changeAccount({ kind: "code", address: hexToBytes(address), code: hexToBytes(code) }),
    setStorageAt: (address: string, position: string, value: string) =>
      changeAccount({ kind: "storage", address: hexToBytes(address), slot: hexToBytes(`0x${BigInt(position).toString(16).padStart(64, "0")}`), value: hexToBytes(value) }),
    setNonce(address: string, nonce: string): Promise<void> {
      const value = BigInt(nonce);
      if (value > maxSettableNonce) throw invalidParamsError(`invalid argument 1: nonce must be at most ${maxSettableNonce}, got ${value}`);
      return changeAccount({ kind: "nonce", address: hexToBytes(address), nonce: value });
    },
    impersonate: (address: string) => impersonated.start(hexToBytes(address)),
    stopImpersonating: (address: string) => impersonated.stop(hexToBytes(address)),
    getAutomine: () => devChain.automine,
    setCoinbase: (address: string) => devChain.setCoinbase(hexToBytes(address)),
    dropTransaction: (hash: string) => devChain.dropTransaction(hexToBytes(hash)),
  };
}

export function createAnvilHandlers(deps: DevHelperDependencies): NamespaceHandlers<"anvil", RpcCallContext> {
  const helpers = createDevHelpers(deps);
  return {
    anvil_mine: async ([count, interval]) => (await helpers.mine(count, interval), null),
    anvil_setBalance: async ([address, balance]) => (await helpers.setBalance(address, balance), null),
    anvil_setCode: async ([address, code]) => (await helpers.setCode(address, code), null),
    anvil_setStorageAt: async ([address, position, value]) => (await helpers.setStorageAt(address, position, value), null),
    anvil_setNonce: async ([address, nonce]) => (await helpers.setNonce(address, nonce), null),
    anvil_impersonateAccount: ([address]) => (helpers.impersonate(address), null),
    anvil_stopImpersonatingAccount: ([address]) => (helpers.stopImpersonating(address), null),
    anvil_getAutomine: () => helpers.getAutomine(),
    anvil_setCoinbase: ([address]) => (helpers.setCoinbase(address), null),
    anvil_dropTransaction: async ([hash]) => ((await helpers.dropTransaction(hash)) ? bytesToHex(hexToBytes(hash)) : null),
  };
}

export function createHardhatHandlers(deps: DevHelperDependencies): NamespaceHandlers<"hardhat", RpcCallContext> {
  const helpers = createDevHelpers(deps);
  return {
    hardhat_mine: async ([count, interval]) => (await helpers.mine(count, interval), true),
    hardhat_setBalance: async ([address, balance]) => (await helpers.setBalance(address, balance), true),
    hardhat_setCode: async ([address, code]) => (await helpers.setCode(address, code), true),
    hardhat_setStorageAt: async ([address, position, value]) => (await helpers.setStorageAt(address, position, value), true),
    hardhat_setNonce: async ([address, nonce]) => (await helpers.setNonce(address, nonce), true),
    hardhat_impersonateAccount: ([address]) => (helpers.impersonate(address), true),
    hardhat_stopImpersonatingAccount: ([address]) => helpers.stopImpersonating(address),
    hardhat_getAutomine: () => helpers.getAutomine(),
    hardhat_setCoinbase: ([address]) => (helpers.setCoinbase(address), true),
    hardhat_dropTransaction: ([hash]) => helpers.dropTransaction(hash),
  };
}
