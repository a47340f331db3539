// make bench-network-simulation: issue 38's scaling figure. BENCH_NODES (30) nodes in this one
// process, each a chain in memory (node/chainServices.ts) with the libp2p network on the memory
// transport and the sync on it, wired as node/node.ts wires them (test/helpers/syncNode.ts): real
// noise, yamux, identify, status handshakes, gossipsub and the node's own gossip checks and
// imports, without sockets.
//   - Topology: a random BENCH_DEGREE-regular graph (4) from BENCH_SEED (the pairing model, redrawn
//     until simple and connected); for each edge one end, picked by the seed, has the other among
//     its bootnodes, which the network dials (and redials) at start. Hop counts are breadth-first
//     distances from node 0 over the connections actually open once the meshes formed.
//   - Node 0 mines BENCH_BLOCKS (200) blocks of BENCH_TRANSFERS (10) pre-signed value transfers,
//     one every BENCH_BLOCK_INTERVAL_MS (500), with miner.mineBlock: the transactions go into the
//     block directly, so the traffic measured is the blocks' (and the status rounds each new head
//     brings), not transaction gossip. Every other node has mining off.
//   - Propagation: each node's chain.subscribeHead notes when each block became its head
//     (performance.now(), one clock for all nodes); a block's delay at a node is that time minus
//     the time it became node 0's head. Beside it, the time gossipsub delivered it: our validator's
//     accept, the moment gossipsub relays it (the sync accepts a block once imported valid).
//   - Bytes sent: each node's transport counts what its connections hand to the memory transport
//     (the raw connection's sendData, under noise and yamux: what TCP would carry, less TCP/IP
//     headers), everything over the mining window; the idle rate, measured for 10 s before it,
//     is printed beside.
//   - Duplicates: gossipsub drops a message whose id it has seen before our validator runs, and
//     tells its peer score (score.duplicateMessage) of each one: that hook is counted per node for
//     the block topic (gossipsub is reached through the network's private host: bench-only). Block messages sent (gossipsub's sendRpc) are counted too, so that sent =
//     first deliveries + duplicates can be checked.
//   - Node 0's next block waits while the slowest node is more than BENCH_MAX_LAG (2) blocks
//     behind: on a shared machine a pace the process cannot keep would measure a backlog.
//   - Every node must end on node 0's head (hash and state root); the run fails otherwise.
//   - Beside the run: one node's CPU per block alone (decoding a received block with its senders,
//     importing it), and the hop counts of the same topology model at 300, 3,000 and 30,000 nodes
//     (graphs only), for docs/network-scaling.md's estimate.
// Results: dist/bench/results/network-simulation.json (bench/results.ts) and a table. All nodes
// share one thread: a hop's time includes waiting for the other nodes' work (the event loop's
// utilisation is printed), which docs/network-scaling.md accounts for.
import { setMaxListeners } from "node:events";
import type { Block } from "../src/chain/block.js";
import { findNetworkProfile } from "../src/chain/networks.js";
import type { ChainTransaction } from "../src/chain/transactions.js";
import { keccak256 } from "../src/common/crypto.js";
import { bytesToUnprefixedHex } from "../src/common/hex.js";
import { createLogger, type LogLevel } from "../src/common/logger.js";
import type { ChainServices } from "../src/node/chainServices.js";
import type { Host, TransportFactory } from "../src/p2p/libp2p.js";
import { peerIdOfKey, type PeerToPeerNetwork } from "../src/p2p/network.js";
import type { SyncManager } from "../src/sync/syncManager.js";
import { decodeBlock } from "../src/sync/messages.js";
import { openTestChain, signedTransfer } from "../test/helpers/chainPair.js";
import { memoryAddress, memoryTransport, newNodeKey } from "../test/helpers/p2p.js";
import { seededRandom } from "../test/helpers/seededRandom.js";
import { startSyncNode } from "../test/helpers/syncNode.js";
import { recordResult, writeResults } from "./results.js";

