// The peer-to-peer network on libp2p (p2p/libp2p.ts): the status handshake, the peer limit, the
// bootnodes redialled until connected, and what net_ methods read. Loaded by the node only when
// the network is on (a dynamic import), so a lone node never loads libp2p.
//   - Status (p2p/status.ts): the dialling side sends its status when identify shows the peer
//     speaks the protocol, the other answers with its own; each side sends it again after new
//     heads (at most every second, one round at a time with each peer) and every statusRefreshMs.
//     A peer of another network, chain or genesis is recorded and hung up on; so is one whose
//     bytes do not decode or that stays silent in the handshake. A refresh answered late is
//     recorded as a timeout, the peer kept.
//   - A peer counts (net_peerCount) once its status fits. Past maxPeers, libp2p refuses inbound
//     connections and a further peer that completes the handshake is hung up on.
//   - Every frame is length-prefixed and bounded (statusMaxBytes), every read and dial timed.
import type { Connection, PeerId, Stream } from "@libp2p/interface";
import { peerIdFromPrivateKey } from "@libp2p/peer-id";
import { privateKeyFromRaw } from "@libp2p/crypto/keys";
import { multiaddr, type Multiaddr } from "@multiformats/multiaddr";
import { lpStream } from "@libp2p/utils";
import { TopicValidatorResult } from "@libp2p/gossipsub";
import type { Logger } from "../common/logger.js";
import { plainBytes } from "../common/plainBytes.js";
import { uncompressedPublicKey } from "../common/signatures.js";
import { createHost, type Host, type TransportFactory } from "./libp2p.js";
import type { GossipTopic, GossipVerdict, P2pOptions, PeerEvent, PeerInfo, PeerRecord, PeerStatus, PeerToPeerNetwork, RequestCounts, RequestProtocol, StatusSource } from "./interface.js";
import { handleRequests, openStream, sendRequest, PeerRequestError, RequestUnavailableError } from "./reqResp.js";
import { decodeStatus, decodeStatusResponse, encodeStatus, encodeStatusResponse, statusMaxBytes, statusMismatch, statusProtocolId, StatusDecodingError } from "./status.js";

export type { PeerEvent, PeerRecord, PeerToPeerNetwork } from "./interface.js";
export { InvalidRequestError, PeerRequestError } from "./reqResp.js";

export interface NetworkTimings {
  /** Dialling a peer, opening a stream. */
  dialMs: number;
  /** Waiting for a peer's status frame. */
  statusMs: number;
  /** How long an inbound peer may stay without sending its status. */
  handshakeMs: number;
  statusRefreshMs: number;
  /** The first and the longest pause between dials of a bootnode not connected. */
  redialFirstMs: number;
  redialMaxMs: number;
  gossipHeartbeatMs: number;
}

export const defaultNetworkTimings: NetworkTimings = {
  dialMs: 10_000,
  statusMs: 5_000,
  handshakeMs: 10_000,
  statusRefreshMs: 10_000,
  redialFirstMs: 500,
  redialMaxMs: 30_000,
  gossipHeartbeatMs: 1_000,
};

export interface PeerNetworkSettings {
  options: P2pOptions;
  /** The node key: 32-byte secp256k1 private key. */
  privateKey: Uint8Array;
  status: StatusSource;
  log: Logger;
  userAgent: string;
  timings?: Partial<NetworkTimings>;
  /** Tests: another transport (@libp2p/memory) and its listen addresses. */
  transport?: { factory: TransportFactory; listen: readonly string[] };
}

/** Options the network cannot start with (a bootnode that is no multiaddr with a peer id). */
export class PeerNetworkConfigurationError extends Error {}

const maxRecords = 1_000;
const TopicVerdict: Record<GossipVerdict, TopicValidatorResult> = { accept: TopicValidatorResult.Accept, ignore: TopicValidatorResult.Ignore, reject: TopicValidatorResult.Reject };
/**
 * The shortest time between two status rounds brought by new heads. Gossip already tells the mesh
 * of each new block; the round is for the peers that missed it (a node that joined, one behind a
 * partition), and costs a stream and some 700 bytes per peer (the 30-node simulation found it the
 * largest per-peer cost after the block copies): once a second is enough.
 */
const refreshSpacingMs = 1_000;

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

function countEvent(record: PeerRecord, event: PeerEvent): void {
  record.events[event] = (record.events[event] ?? 0) + 1;
  record.lastEvent = event;
}

