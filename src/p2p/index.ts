// p2p: the peer-to-peer network. Owns peers and their connections; does not own chain data.
// The libp2p network (network.ts) is not exported here: the node imports it dynamically, only
// when the network is on, so a lone node never loads libp2p.
export type { ChainStatus, P2pOptions, PeerInfo, PeerNetwork, StatusSource } from "./interface.js";
export { defaultP2pLimits } from "./interface.js";
export { createStandaloneNetwork } from "./standalone.js";
