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

/** What happened with a peer, for the reputation work to read (the reference's score events). */
export type PeerEvent =
  | "successfulHandshake"
  | "failedHandshake"
  | "invalidMessage"
  | "timeout"
  | "incompatibleProtocol"
  | "invalidNetwork"
  | "invalidChain"
  | "unexpectedGenesis"
  | "validBlock"
  | "invalidBlock"
  | "invalidHeader"
  | "validTransaction"
  | "invalidTransaction"
  | "unexpectedMessage";

/** The status a peer sent, decoded (p2p/status.ts). */
export interface PeerStatus extends ChainStatus {
  readonly protocolVersion: number;
}

/** What the network remembers of a peer, connected or not (the most recent peers). */
export interface PeerRecord {
  readonly peerId: string;
  /** 128 hex digits: the 64-byte public key (the reference's node id); the key's own hex for non-secp256k1 peers. */
  readonly nodeId: string;
  address: string;
  /** Its last status that decoded. */
  status: PeerStatus | undefined;
  /** How many times each event happened. */
  readonly events: Partial<Record<PeerEvent, number>>;
  lastEvent: PeerEvent | undefined;
}

/**
 * Streams of one request protocol a peer may have open on a node at once: one more is reset by the
 * serving node (libp2p's inbound stream limit), so an asker keeps its requests of a protocol to one
 * peer under it.
 */
export const maxStreamsPerProtocolPerPeer = 8;

/**
 * A request/response protocol: its name (the id is /chain-node/<network id>/<name>/1) and limits.
 * A request or answer over its size, or a step over its time, fails the request.
 */
export interface RequestProtocol {
  readonly name: string;
  readonly maxRequestBytes: number;
  readonly maxResponseBytes: number;
  readonly timeoutMs: number;
}

/** Why a request to a peer failed: it timed out, the peer refused it, the answer broke the protocol, or the peer could not be reached or answer. */
export type PeerRequestFailure = "timeout" | "refused" | "badAnswer" | "unavailable";

/** What a gossip validator decides (gossipsub's): relay and deliver, drop quietly, or drop and blame the sender. */
export type GossipVerdict = "accept" | "ignore" | "reject";

/** A gossip topic: its name (the id is /chain-node/<network id>/<genesis, 8 hex>/<name>/1) and its largest message. */
export interface GossipTopic {
  readonly name: string;
  readonly maxMessageBytes: number;
}

/** Requests by protocol name since the start: served for peers, and sent to them (answered or failed). */
export interface RequestCounts {
  readonly served: Record<string, number>;
  readonly answered: Record<string, number>;
  readonly failed: Record<string, number>;
}

/** The network with --p2p: peers, their status, requests between them and gossip. */
export interface PeerToPeerNetwork extends PeerNetwork {
  readonly peerId: string;
  /** 128 hex digits. */
  readonly nodeId: string;
  /** The addresses other nodes dial (with /p2p/<peer id>). */
  multiaddrs(): string[];
  /** The record of a peer by peer id. */
  peerRecord(peerId: string): PeerRecord | undefined;
  /** Connected peers past the handshake, with their status. */
  readyPeers(): readonly PeerRecord[];
  /** Calls `listener` with a peer's record each time a status of it fits (the handshake and every refresh). */
  onPeerStatus(listener: (peer: PeerRecord) => void): () => void;
  /** Serves `protocol`: `serve` answers a request's bytes, or throws the network's InvalidRequestError. */
  serve(protocol: RequestProtocol, serve: (peerId: string, request: Uint8Array) => Promise<Uint8Array>): Promise<void>;
  /** One request to a ready peer; throws PeerRequestError (p2p/reqResp.ts) with a PeerRequestFailure. */
  request(peerId: string, protocol: RequestProtocol, request: Uint8Array): Promise<Uint8Array>;
  /** Joins a topic: each message is judged by `validate` before it is relayed. */
  subscribe(topic: GossipTopic, validate: (peerId: string, data: Uint8Array) => Promise<GossipVerdict>): void;
  /** Sends a message to the topic's peers; answers how many got it. */
  publish(topic: GossipTopic, data: Uint8Array): Promise<number>;
  /** Requests served and sent since the start (the operators' metrics). */
  requestCounts(): RequestCounts;
  /** Records an event of a peer (the reputation work reads them). */
  report(peerId: string, event: PeerEvent, reason: string): void;
  /** Ends the connections with a peer (one that broke a rule). */
  disconnect(peerId: string, reason: string): void;
  stop(): Promise<void>;
}