function nodeIdOf(peerId: PeerId): string {
  const key = peerId.publicKey?.raw;
  if (key === undefined) return "";
  if (peerId.type === "secp256k1") {
    try {
      return hex(uncompressedPublicKey(key));
    } catch {
      return hex(key);
    }
  }
  return hex(key);
}

/** "/<ip>:<port>" of a TCP address, or the multiaddr itself for another transport. */
function addressOf(address: Multiaddr): string {
  const components = address.getComponents();
  const ip = components.find((component) => component.name === "ip4" || component.name === "ip6")?.value;
  const port = components.find((component) => component.name === "tcp")?.value;
  return ip !== undefined && port !== undefined ? `/${ip}:${port}` : address.toString();
}

/** The peer id a multiaddr ends with (/p2p/<id>), or undefined. */
function peerIdIn(address: Multiaddr): string | undefined {
  return address.getComponents().findLast((component) => component.name === "p2p")?.value;
}

function isLoopback(host: string): boolean {
  return host.startsWith("127.") || host === "::1";
}

interface Bootnode {
  readonly address: Multiaddr;
  readonly peerId: string;
  nextDelayMs: number;
  timer: NodeJS.Timeout | undefined;
  dialling: boolean;
}

class Libp2pPeerNetwork implements PeerToPeerNetwork {
  readonly peerId: string;
  readonly nodeId: string;
  private readonly records = new Map<string, PeerRecord>();
  /** Connected peers whose status fits, by peer id. */
  private readonly ready = new Map<string, PeerId>();
  private readonly handshakeTimers = new Map<string, NodeJS.Timeout>();
  private readonly bootnodes: Bootnode[];
  private readonly timings: NetworkTimings;
  private inboundInProgress = 0;
  private refreshPending = false;
  /** Peers a status round is under way with, and whether one more is due once it ends. */
  private readonly statusRounds = new Map<string, { again: boolean }>();
  private lastRefresh = -Infinity;
  private refreshTimer: NodeJS.Timeout | undefined;
  private unsubscribeStatus: (() => void) | undefined;
  private stopped = false;
  private readonly statusListeners = new Set<(peer: PeerRecord) => void>();
  private readonly requests: RequestCounts = { served: {}, answered: {}, failed: {} };
  /** Gossip topic ids by name. */
  private readonly topicIds = new Map<string, string>();
  private readonly networkId: number;
  private readonly topicPrefix: string;

  constructor(
    private readonly host: Host,
    private readonly settings: PeerNetworkSettings,
    bootnodes: readonly Multiaddr[],
  ) {
    this.peerId = host.peerId.toString();
    this.nodeId = nodeIdOf(host.peerId);
    this.timings = { ...defaultNetworkTimings, ...settings.timings };
    this.bootnodes = bootnodes.map((address) => ({ address, peerId: peerIdIn(address)!, nextDelayMs: this.timings.redialFirstMs, timer: undefined, dialling: false }));
    const own = settings.status.current();
    this.networkId = own.networkId;
    // Nodes of another network or genesis never share a topic with ours.
    this.topicPrefix = `/chain-node/${own.networkId}/${hex(own.genesisHash).slice(0, 8)}`;
  }

  private get log(): Logger {
    return this.settings.log;
  }

  async start(): Promise<void> {
    await this.host.handle(statusProtocolId, (stream, connection) => this.answerStatus(stream, connection), { maxInboundStreams: 4, maxOutboundStreams: 4 });
    await this.host.register(statusProtocolId, {
      onConnect: (peerId, connection) => this.connected(peerId, connection),
      onDisconnect: (peerId) => this.disconnected(peerId),
    });
    this.host.addEventListener("connection:open", (event) => this.connectionOpened(event.detail));
    this.host.addEventListener("peer:disconnect", (event) => this.disconnected(event.detail));
    this.unsubscribeStatus = this.settings.status.subscribe(() => this.scheduleRefresh());
    this.refreshTimer = setInterval(() => this.refreshAll(), this.timings.statusRefreshMs);
    this.refreshTimer.unref();
    for (const bootnode of this.bootnodes) this.dialBootnode(bootnode);
  }

  isListening(): boolean {
    return !this.stopped && this.host.getMultiaddrs().length > 0;
  }

  connectedPeers(): readonly PeerInfo[] {
    return this.readyPeers().map((record) => ({ id: record.nodeId.slice(0, 8), address: record.address }));
  }

