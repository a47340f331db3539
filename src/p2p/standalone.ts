// The network of a node that runs alone: it has no peer-to-peer listener (P2P is not built yet),
// so it has no peers and does not listen for them.
import type { PeerNetwork } from "./interface.js";

export function createStandaloneNetwork(): PeerNetwork {
  return {
    isListening: () => false,
    connectedPeers: () => [],
    // Without peers nothing arrives.
    inboundQueueSize: () => 0,
  };
}
