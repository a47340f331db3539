// What the RPC layer may ask of the peer-to-peer network, and what the network asks of the node.
// p2p/ knows no chain: the node hands it the chain's status as plain values.

export interface PeerInfo {
  /** Node id, hex: the first 8 hex digits of the peer's 64-byte public key (net_peerList). */
  readonly id: string;
  /** "/<ip>:<port>" of the connection (the reference's form with an empty host part). */
  readonly address: string;
}

export interface PeerNetwork {
  /** True while the node accepts peer connections. */
  isListening(): boolean;
  /** Peers past the status handshake. */
  connectedPeers(): readonly PeerInfo[];
  /** Peer messages received and not yet processed. */
  inboundQueueSize(): number;
}

/** The chain as peers see it in the status handshake (design brief section 4). */
export interface ChainStatus {
  /** The peer-to-peer network id (NetworkProfile.p2pNetworkId). */
  readonly networkId: number;
  readonly chainId: bigint;
  /** 32 bytes. */
  readonly genesisHash: Uint8Array;
  readonly bestNumber: bigint;
  /** 32 bytes. */
  readonly bestHash: Uint8Array;
  /** 32 bytes (zero for the genesis block). */
  readonly bestParentHash: Uint8Array;
  readonly totalDifficulty: bigint;
}

/** Where the network reads the node's own status, and hears that it changed (a new head). */
export interface StatusSource {
  current(): ChainStatus;
  /** Calls `changed` after each change of the head; answers the function that unsubscribes. */
  subscribe(changed: () => void): () => void;
}

export interface P2pOptions {
  /** Address the listener binds. */
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Multiaddrs with /p2p/<peer id> dialled at start and redialled until connected. */
  bootnodes: readonly string[];
  /** Most peers at once (connections past that are refused). */
  maxPeers: number;
  /** Below this many peers the node redials its bootnodes sooner. */
  minPeers: number;
  /** The node key (32-byte secp256k1 private key) given on the command line; undefined: the stored one, or a new one. */
  nodeKey: Uint8Array | undefined;
}

export const defaultP2pLimits = { maxPeers: 30, minPeers: 1 } as const;
