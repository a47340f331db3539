// The libp2p host: the one place that builds it (design brief section 1.1). TCP, noise encryption,
// yamux streams, identify, ping, and gossipsub (content-addressed messages, no signatures; topics
// come with block and transaction relay). p2p/network.ts owns what runs on it.
import "../common/promiseWithResolvers.js"; // Node 20: before libp2p is used
import { noise } from "@chainsafe/libp2p-noise";
import { yamux } from "@chainsafe/libp2p-yamux";
import { privateKeyFromRaw } from "@libp2p/crypto/keys";
import { gossipsub, type GossipSub } from "@libp2p/gossipsub";
import { identify, type Identify } from "@libp2p/identify";
import type { Transport } from "@libp2p/interface";
import { ping, type Ping } from "@libp2p/ping";
import { tcp } from "@libp2p/tcp";
import { createLibp2p, type Libp2p } from "libp2p";
import { keccak256 } from "../common/crypto.js";

export type Host = Libp2p<{ identify: Identify; ping: Ping; pubsub: GossipSub }>;

/** A transport as libp2p takes it (tcp(), or @libp2p/memory's memory() in tests). */
export type TransportFactory = (components: never) => Transport;

export interface HostOptions {
  /** 32-byte secp256k1 private key: the peer id derives from it. */
  privateKey: Uint8Array;
  /** Listen multiaddrs (/ip4/<host>/tcp/<port>; tests: /memory/<name>). */
  listen: readonly string[];
  /** The transport; undefined: TCP. */
  transport: TransportFactory | undefined;
  /** Source address of outgoing TCP connections (a node on 127.0.0.N dials from it); undefined: the system's choice. */
  dialFrom: string | undefined;
  /** Most connections at once: an inbound connection past that is refused. */
  maxConnections: number;
  userAgent: string;
  gossipHeartbeatMs: number;
}

export function createHost(options: HostOptions): Promise<Host> {
  const transport = options.transport ?? tcp(options.dialFrom === undefined ? {} : { dialOpts: { localAddress: options.dialFrom } as object });
  return createLibp2p({
    privateKey: privateKeyFromRaw(options.privateKey),
    nodeInfo: { userAgent: options.userAgent },
    addresses: { listen: [...options.listen] },
    transports: [transport as (components: unknown) => Transport],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionManager: {
      maxConnections: options.maxConnections,
      maxIncomingPendingConnections: 10,
      // libp2p's default (5 per second per address) refuses nodes that share an address, as on loopback.
      inboundConnectionThreshold: 100,
      dialTimeout: 10_000,
    },
    connectionMonitor: { pingInterval: 10_000 },
    services: {
      identify: identify(),
      ping: ping(),
      pubsub: gossipsub({
        // Messages carry no author and no sequence number: they are known by the hash of their bytes.
        globalSignaturePolicy: "StrictNoSign",
        msgIdFn: (message) => keccak256(message.data),
        emitSelf: false,
        allowPublishToZeroTopicPeers: true,
        // A block that came back from a peer before the node published it is no error.
        ignoreDuplicatePublishError: true,
        // A block of 10M gas of zero calldata is some 2.5 MB.
        maxInboundDataLength: 8 * 1024 * 1024,
        heartbeatInterval: options.gossipHeartbeatMs,
      }),
    },
  });
}
