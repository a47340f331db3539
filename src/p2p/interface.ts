// What the RPC layer may ask of the peer-to-peer network.

export interface PeerInfo {
  /** Node id, hex. */
  readonly id: string;
  /** host:port of the connection. */
  readonly address: string;
}

export interface PeerNetwork {
  /** True while the node accepts peer connections. */
  isListening(): boolean;
  connectedPeers(): readonly PeerInfo[];
  /** Peer messages received and not yet processed. */
  inboundQueueSize(): number;
}