const nodeCount = Number(process.env.BENCH_NODES ?? 30);
const degree = Number(process.env.BENCH_DEGREE ?? 4);
const blockCount = Number(process.env.BENCH_BLOCKS ?? 200);
const transfersPerBlock = Number(process.env.BENCH_TRANSFERS ?? 10);
const blockIntervalMs = Number(process.env.BENCH_BLOCK_INTERVAL_MS ?? 500);
const seed = Number(process.env.BENCH_SEED ?? 38);
/**
 * Blocks node 0 may be ahead of the slowest node before its next block waits (BENCH_MAX_LAG): in
 * one thread, a pace the machine cannot keep (other processes took the cores) measures a backlog
 * of imports, not propagation. How many blocks waited, and how long, is printed.
 */
const maxLag = Number(process.env.BENCH_MAX_LAG ?? 2);
const logLevel = (process.env.BENCH_LOG ?? "silent") as LogLevel;
/** How long the nodes may take to reach node 0's head after its last block. */
const settleTimeoutMs = 120_000;
/** Long enough to hold a round of the 10-second status refreshes and pings. */
const idleWindowMs = 10_000;

// Thirty hosts in one process share AbortSignals and emitters past Node's default warning of 10.
setMaxListeners(1_000);

// --- topology ---

/** A random `d`-regular graph on `n` vertices (pairing model), redrawn until simple and connected; edges as [dialler, dialled]. */
function randomRegularGraph(n: number, d: number, next: () => number): [number, number][] {
  if ((n * d) % 2 !== 0 || d >= n) throw new Error(`no ${d}-regular graph on ${n} vertices`);
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const stubs = Array.from({ length: n * d }, (_, index) => Math.floor(index / d));
    for (let index = stubs.length - 1; index > 0; index--) {
      const other = next() % (index + 1);
      [stubs[index], stubs[other]] = [stubs[other]!, stubs[index]!];
    }
    const seen = new Set<string>();
    const edges: [number, number][] = [];
    let simple = true;
    for (let index = 0; index < stubs.length && simple; index += 2) {
      const [a, b] = [stubs[index]!, stubs[index + 1]!];
      const key = `${Math.min(a, b)}-${Math.max(a, b)}`;
      if (a === b || seen.has(key)) simple = false;
      seen.add(key);
      edges.push(next() % 2 === 0 ? [a, b] : [b, a]);
    }
    if (simple && distancesFrom(0, adjacency(n, edges)).every((distance) => distance >= 0)) return edges;
  }
  throw new Error(`no simple connected ${d}-regular graph on ${n} vertices drawn`);
}

function adjacency(n: number, edges: readonly [number, number][]): number[][] {
  const neighbours = Array.from({ length: n }, (): number[] => []);
  for (const [a, b] of edges) {
    neighbours[a]!.push(b);
    neighbours[b]!.push(a);
  }
  return neighbours;
}

/** Breadth-first hop counts from `origin`; -1 for a node not reached. */
function distancesFrom(origin: number, neighbours: readonly (readonly number[])[]): number[] {
  const distance = neighbours.map(() => -1);
  distance[origin] = 0;
  const queue = [origin];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const neighbour of neighbours[node]!) {
      if (distance[neighbour] === -1) {
        distance[neighbour] = distance[node]! + 1;
        queue.push(neighbour);
      }
    }
  }
  return distance;
}

/**
 * A near-regular graph for projections to sizes too big to run: the pairing model with self-loops
 * and repeated pairs dropped instead of redrawn (a simple d-regular draw is rare past d = 4).
 */
function pairingGraph(n: number, d: number, next: () => number): number[][] {
  const stubs = Array.from({ length: n * d }, (_, index) => Math.floor(index / d));
  for (let index = stubs.length - 1; index > 0; index--) {
    const other = next() % (index + 1);
    [stubs[index], stubs[other]] = [stubs[other]!, stubs[index]!];
  }
  const neighbours = Array.from({ length: n }, () => new Set<number>());
  for (let index = 0; index + 1 < stubs.length; index += 2) {
    const [a, b] = [stubs[index]!, stubs[index + 1]!];
    if (a === b) continue;
    neighbours[a]!.add(b);
    neighbours[b]!.add(a);
  }
  return neighbours.map((set) => [...set]);
}

