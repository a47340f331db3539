// p2p: the peer-to-peer network. Owns peers and their connections; does not own chain data.
// Today only the standalone (no peers) network exists.
export type { PeerInfo, PeerNetwork } from "./interface.js";
export { createStandaloneNetwork } from "./standalone.js";
