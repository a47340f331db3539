// eth_: chain identity. The chain methods arrive with the chain core.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { NetworkProfile } from "../../chain/networks.js";
import { toQuantity } from "../../common/hex.js";
import type { RpcCallContext } from "../dispatch.js";

/** Version of the peer protocol this node speaks (62, as the reference node). */
export const protocolVersion = 62;

export interface EthDependencies {
  network: NetworkProfile;
}

export function createEthHandlers(deps: EthDependencies): NamespaceHandlers<"eth", RpcCallContext> {
  return {
    eth_chainId: () => toQuantity(deps.network.chainId),
    eth_protocolVersion: () => toQuantity(protocolVersion),
  };
}