/** Hop counts from node 0 in `graphs` such graphs of `n` nodes of degree `d`: median, p99, the largest, the mean, and nodes not reached. */
function projectedHops(n: number, d: number, graphs: number, next: () => number): { mean: number; median: number; p99: number; max: number; unreached: number } {
  const all: number[] = [];
  let unreached = 0;
  for (let graph = 0; graph < graphs; graph++) {
    const distances = distancesFrom(0, pairingGraph(n, d, next)).slice(1);
    unreached += distances.filter((distance) => distance < 0).length;
    all.push(...distances.filter((distance) => distance >= 0));
  }
  all.sort((a, b) => a - b);
  return { mean: all.reduce((a, b) => a + b, 0) / all.length, median: quantile(all, 0.5), p99: quantile(all, 0.99), max: all.at(-1)!, unreached };
}

/** One node's work on each block, alone: decoding a received block (senders recovered) and importing it, in CPU milliseconds. */
async function soloCosts(blocks: readonly Block[]): Promise<{ decode: number[]; import: number[] }> {
  const services = await openTestChain();
  const costs = { decode: [] as number[], import: [] as number[] };
  try {
    for (const block of blocks) {
      const encoded = block.encode();
      const before = process.cpuUsage();
      const decoded = decodeBlock(encoded, services.common, services.typedTransactions);
      const decodedAt = process.cpuUsage();
      const outcome = await services.importer.importBlock(decoded, "peer");
      const importedAt = process.cpuUsage();
      if (outcome.status !== "IMPORTED_BEST") throw new Error(`block ${block.number} imported alone: ${outcome.status}`);
      costs.decode.push((decodedAt.user + decodedAt.system - before.user - before.system) / 1000);
      costs.import.push((importedAt.user + importedAt.system - decodedAt.user - decodedAt.system) / 1000);
    }
  } finally {
    await services.close();
  }
  return costs;
}

// --- measuring ---

interface Counters {
  bytesSent: number;
  /** Block-topic messages gossipsub sent (publish and relay), and their data's bytes. */
  blockMessagesSent: number;
  blockMessageBytesSent: number;
  /** Block-topic messages gossipsub dropped as already seen. */
  blockDuplicates: number;
}

interface MinimalMultiaddrConnection {
  sendData(data: { byteLength: number }): { sentBytes: number; canSendMore: boolean };
}
interface MinimalUpgrader {
  upgradeInbound(connection: MinimalMultiaddrConnection, options?: unknown): Promise<unknown>;
  upgradeOutbound(connection: MinimalMultiaddrConnection, options?: unknown): Promise<unknown>;
}
interface MinimalTransport {
  dial(address: unknown, options: { upgrader: MinimalUpgrader }): Promise<unknown>;
  createListener(options: { upgrader: MinimalUpgrader }): unknown;
}

