// net_: network id and peers.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { NetworkProfile } from "../../chain/networks.js";
import { toQuantity } from "../../common/hex.js";
import type { PeerNetwork } from "../../p2p/index.js";
import type { RpcCallContext } from "../dispatch.js";

export interface NetDependencies {
  network: NetworkProfile;
  peers: PeerNetwork;
}

export function createNetHandlers(deps: NetDependencies): NamespaceHandlers<"net", RpcCallContext> {
  return {
    net_version: () => String(deps.network.networkId),
    net_listening: () => deps.peers.isListening(),
    net_peerCount: () => toQuantity(deps.peers.connectedPeers().length),
    net_peerList: () => deps.peers.connectedPeers().map((peer) => `${peer.id} | ${peer.address}`),
  };
}
