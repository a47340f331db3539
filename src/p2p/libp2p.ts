// The libp2p host: the one place that builds it (design brief section 1.1). TCP, noise encryption,
// yamux streams, identify, ping, and gossipsub (content-addressed messages, no signatures; topics
// come with block and transaction relay). p2p/network.ts owns what runs on it.
import "../common/promiseWithResolvers.js"; // Node 20: before libp2p is used
import { noise } from "@chainsafe/libp2p-noise";
import { yamux } from "@chainsafe/libp2p-yamux";
import { privateKeyFromRaw } from "@libp2p/crypto/keys";
import { gossipsub, type GossipSub } from "@libp2p/gossipsub";
import { identify, type Identify } from "@libp2p/identify";
import type { CreateListenerOptions, DialTransportOptions, MultiaddrConnection, Transport, Upgrader } from "@libp2p/interface";
import { ping, type Ping } from "@libp2p/ping";
import { tcp } from "@libp2p/tcp";
import { createLibp2p, type Libp2p } from "libp2p";
import { Socket } from "node:net";
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
  const transport = options.transport ?? coalescingWrites(tcp(options.dialFrom === undefined ? {} : { dialOpts: { localAddress: options.dialFrom } as object }));
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

/**
 * TCP whose connections write what one turn of the event loop sends as one system call. The
 * transport writes each buffer it is handed on its own (Nagle's delay is off), and the layers above
 * hand it several per message: noise's length prefix, its ciphertext and its tag, and one message
 * for every yamux frame (a stream's opening, its protocol's negotiation, window updates, the
 * request, the end). A long sync's requester wrote some 4,500 times per 10,000 blocks, mostly
 * under 30 bytes; on loopback each write also runs the receiving side's network stack.
 * Corked until the end of the turn, the socket writes them together (writev).
 */
function coalescingWrites(factory: TransportFactory): TransportFactory {
  return (components) => {
    const transport = factory(components);
    const dial = transport.dial.bind(transport);
    const createListener = transport.createListener.bind(transport);
    transport.dial = (address, options: DialTransportOptions) => dial(address, { ...options, upgrader: upgraderCoalescingWrites(options.upgrader) });
    transport.createListener = (options: CreateListenerOptions) => createListener({ ...options, upgrader: upgraderCoalescingWrites(options.upgrader) });
    return transport;
  };
}

function upgraderCoalescingWrites(upgrader: Upgrader): Upgrader {
  return new Proxy(upgrader, {
    get(target, property, receiver) {
      if (property === "upgradeOutbound" || property === "upgradeInbound") {
        const upgrade = target[property] as (connection: MultiaddrConnection, options: unknown) => unknown;
        return (connection: MultiaddrConnection, options: unknown) => upgrade.call(target, corkedPerTurn(connection), options);
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The connection's socket corked from its first write in a turn of the event loop to the turn's end. */
function corkedPerTurn(connection: MultiaddrConnection): MultiaddrConnection {
  const socket = (connection as { socket?: unknown }).socket;
  const sendData = (connection as { sendData?: unknown }).sendData;
  // Another transport, or another version of this one: left as it is.
  if (!(socket instanceof Socket) || typeof sendData !== "function") return connection;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  Object.defineProperty(connection, "sendData", {
    configurable: true,
    value(this: MultiaddrConnection, ...args: unknown[]): unknown {
      if (!corked && !socket.destroyed) {
        corked = true;
        socket.cork();
        process.nextTick(uncork);
      }
      return (sendData as (...args: unknown[]) => unknown).apply(this, args);
    },
  });
  return connection;
}