/** The memory transport, with every raw connection's sent bytes added to `counters` (before the upgrade: noise and yamux included). */
function countingTransport(inner: TransportFactory, counters: Counters): TransportFactory {
  const counted = (connection: MinimalMultiaddrConnection) => {
    const sendData = connection.sendData.bind(connection);
    connection.sendData = (data) => {
      const result = sendData(data);
      counters.bytesSent += result.sentBytes;
      return result;
    };
    return connection;
  };
  const countingUpgrader = (upgrader: MinimalUpgrader): MinimalUpgrader =>
    new Proxy(upgrader, {
      get(target, property, receiver) {
        if (property === "upgradeInbound") return (connection: MinimalMultiaddrConnection, options?: unknown) => target.upgradeInbound(counted(connection), options);
        if (property === "upgradeOutbound") return (connection: MinimalMultiaddrConnection, options?: unknown) => target.upgradeOutbound(counted(connection), options);
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  return (components: never) => {
    const transport = inner(components) as unknown as MinimalTransport;
    const dial = transport.dial.bind(transport);
    const createListener = transport.createListener.bind(transport);
    transport.dial = (address, options) => dial(address, { ...options, upgrader: countingUpgrader(options.upgrader) });
    transport.createListener = (options) => createListener({ ...options, upgrader: countingUpgrader(options.upgrader) });
    return transport as unknown as ReturnType<TransportFactory>;
  };
}

interface GossipRpc {
  messages?: { topic?: string; data?: Uint8Array }[];
}
interface GossipInternals {
  sendRpc(id: string, rpc: GossipRpc): boolean;
  score: { duplicateMessage(from: string, msgIdStr: string, topic: string): void };
  getMeshPeers(topic: string): string[];
}

function meshSize(node: SimulatedNode, topic: string): number {
  return (node.host.services.pubsub as unknown as GossipInternals).getMeshPeers(topic).length;
}

/** The block topic's id as p2p/network.ts names it. */
function isBlockTopic(topic: string | undefined): boolean {
  return topic !== undefined && topic.endsWith("/block/1");
}

/** Counts gossipsub's block messages sent and duplicates dropped, through its own send and peer-score hooks. */
function countGossip(host: Host, counters: Counters, duplicatesById: Map<string, number>): void {
  const pubsub = host.services.pubsub as unknown as GossipInternals;
  const sendRpc = pubsub.sendRpc.bind(pubsub);
  pubsub.sendRpc = (id, rpc) => {
    const sent = sendRpc(id, rpc);
    if (sent) {
      for (const message of rpc.messages ?? []) {
        if (!isBlockTopic(message.topic)) continue;
        counters.blockMessagesSent++;
        counters.blockMessageBytesSent += message.data?.byteLength ?? 0;
      }
    }
    return sent;
  };
  const duplicateMessage = pubsub.score.duplicateMessage.bind(pubsub.score);
  pubsub.score.duplicateMessage = (from, msgIdStr, topic) => {
    if (isBlockTopic(topic)) {
      counters.blockDuplicates++;
      duplicatesById.set(msgIdStr, (duplicatesById.get(msgIdStr) ?? 0) + 1);
    }
    duplicateMessage(from, msgIdStr, topic);
  };
}

/** gossipsub's message id of a block's message: keccak-256 of its bytes (p2p/libp2p.ts), base64 without padding. */
function gossipIdOf(block: Block): string {
  return Buffer.from(keccak256(block.encode())).toString("base64").replace(/=+$/, "");
}

// --- the nodes ---

interface SimulatedNode {
  readonly index: number;
  readonly services: ChainServices;
  readonly network: PeerToPeerNetwork;
  readonly sync: SyncManager;
  readonly host: Host;
  readonly counters: Counters;
  /** performance.now() when each block (hex hash) became the head. */
  readonly headAt: Map<string, number>;
  /** performance.now() when gossipsub delivered each block message (by gossip id). */
  readonly deliveredAt: Map<string, number>;
  stop(): Promise<void>;
}

async function startSimulatedNode(index: number, privateKey: Uint8Array, listen: string, bootnodes: string[], duplicatesById: Map<string, number>): Promise<SimulatedNode> {
  const log = createLogger(logLevel, process.stderr).child({ simulatedNode: index });
  const counters: Counters = { bytesSent: 0, blockMessagesSent: 0, blockMessageBytesSent: 0, blockDuplicates: 0 };
  const headAt = new Map<string, number>();
  const deliveredAt = new Map<string, number>();
  const { services, network, sync, stop } = await startSyncNode({ privateKey, listen, bootnodes, transport: countingTransport(memoryTransport(), counters), log });
  services.chain.subscribeHead(
    {
      blocksAdded: (blocks) => {
        const now = performance.now();
        for (const { block } of blocks) {
          const key = bytesToUnprefixedHex(block.hash);
          if (!headAt.has(key)) headAt.set(key, now);
        }
      },
      blocksRemoved: () => undefined,
    },
    (error) => log.error({ err: error }, "timing heads failed"),
  );
  // The host is the network's own (private to p2p/network.ts): read here for gossipsub's hooks only.
  const host = (network as unknown as { host: Host }).host;
  countGossip(host, counters, duplicatesById);
  host.services.pubsub.addEventListener("gossipsub:message", (event) => {
    if (!isBlockTopic(event.detail.msg.topic)) return;
    if (!deliveredAt.has(event.detail.msgId)) deliveredAt.set(event.detail.msgId, performance.now());
  });
  return {
    index,
    services,
    network,
    sync,
    host,
    counters,
    headAt,
    deliveredAt,
    stop,
  };
}

// --- figures ---

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function summary(values: readonly number[]): { count: number; median: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? Number.NaN };
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

async function waitFor(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const next = seededRandom(seed);
  const edges = randomRegularGraph(nodeCount, degree, next);
  const keys = Array.from({ length: nodeCount }, () => newNodeKey());
  const listens = keys.map(() => memoryAddress());
  const addresses = keys.map((key, index) => `${listens[index]}/p2p/${peerIdOfKey(key)}`);
  const duplicatesById = new Map<string, number>();

  console.log(`network simulation: ${nodeCount} nodes, random ${degree}-regular topology (seed ${seed}), ${blockCount} blocks of ${transfersPerBlock} transfers every ${blockIntervalMs} ms`);
  const nodes: SimulatedNode[] = [];
  try {
    for (let index = 0; index < nodeCount; index++) {
      const bootnodes = edges.filter(([dialler]) => dialler === index).map(([, dialled]) => addresses[dialled]!);
      nodes.push(await startSimulatedNode(index, keys[index]!, listens[index]!, bootnodes, duplicatesById));
    }
    const peerIndex = new Map(nodes.map((node) => [node.network.peerId, node.index]));
    const planned = adjacency(nodeCount, edges);
    await waitFor(() => nodes.every((node) => node.network.readyPeers().length >= planned[node.index]!.length), "every node's peers past the handshake", 60_000);
    const blockTopic = nodes[0]!.host.services.pubsub.getTopics().find(isBlockTopic)!;
    await waitFor(() => nodes.every((node) => meshSize(node, blockTopic) >= Math.min(planned[node.index]!.length, 6)), "every node's block mesh", 60_000);
    const connected = nodes.map((node) => node.network.readyPeers().map((peer) => peerIndex.get(peer.peerId)!));
    const hops = distancesFrom(0, connected);
    const setUpSeconds = (performance.now() - started) / 1000;
    const degrees = connected.map((peers) => peers.length);
    const meshSizes = nodes.map((node) => meshSize(node, blockTopic));
    console.log(`connected in ${round(setUpSeconds)} s: degree ${Math.min(...degrees)}..${Math.max(...degrees)}, block mesh ${Math.min(...meshSizes)}..${Math.max(...meshSizes)} peers, ${Math.max(...hops)} hops at most from node 0`);

    // Transfers signed before the clock starts: each of the development accounts sends one per block.
    const miner = nodes[0]!;
    const senders = findNetworkProfile(33)!.developmentAccounts.slice(0, transfersPerBlock);
    if (senders.length < transfersPerBlock) throw new Error(`at most ${senders.length} transfers a block (one per development account)`);
    const transactions: ChainTransaction[][] = [];
    for (let block = 0; block < blockCount; block++) {
      const recipient = `0x${bytesToUnprefixedHex(keccak256(new TextEncoder().encode(`recipient ${block}`))).slice(0, 40)}`;
      transactions.push(await Promise.all(senders.map((sender) => signedTransfer(miner.services, sender.seed, block, recipient, 1n))));
    }

    // The idle traffic (status refreshes, pings, gossipsub heartbeats), reported beside the run's.
    const bytesNow = () => nodes.reduce((sum, node) => sum + node.counters.bytesSent, 0);
    const idleStart = bytesNow();
    await new Promise((resolve) => setTimeout(resolve, idleWindowMs));
    const idleBytesPerSecond = ((bytesNow() - idleStart) / idleWindowMs) * 1000;

    const before = nodes.map((node) => ({ ...node.counters }));
    const requestsBefore = nodes.map((node) => structuredClone(node.network.requestCounts()));
    const cpuBefore = process.cpuUsage();
    const loopBefore = performance.eventLoopUtilization();
    let peakRss = process.memoryUsage().rss;
    const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
    const miningStarted = performance.now();
    const progress = setInterval(() => {
      const numbers = nodes.map((node) => Number(node.services.chain.head.number));
      console.log(`  ${round((performance.now() - miningStarted) / 1000)} s: heads ${Math.min(...numbers)}..${Math.max(...numbers)}, imports queued ${nodes.reduce((sum, node) => sum + node.sync.queuedMessages(), 0)}, orphans ${nodes.reduce((sum, node) => sum + node.sync.orphanCount, 0)}`);
    }, 10_000);
    const mined: Block[] = [];
    const slowestHead = () => Math.min(...nodes.map((node) => Number(node.services.chain.head.number)));
    let heldBack = 0;
    let heldMs = 0;
    for (let block = 0; block < blockCount; block++) {
      const due = miningStarted + block * blockIntervalMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (slowestHead() < block - maxLag) {
        heldBack++;
        const held = performance.now();
        await waitFor(() => slowestHead() >= block - maxLag, `every node within ${maxLag} blocks of block ${block}`, settleTimeoutMs);
        heldMs += performance.now() - held;
      }
      mined.push(await miner.services.miner.mineBlock(transactions[block]!));
    }
    const miningSeconds = (performance.now() - miningStarted) / 1000;
    const head = mined.at(-1)!;
    const headKey = bytesToUnprefixedHex(head.hash);
    try {
      await waitFor(() => nodes.every((node) => Buffer.compare(node.services.chain.head.hash, head.hash) === 0), `every node on block ${head.number}`, settleTimeoutMs);
    } catch (error) {
      const behind = nodes.filter((node) => Buffer.compare(node.services.chain.head.hash, head.hash) !== 0).map((node) => `node ${node.index} at ${node.services.chain.head.number}`);
      throw new Error(`${(error as Error).message}: ${behind.join(", ")}`);
    } finally {
      clearInterval(progress);
    }
    const windowMs = performance.now() - miningStarted;
    clearInterval(rssTimer);
    const cpu = process.cpuUsage(cpuBefore);
    const loop = performance.eventLoopUtilization(loopBefore);
    const runSeconds = windowMs / 1000;

    // Propagation by hop count: each block's time to each node's head, from node 0's.
    const hopGroups = new Map<number, { head: number[]; delivered: number[] }>();
    const byBlockLast: number[] = [];
    for (const block of mined) {
      const key = bytesToUnprefixedHex(block.hash);
      const id = gossipIdOf(block);
      const origin = miner.headAt.get(key)!;
      let last = 0;
      for (const node of nodes.slice(1)) {
        const at = node.headAt.get(key);
        if (at === undefined) throw new Error(`block ${block.number} never became node ${node.index}'s head`);
        let group = hopGroups.get(hops[node.index]!);
        if (group === undefined) hopGroups.set(hops[node.index]!, (group = { head: [], delivered: [] }));
        group.head.push(at - origin);
        last = Math.max(last, at - origin);
        const delivered = node.deliveredAt.get(id);
        if (delivered !== undefined) group.delivered.push(delivered - origin);
      }
      byBlockLast.push(last);
    }

    const others = nodes.length - 1;
    const sent = nodes.map((node, index) => node.counters.bytesSent - before[index]!.bytesSent);
    const bytesPerNodePerBlock = sent.map((bytes) => bytes / blockCount);
    const relayers = bytesPerNodePerBlock.slice(1);
    const blockMessagesSent = nodes.reduce((sum, node, index) => sum + node.counters.blockMessagesSent - before[index]!.blockMessagesSent, 0);
    const blockMessageBytes = nodes.reduce((sum, node, index) => sum + node.counters.blockMessageBytesSent - before[index]!.blockMessageBytesSent, 0);
    const duplicates = nodes.reduce((sum, node, index) => sum + node.counters.blockDuplicates - before[index]!.blockDuplicates, 0);
    const duplicatesPerBlock = mined.map((block) => duplicatesById.get(gossipIdOf(block)) ?? 0);
    const firstDeliveries = mined.reduce((sum, block) => sum + nodes.slice(1).filter((node) => node.deliveredAt.has(gossipIdOf(block))).length, 0);
    const requestsSent = nodes.reduce((sum, node, index) => {
      const counts = node.network.requestCounts();
      const count = (record: Record<string, number>, old: Record<string, number>) => Object.entries(record).reduce((total, [name, value]) => total + value - (old[name] ?? 0), 0);
      return sum + count(counts.answered, requestsBefore[index]!.answered) + count(counts.failed, requestsBefore[index]!.failed);
    }, 0);
    const blockBytes = mined.reduce((sum, block) => sum + block.encode().byteLength, 0) / blockCount;

    // Every node on the same head: hash, state root.
    const stateRoot = bytesToUnprefixedHex(miner.services.chain.head.header.fields.stateRoot);
    for (const node of nodes) {
      if (bytesToUnprefixedHex(node.services.chain.head.hash) !== headKey || bytesToUnprefixedHex(node.services.chain.head.header.fields.stateRoot) !== stateRoot) throw new Error(`node ${node.index} is not on node 0's head`);
    }

    console.log(`\nmined in ${round(miningSeconds)} s (${round(blockIntervalMs)} ms a block planned): ${heldBack} blocks waited ${round(heldMs / 1000)} s in all for the slowest node to come within ${maxLag} blocks`);
    console.log(`all ${nodes.length} nodes on block ${head.number} (${headKey.slice(0, 12)}...) ${round(runSeconds)} s after the first block; blocks of ${round(blockBytes, 0)} bytes`);
    console.log("\npropagation by hop count from node 0 (ms from node 0's head to the node's head; gossip: to gossipsub's delivery, when the node relays it)");
    console.log("hops  nodes  samples   head p50   head p99   head max   gossip p50   gossip p99");
    const hopRows: Record<string, number | string> = {};
    for (const hop of [...hopGroups.keys()].sort((a, b) => a - b)) {
      const group = hopGroups.get(hop)!;
      const headFigures = summary(group.head);
      const gossipFigures = summary(group.delivered);
      const nodesAtHop = hops.filter((distance) => distance === hop).length;
      console.log(
        `${String(hop).padStart(4)}  ${String(nodesAtHop).padStart(5)}  ${String(headFigures.count).padStart(7)}  ${round(headFigures.median).toFixed(1).padStart(9)}  ${round(headFigures.p99).toFixed(1).padStart(9)}  ${round(headFigures.max).toFixed(1).padStart(9)}  ${round(gossipFigures.median).toFixed(1).padStart(11)}  ${round(gossipFigures.p99).toFixed(1).padStart(11)}`,
      );
      recordResult(`propagation, ${hop} hop${hop === 1 ? "" : "s"}: median`, round(headFigures.median), "ms", [], { nodes: nodesAtHop, samples: headFigures.count, p99Ms: round(headFigures.p99), maxMs: round(headFigures.max), gossipMedianMs: round(gossipFigures.median), gossipP99Ms: round(gossipFigures.p99) });
      hopRows[`hop${hop}`] = nodesAtHop;
    }
    const allNodes = summary(byBlockLast);
    console.log(`to the last node: median ${round(allNodes.median)} ms, p99 ${round(allNodes.p99)} ms`);
    recordResult("propagation to the last node: median", round(allNodes.median), "ms", [], { p99Ms: round(allNodes.p99), maxMs: round(allNodes.max) });

    const bytesFigures = summary(relayers);
    console.log("\nper node per block");
    console.log(`bytes sent (transport, everything over the run): median ${round(bytesFigures.median, 0)}, p99 ${round(bytesFigures.p99, 0)}, mean ${round(relayers.reduce((a, b) => a + b, 0) / relayers.length, 0)}; node 0 (the miner) ${round(bytesPerNodePerBlock[0]!, 0)}; idle ${round(idleBytesPerSecond / nodes.length, 0)} bytes/s a node`);
    console.log(`block messages sent: ${round(blockMessagesSent / blockCount / nodes.length, 2)} (${round(blockMessageBytes / blockCount / nodes.length, 0)} bytes of block data, ${round((blockMessageBytes / sent.reduce((a, b) => a + b, 0)) * 100, 0)} % of the bytes sent)`);
    const duplicateFigures = summary(duplicatesPerBlock);
    console.log(`duplicate deliveries: ${round(duplicates / blockCount / others, 2)} a receiving node; per block (all nodes): median ${duplicateFigures.median}, p99 ${duplicateFigures.p99}`);
    console.log(`check: block messages sent ${blockMessagesSent} = first deliveries ${firstDeliveries} + duplicates ${duplicates} + other ${blockMessagesSent - firstDeliveries - duplicates}`);
    console.log(`requests between peers during the run: ${requestsSent} (blocks fetched when a status came before the gossip)`);
    console.log(`\nprocess: CPU ${round((cpu.user + cpu.system) / 1000 / windowMs, 2)} cores over the run, event loop ${round(loop.utilization * 100, 0)} % busy, peak RSS ${round(peakRss / 2 ** 20, 0)} MB; whole bench ${round((performance.now() - started) / 1000)} s`);

    recordResult("bytes sent per node per block (median of relaying nodes)", round(bytesFigures.median, 0), "bytes", [], {
      p99: round(bytesFigures.p99, 0),
      miner: round(bytesPerNodePerBlock[0]!, 0),
      blockBytes: round(blockBytes, 0),
      blockMessagesPerNodePerBlock: round(blockMessagesSent / blockCount / nodes.length, 2),
      blockDataBytesPerNodePerBlock: round(blockMessageBytes / blockCount / nodes.length, 0),
      idleBytesPerSecondPerNode: round(idleBytesPerSecond / nodes.length, 0),
    });
    recordResult("duplicate deliveries per block (all nodes): median", duplicateFigures.median, "messages", [], { p99: duplicateFigures.p99, perReceivingNode: round(duplicates / blockCount / others, 2), blockMessagesSent, firstDeliveries, requestsSent });
    const costs = await soloCosts(mined);
    const decodeCost = summary(costs.decode);
    const importCost = summary(costs.import);
    console.log(`one node alone, CPU per block: decoding (senders recovered) median ${round(decodeCost.median, 2)} ms, importing median ${round(importCost.median, 2)} ms (p99 ${round(importCost.p99, 2)} ms)`);
    recordResult("one node's CPU per block: import (median)", round(importCost.median, 2), "ms", [], { p99Ms: round(importCost.p99, 2), decodeMedianMs: round(decodeCost.median, 2), decodeP99Ms: round(decodeCost.p99, 2) });

    // The same topology model at sizes this process cannot hold: hop counts only.
    console.log("\nhop counts of the topology model (graph only, not run): nodes, degree -> mean, median, p99, max");
    const projectionRandom = seededRandom(seed + 1);
    const measuredMean = hops.slice(1).reduce((a, b) => a + b, 0) / others;
    console.log(`${String(nodeCount).padStart(6)}  ${degree}  measured: mean ${round(measuredMean, 2)}, max ${Math.max(...hops)}`);
    for (const [n, d] of [[nodeCount, degree], [300, 4], [3_000, 4], [300, 6], [3_000, 6], [30_000, 6]] as const) {
      const projected = projectedHops(n, d, n >= 3_000 ? 3 : 20, projectionRandom);
      console.log(`${String(n).padStart(6)}  ${d}  mean ${round(projected.mean, 2)}, median ${projected.median}, p99 ${projected.p99}, max ${projected.max}${projected.unreached > 0 ? `, ${projected.unreached} not reached` : ""}`);
      recordResult(`topology model: ${n} nodes of degree ${d}, mean hops`, round(projected.mean, 2), "hops", [], { median: projected.median, p99: projected.p99, max: projected.max, unreached: projected.unreached });
    }

    recordResult("network", nodes.length, "nodes", [], {
      degree,
      seed,
      blocks: blockCount,
      transfersPerBlock,
      blockIntervalMs,
      maxLag,
      blocksHeldBack: heldBack,
      heldBackSeconds: round(heldMs / 1000),
      miningSeconds: round(miningSeconds),
      maxHops: Math.max(...hops),
      meanHops: round(hops.slice(1).reduce((a, b) => a + b, 0) / others, 2),
      ...hopRows,
      cpuCores: round((cpu.user + cpu.system) / 1000 / windowMs, 2),
      eventLoopBusyPercent: round(loop.utilization * 100, 0),
      peakRssMb: round(peakRss / 2 ** 20, 0),
      setUpSeconds: round(setUpSeconds),
      runSeconds: round(runSeconds),
    });
    writeResults("network-simulation");
  } finally {
    await Promise.all(nodes.map((node) => node.stop().catch(() => undefined)));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
