// eth_ methods of mining: the hash rates, and the merged-mining work through the older
// eth_getWork / eth_submitWork interface (mining/legacyWork.ts has the mapping).
import type { NamespaceHandlers } from "../../../generated/methods.js";
import { bytesToHex, hexToBytes, toQuantity } from "../../common/hex.js";
import type { HashRates } from "../../mining/hashRates.js";
import { legacyWorkPackage, submitLegacyWork } from "../../mining/legacyWork.js";
import type { MergedMiningServer } from "../../mining/mergedMiningServer.js";
import type { RpcCallContext } from "../dispatch.js";
import { devChainErrorToRpc, mergedMiningRateLimitedError, withErrorsMapped } from "../errors.js";

export interface EthMiningDependencies {
  mergedMining: MergedMiningServer;
  hashRates: HashRates;
}

type EthMiningMethod = "eth_hashrate" | "eth_netHashrate" | "eth_getWork" | "eth_submitWork" | "eth_submitHashrate";

export function createEthMiningHandlers(deps: EthMiningDependencies): Pick<NamespaceHandlers<"eth", RpcCallContext>, EthMiningMethod> {
  const { mergedMining, hashRates } = deps;
  return {
    eth_hashrate: async () => toQuantity(await hashRates.nodeHashrate()),
    // A JSON number, as the reference answers it.
    eth_netHashrate: async () => Number(await hashRates.networkHashrate()),
    eth_getWork: async () => {
      const template = await withErrorsMapped(async () => mergedMining.currentTemplate(), (error) => devChainErrorToRpc(error, 0));
      const work = legacyWorkPackage(template);
      return [bytesToHex(work.powHash), bytesToHex(work.merkleRoot), bytesToHex(work.target)];
    },
    eth_submitWork: async ([nonce, powHash, mixDigest]) => {
      const verdict = await submitLegacyWork(mergedMining, hexToBytes(nonce), hexToBytes(powHash), hexToBytes(mixDigest));
      if (verdict.kind === "rateLimited") throw mergedMiningRateLimitedError;
      return verdict.kind === "imported" && (verdict.outcome.status === "IMPORTED_BEST" || verdict.outcome.status === "IMPORTED_NOT_BEST");
    },
    eth_submitHashrate: ([hashrate, clientId]) => {
      hashRates.report(BigInt(hashrate), clientId.toLowerCase());
      return true;
    },
  };
}