  readyPeers(): readonly PeerRecord[] {
    return [...this.ready.keys()].map((peerId) => this.records.get(peerId)!);
  }

  inboundQueueSize(): number {
    return this.inboundInProgress;
  }

  multiaddrs(): string[] {
    return this.host.getMultiaddrs().map((address) => address.toString());
  }

  peerRecord(peerId: string): PeerRecord | undefined {
    return this.records.get(peerId);
  }

  onPeerStatus(listener: (peer: PeerRecord) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  async serve(protocol: RequestProtocol, serve: (peerId: string, request: Uint8Array) => Promise<Uint8Array>): Promise<void> {
    // Only peers past the status handshake are served: a peer of another network, or one not yet
    // known to fit, gets "unavailable" (no blame: its status may be on its way).
    const servePeers = (peerId: string, request: Uint8Array) => (this.ready.has(peerId) ? serve(peerId, request) : Promise.reject(new RequestUnavailableError("status handshake first")));
    await handleRequests(this.host, this.networkId, protocol, servePeers, {
      started: () => {
        this.inboundInProgress++;
        this.requests.served[protocol.name] = (this.requests.served[protocol.name] ?? 0) + 1;
      },
      finished: () => this.inboundInProgress--,
      badRequest: (peerId, { name }, reason) => this.note(peerId, "invalidMessage", { protocol: name, reason }),
    });
  }

  request(peerId: string, protocol: RequestProtocol, request: Uint8Array): Promise<Uint8Array> {
    const peer = this.ready.get(peerId);
    if (peer === undefined) return Promise.reject(new PeerRequestError("unavailable", `${protocol.name}: ${peerId} is not a connected peer`));
    const counted = (counts: Record<string, number>) => (counts[protocol.name] = (counts[protocol.name] ?? 0) + 1);
    return sendRequest(this.host, this.networkId, peer, protocol, request).then(
      (answer) => {
        counted(this.requests.answered);
        return answer;
      },
      (error: unknown) => {
        counted(this.requests.failed);
        throw error;
      },
    );
  }

  requestCounts(): RequestCounts {
    return this.requests;
  }

  subscribe(topic: GossipTopic, validate: (peerId: string, data: Uint8Array) => Promise<GossipVerdict>): void {
    const id = this.topicId(topic);
    const pubsub = this.host.services.pubsub;
    pubsub.topicValidators.set(id, async (from, message) => {
      const peerId = from.toString();
      // Gossip is taken from peers past the status handshake only (their network, chain and genesis known to fit).
      if (!this.ready.has(peerId)) return TopicVerdict.ignore;
      if (message.data.length > topic.maxMessageBytes) {
        this.note(from, "invalidMessage", { topic: topic.name, reason: `a message of ${message.data.length} bytes, over ${topic.maxMessageBytes}` });
        return TopicVerdict.reject;
      }
      this.inboundInProgress++;
      try {
        return TopicVerdict[await validate(peerId, plainBytes(message.data))];
      } catch (error) {
        this.log.warn({ topic: topic.name, peer: peerId, err: error }, "gossip validation failed");
        return TopicVerdict.ignore;
      } finally {
        this.inboundInProgress--;
      }
    });
    pubsub.subscribe(id);
  }

  async publish(topic: GossipTopic, data: Uint8Array): Promise<number> {
    if (this.stopped) return 0;
    const { recipients } = await this.host.services.pubsub.publish(this.topicId(topic), data);
    return recipients.length;
  }

  report(peerId: string, event: PeerEvent, reason: string): void {
    const peer = this.connectedPeer(peerId);
    if (peer !== undefined) this.note(peer, event, { reason });
    else {
      // Gone already: its record (if still kept) counts the event.
      const record = this.records.get(peerId);
      if (record !== undefined) countEvent(record, event);
    }
  }

  disconnect(peerId: string, reason: string): void {
    const peer = this.connectedPeer(peerId);
    if (peer === undefined) return;
    this.log.info({ peer: peerId, reason }, "peer disconnected by this node");
    this.hangUp(peer);
  }

  /** A peer with a connection open, past the handshake or not. */
  private connectedPeer(peerId: string): PeerId | undefined {
    return this.ready.get(peerId) ?? this.host.getConnections().find((connection) => connection.remotePeer.toString() === peerId)?.remotePeer;
  }

  private topicId(topic: GossipTopic): string {
    let id = this.topicIds.get(topic.name);
    if (id === undefined) this.topicIds.set(topic.name, (id = `${this.topicPrefix}/${topic.name}/1`));
    return id;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribeStatus?.();
    clearInterval(this.refreshTimer);
    for (const timer of this.handshakeTimers.values()) clearTimeout(timer);
    for (const bootnode of this.bootnodes) clearTimeout(bootnode.timer);
    await this.host.stop();
    this.ready.clear();
  }

  private record(peerId: PeerId, connection?: Connection): PeerRecord {
    const key = peerId.toString();
    let record = this.records.get(key);
    if (record === undefined) {
      record = { peerId: key, nodeId: nodeIdOf(peerId), address: "", status: undefined, events: {}, lastEvent: undefined };
      if (this.records.size >= maxRecords) {
        // The oldest record of a peer not connected goes.
        for (const old of this.records.keys()) {
          if (!this.ready.has(old)) {
            this.records.delete(old);
            break;
          }
        }
      }
      this.records.set(key, record);
    }
    if (connection !== undefined) record.address = addressOf(connection.remoteAddr);
    return record;
  }

  private note(peerId: PeerId, event: PeerEvent, details?: Record<string, unknown>): void {
    const record = this.record(peerId);
    countEvent(record, event);
    if (event !== "successfulHandshake") this.log.debug({ peer: record.peerId, event, ...details }, "peer event");
  }

  private hangUp(peerId: PeerId): void {
    this.ready.delete(peerId.toString());
    this.host.hangUp(peerId).catch(() => undefined);
  }

  /** Identify showed the peer speaks the status protocol: the dialling side sends its status. */
  private connected(peerId: PeerId, connection: Connection): void {
    if (this.stopped) return;
    this.record(peerId, connection);
    if (connection.direction === "outbound") void this.sendStatus(peerId, true);
  }

  /** Any new connection: a peer not past the handshake within handshakeMs (silent, or not speaking the protocol) is dropped. */
  private connectionOpened(connection: Connection): void {
    const peerId = connection.remotePeer;
    const key = peerId.toString();
    if (this.stopped || this.ready.has(key) || this.handshakeTimers.has(key)) return;
    this.record(peerId, connection);
    const timer = setTimeout(() => {
      this.handshakeTimers.delete(key);
      if (this.ready.has(key) || this.stopped) return;
      this.note(peerId, "failedHandshake", { reason: "no status" });
      this.hangUp(peerId);
    }, this.timings.handshakeMs);
    timer.unref();
    this.handshakeTimers.set(key, timer);
  }

  private disconnected(peerId: PeerId): void {
    const key = peerId.toString();
    if (this.host.getConnections(peerId).length > 0) return;
    const wasReady = this.ready.delete(key);
    clearTimeout(this.handshakeTimers.get(key));
    this.handshakeTimers.delete(key);
    if (wasReady) this.log.info({ peer: key, peers: this.ready.size }, "peer disconnected");
    const bootnode = this.bootnodes.find((candidate) => candidate.peerId === key);
    // Redialled after the current pause, which doubles: a bootnode that keeps refusing us (another
    // network) is not dialled in a tight loop. A handshake that succeeds resets the pause.
    if (bootnode !== undefined && !this.stopped && bootnode.timer === undefined && !bootnode.dialling) {
      const delay = bootnode.nextDelayMs;
      bootnode.nextDelayMs = Math.min(delay * 2, this.timings.redialMaxMs);
      this.scheduleBootnode(bootnode, delay);
    }
  }

  /** Takes a decoded status of a peer: records it, and hangs up on a peer that does not fit. Answers whether it fits. */
  private accept(peerId: PeerId, status: PeerStatus): boolean {
    const key = peerId.toString();
    const record = this.record(peerId);
    record.status = status;
    const mismatch = statusMismatch(this.settings.status.current(), status);
    if (mismatch !== undefined) {
      this.note(peerId, mismatch, { networkId: status.networkId, chainId: status.chainId.toString(), genesisHash: hex(status.genesisHash) });
      this.log.info({ peer: key, reason: mismatch }, "peer refused");
      this.hangUp(peerId);
      return false;
    }
    clearTimeout(this.handshakeTimers.get(key));
    this.handshakeTimers.delete(key);
    if (this.ready.has(key)) {
      this.tellStatus(record);
      return true;
    }
    if (this.host.getConnections(peerId).length === 0) return false;
    if (this.ready.size >= this.settings.options.maxPeers) {
      this.log.debug({ peer: key, maxPeers: this.settings.options.maxPeers }, "peer refused: the node has its most peers");
      this.hangUp(peerId);
      return false;
    }
    this.ready.set(key, peerId);
    this.note(peerId, "successfulHandshake");
    this.log.info({ peer: key, address: record.address, bestNumber: Number(status.bestNumber), peers: this.ready.size }, "peer connected");
    const bootnode = this.bootnodes.find((candidate) => candidate.peerId === key);
    if (bootnode !== undefined) bootnode.nextDelayMs = this.timings.redialFirstMs;
    this.tellStatus(record);
    return true;
  }

  private tellStatus(record: PeerRecord): void {
    for (const listener of this.statusListeners) {
      try {
        listener(record);
      } catch (error) {
        this.log.error({ err: error }, "a peer status listener failed");
      }
    }
  }

  /** The status protocol's server side: one request frame, one response frame. */
  private async answerStatus(stream: Stream, connection: Connection): Promise<void> {
    const peerId = connection.remotePeer;
    this.record(peerId, connection);
    this.inboundInProgress++;
    try {
      const frames = lpStream(stream, { maxDataLength: statusMaxBytes });
      let status: PeerStatus;
      try {
        const request = await frames.read({ signal: AbortSignal.timeout(this.timings.statusMs) });
        status = decodeStatus(request.subarray());
      } catch (error) {
        // A peer past the handshake is refreshing its status.
        this.badStatus(peerId, error, !this.ready.has(peerId.toString()));
        stream.abort(error as Error);
        return;
      }
      await frames.write(encodeStatusResponse(this.settings.status.current()), { signal: AbortSignal.timeout(this.timings.statusMs) });
      await stream.close({ signal: AbortSignal.timeout(this.timings.statusMs) }).catch(() => undefined);
      this.accept(peerId, status);
    } catch (error) {
      this.log.debug({ peer: peerId.toString(), err: error }, "status answer failed");
      stream.abort(error as Error);
    } finally {
      this.inboundInProgress--;
    }
  }

  /**
   * A status that does not decode, or that did not come: recorded for the peer's reputation. One
   * that does not decode ends the connection, and so does one missing in the `handshake`; a
   * refresh that comes late (or not at all) from a peer past it is a timeout only: on a loaded
   * host a peer in the middle of serving a sync may answer late, and it may be the only peer.
   */
  private badStatus(peerId: PeerId, error: unknown, handshake: boolean): void {
    const name = (error as Error).name;
    const undecodable = error instanceof StatusDecodingError || name === "InvalidDataLengthError" || name === "InvalidDataLengthLengthError";
    const event: PeerEvent = undecodable ? "invalidMessage" : name === "TimeoutError" || !handshake ? "timeout" : "failedHandshake";
    this.note(peerId, event, { reason: (error as Error).message });
    if (undecodable || handshake) this.hangUp(peerId);
  }

  /** The status protocol's client side. `handshake`: the first exchange, whose failure ends the connection. */
  private async sendStatus(peerId: PeerId, handshake: boolean): Promise<void> {
    let stream: Stream | undefined;
    try {
      stream = await openStream(this.host, peerId, statusProtocolId, AbortSignal.timeout(this.timings.dialMs));
      const frames = lpStream(stream, { maxDataLength: statusMaxBytes + 1 });
      await frames.write(encodeStatus(this.settings.status.current()), { signal: AbortSignal.timeout(this.timings.statusMs) });
      let status: PeerStatus;
      try {
        const response = await frames.read({ signal: AbortSignal.timeout(this.timings.statusMs) });
        status = decodeStatusResponse(response.subarray());
      } catch (error) {
        if (!this.stopped) this.badStatus(peerId, error, handshake);
        stream.abort(error as Error);
        return;
      }
      await stream.close({ signal: AbortSignal.timeout(this.timings.statusMs) }).catch(() => undefined);
      this.accept(peerId, status);
    } catch (error) {
      stream?.abort(error as Error);
      if (this.stopped) return;
      this.note(peerId, handshake ? "failedHandshake" : "timeout", { reason: (error as Error).message });
      if (handshake) this.hangUp(peerId);
    }
  }

  /** A new head: the peers hear the status once, however many heads came meanwhile, at most every refreshSpacingMs (automine makes hundreds of blocks a second). */
  private scheduleRefresh(): void {
    if (this.refreshPending || this.stopped) return;
    this.refreshPending = true;
    const timer = setTimeout(
      () => {
        this.refreshPending = false;
        this.refreshAll();
      },
      Math.max(0, this.lastRefresh + refreshSpacingMs - performance.now()),
    );
    timer.unref();
  }

  private refreshAll(): void {
    if (this.stopped) return;
    this.lastRefresh = performance.now();
    for (const peerId of this.ready.values()) this.refreshPeer(peerId);
    if (this.ready.size < this.settings.options.minPeers) for (const bootnode of this.bootnodes) if (bootnode.timer === undefined) this.dialBootnode(bootnode);
  }

  /**
   * One status round at a time with a peer: a busy peer that has not answered the last one gets the
   * next once it has, not a stream more (past the protocol's 4 streams it resets the new one, and a
   * reset status round hangs up on the peer).
   */
  private refreshPeer(peerId: PeerId): void {
    const key = peerId.toString();
    const under = this.statusRounds.get(key);
    if (under !== undefined) {
      under.again = true;
      return;
    }
    const round = { again: false };
    this.statusRounds.set(key, round);
    void this.sendStatus(peerId, false).finally(() => {
      this.statusRounds.delete(key);
      if (round.again && !this.stopped && this.ready.has(key)) this.refreshPeer(peerId);
    });
  }

  private scheduleBootnode(bootnode: Bootnode, delayMs: number): void {
    if (bootnode.timer !== undefined || this.stopped) return;
    bootnode.timer = setTimeout(() => {
      bootnode.timer = undefined;
      this.dialBootnode(bootnode);
    }, delayMs);
    bootnode.timer.unref();
  }

  private dialBootnode(bootnode: Bootnode): void {
    if (this.stopped || bootnode.dialling || bootnode.peerId === this.peerId) return;
    if (this.ready.has(bootnode.peerId)) return;
    bootnode.dialling = true;
    this.host
      .dial(bootnode.address, { signal: AbortSignal.timeout(this.timings.dialMs) })
      .then(
        () => undefined,
        (error: unknown) => {
          if (this.stopped) return;
          const delay = bootnode.nextDelayMs;
          bootnode.nextDelayMs = Math.min(delay * 2, this.timings.redialMaxMs);
          this.log.debug({ bootnode: bootnode.address.toString(), err: (error as Error).message, retryInMs: delay }, "bootnode not reached");
          this.scheduleBootnode(bootnode, delay);
        },
      )
      .finally(() => {
        bootnode.dialling = false;
      });
  }
}

/** Parses --bootnodes entries: multiaddrs that name the peer (/p2p/<peer id>). */
export function parseBootnodes(entries: readonly string[]): Multiaddr[] {
  return entries.map((entry) => {
    let address: Multiaddr;
    try {
      address = multiaddr(entry);
    } catch (error) {
      throw new PeerNetworkConfigurationError(`bootnode ${entry} is not a multiaddr: ${(error as Error).message}`);
    }
    if (peerIdIn(address) === undefined) throw new PeerNetworkConfigurationError(`bootnode ${entry} does not end with /p2p/<peer id>`);
    return address;
  });
}

/** The peer id of a node key, as the node's multiaddrs end with it. */
export function peerIdOfKey(privateKey: Uint8Array): string {
  return peerIdFromPrivateKey(privateKeyFromRaw(privateKey)).toString();
}

/** Starts the libp2p host and the protocols on it; the host listens when this settles. */
export async function startPeerNetwork(settings: PeerNetworkSettings): Promise<PeerToPeerNetwork> {
  const { options } = settings;
  const bootnodes = parseBootnodes(options.bootnodes);
  const timings = { ...defaultNetworkTimings, ...settings.timings };
  const listenHost = options.host.includes(":") ? `/ip6/${options.host}` : `/ip4/${options.host}`;
  const host = await createHost({
    privateKey: settings.privateKey,
    listen: settings.transport?.listen ?? [`${listenHost}/tcp/${options.port}`],
    transport: settings.transport?.factory,
    dialFrom: isLoopback(options.host) ? options.host : undefined,
    maxConnections: options.maxPeers,
    userAgent: settings.userAgent,
    gossipHeartbeatMs: timings.gossipHeartbeatMs,
  });
  const network = new Libp2pPeerNetwork(host, settings, bootnodes);
  try {
    await network.start();
  } catch (error) {
    await host.stop();
    throw error;
  }
  return network;
}
