// In-process peer-to-peer networks over libp2p's memory transport (design brief section 10, layer
// 2): real hosts, real noise/yamux/identify and the node's status protocol, without sockets. Each
// node's chain status is a plain value the test sets.
import { randomBytes } from "node:crypto";
import { memory } from "@libp2p/memory";
import { createLogger, type Logger } from "../../src/common/logger.js";
import { isPrivateKey } from "../../src/common/signatures.js";
import type { ChainStatus, P2pOptions, StatusSource } from "../../src/p2p/interface.js";
import { createHost, type Host, type TransportFactory } from "../../src/p2p/libp2p.js";
import { startPeerNetwork, type NetworkTimings, type PeerToPeerNetwork } from "../../src/p2p/network.js";
import { createLogCapture, type TestNode } from "./testNode.js";

/** A chain status held by the test: `set` changes it and tells the network, as a new head would. */
export class TestStatusSource implements StatusSource {
  private readonly listeners = new Set<() => void>();
  constructor(public status: ChainStatus) {}
  current(): ChainStatus {
    return this.status;
  }
  subscribe(changed: () => void): () => void {
    this.listeners.add(changed);
    return () => this.listeners.delete(changed);
  }
  set(changes: Partial<ChainStatus>): void {
    this.status = { ...this.status, ...changes };
    for (const listener of this.listeners) listener();
  }
}

export function hash32(seed: number): Uint8Array {
  return new Uint8Array(32).fill(seed);
}

export function regtestLikeStatus(changes: Partial<ChainStatus> = {}): ChainStatus {
  return { networkId: 7771, chainId: 33n, genesisHash: hash32(1), bestNumber: 0n, bestHash: hash32(1), bestParentHash: new Uint8Array(32), totalDifficulty: 1n, ...changes };
}

export function newNodeKey(): Uint8Array {
  for (;;) {
    const key = new Uint8Array(randomBytes(32));
    if (isPrivateKey(key)) return key;
  }
}

/** Fast timings for tests: every wait in milliseconds to a few seconds. */
export const testTimings: Partial<NetworkTimings> = { dialMs: 3_000, statusMs: 2_000, handshakeMs: 1_500, statusRefreshMs: 60_000, redialFirstMs: 100, redialMaxMs: 400, gossipHeartbeatMs: 100 };

let memoryNames = 0;

/** A unique /memory/ listen address. */
export function memoryAddress(): string {
  return `/memory/chain-node-test-${process.pid}-${++memoryNames}`;
}

export function memoryTransport(): TransportFactory {
  return memory() as unknown as TransportFactory;
}

export interface MemoryNode {
  readonly network: PeerToPeerNetwork;
  readonly status: TestStatusSource;
  readonly logs: Record<string, unknown>[];
  /** The address others dial: /memory/<name>/p2p/<peer id>. */
  readonly address: string;
}

export interface MemoryNodeOptions {
  status?: Partial<ChainStatus>;
  options?: Partial<P2pOptions>;
  timings?: Partial<NetworkTimings>;
  log?: Logger;
}

export async function startMemoryNode(settings: MemoryNodeOptions = {}): Promise<MemoryNode> {
  const status = new TestStatusSource(regtestLikeStatus(settings.status));
  const capture = createLogCapture();
  const options: P2pOptions = { host: "127.0.0.1", port: 0, bootnodes: [], maxPeers: 30, minPeers: 1, nodeKey: undefined, ...settings.options };
  const network = await startPeerNetwork({
    options,
    privateKey: newNodeKey(),
    status,
    log: settings.log ?? createLogger("debug", capture.stream),
    userAgent: "chain-node-test",
    timings: { ...testTimings, ...settings.timings },
    transport: { factory: memoryTransport(), listen: [memoryAddress()] },
  });
  return { network, status, logs: capture.records, address: network.multiaddrs()[0]! };
}

/** Polls `condition` every 20 ms until true; fails after `timeoutMs` naming `what`. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The same with an asynchronous condition (a JSON-RPC answer), polled every 50 ms. */
export async function waitUntilAnswer(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000, pollMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Peer-to-peer options of a test node on `host` (127.0.0.N), a free port, no bootnodes, the default limits. */
export function tcpP2pOptions(host: string, changes: Partial<P2pOptions> = {}): P2pOptions {
  return { host, port: 0, bootnodes: [], maxPeers: 30, minPeers: 1, nodeKey: undefined, ...changes };
}

/** A test node's "p2p listening" log line: the multiaddrs to hand to other nodes, its peer id and node id. */
export function listeningLine(node: TestNode): { multiaddrs: string[]; peerId: string; nodeId: string } {
  const line = node.logs.find((record) => record.msg === "p2p listening") as { multiaddrs: string[]; peerId: string; nodeId: string } | undefined;
  if (line === undefined) throw new Error("no p2p listening line");
  return line;
}

/**
 * Memory-transport nodes and bare libp2p hosts (peers that follow no protocol but what the test
 * writes) for one suite; `stopAll` stops every one started since (an afterEach).
 */
export function memoryPeers(): { node(settings?: MemoryNodeOptions): Promise<MemoryNode>; bareHost(userAgent: string): Promise<Host>; stopAll(): Promise<void> } {
  const nodes: MemoryNode[] = [];
  const hosts: Host[] = [];
  return {
    async node(settings = {}) {
      const node = await startMemoryNode(settings);
      nodes.push(node);
      return node;
    },
    async bareHost(userAgent) {
      const host = await createHost({ privateKey: newNodeKey(), listen: [memoryAddress()], transport: memoryTransport(), dialFrom: undefined, maxConnections: 10, userAgent, gossipHeartbeatMs: 100 });
      hosts.push(host);
      return host;
    },
    async stopAll() {
      await Promise.all([...nodes.splice(0).map((node) => node.network.stop()), ...hosts.splice(0).map((host) => host.stop())]);
    },
  };
}
