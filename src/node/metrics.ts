// The operators' Prometheus endpoint (--metrics-port; off by default): GET /metrics on its own
// loopback-by-default HTTP server, apart from the JSON-RPC port. prom-client is loaded only when
// the endpoint is on, so a dev node pays nothing for it.
//
// Gauges are read when Prometheus scrapes (head, peers, sync, pool); counters follow the chain's
// events and the importer's outcomes; JSON-RPC calls are timed by the dispatcher (observeCall).
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import type { BlockWithReceipts } from "../chain/events.js";
import type { Logger } from "../common/logger.js";
import type { PeerNetwork } from "../p2p/index.js";
import type { PeerToPeerNetwork } from "../p2p/interface.js";
import type { SyncManager } from "../sync/syncManager.js";
import type { CallObserver } from "../rpc/index.js";
import type { ChainServices } from "./chainServices.js";

export interface MetricsOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
}

export interface MetricsEndpoint {
  /** http://host:port/metrics */
  readonly url: string;
  /** For the dispatcher: times each JSON-RPC call. */
  readonly observeCall: CallObserver;
  close(): Promise<void>;
}

/** Seconds: a cached read answers in tens of microseconds, a long trace in seconds. */
const callDurationBuckets = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What the endpoint reads of the sync and its network when --p2p is on. */
export interface PeerToPeerMetricsSource {
  readonly network: Pick<PeerToPeerNetwork, "requestCounts">;
  readonly sync: Pick<SyncManager, "syncProgress" | "counters" | "orphanCount">;
}

export async function startMetricsEndpoint(options: MetricsOptions, services: ChainServices, peers: PeerNetwork, peerToPeer: PeerToPeerMetricsSource | undefined, log: Logger): Promise<MetricsEndpoint> {
  // required, not imported: the command's bundle runs without a dynamic-import hook, and keeps
  // prom-client outside (Makefile ON_REQUEST_PACKAGES).
  const { Registry, Gauge, Counter, Histogram, collectDefaultMetrics } = createRequire(import.meta.url)("prom-client") as typeof import("prom-client");
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "chain_node_" });
  const { chain, pool, importer } = services;

  new Gauge({ name: "chain_node_head_number", help: "Number of the best block.", registers: [registry], collect() {
    this.set(Number(chain.head.number));
  } });
  new Gauge({ name: "chain_node_peers", help: "Connected peers.", registers: [registry], collect() {
    this.set(peers.connectedPeers().length);
  } });
  new Gauge({ name: "chain_node_peer_messages_queued", help: "Peer messages received and not yet processed.", registers: [registry], collect() {
    this.set(peers.inboundQueueSize());
  } });
  // A lone node never syncs.
  new Gauge({ name: "chain_node_syncing", help: "1 during a long sync, else 0.", registers: [registry], collect() {
    this.set(peerToPeer?.sync.syncProgress() === undefined ? 0 : 1);
  } });
  new Gauge({ name: "chain_node_sync_highest_block", help: "The highest block a long sync is heading for (the head when none runs).", registers: [registry], collect() {
    this.set(Number(peerToPeer?.sync.syncProgress()?.highestBlock ?? chain.head.number));
  } });
  new Gauge({ name: "chain_node_orphan_blocks", help: "Peers' blocks held until their parents arrive.", registers: [registry], collect() {
    this.set(peerToPeer?.sync.orphanCount ?? 0);
  } });
  // The sync and the network keep their own counts: read at each scrape.
  new Counter({ name: "chain_node_gossip_messages_total", help: "Gossip messages received, by topic and verdict (accept: relayed and taken; ignore; reject: the sender blamed).", labelNames: ["topic", "verdict"] as const, registers: [registry], collect() {
    this.reset();
    if (peerToPeer === undefined) return;
    for (const [topic, counts] of [["block", peerToPeer.sync.counters.gossipBlocks], ["tx", peerToPeer.sync.counters.gossipTransactions]] as const) for (const [verdict, count] of Object.entries(counts)) this.inc({ topic, verdict }, count);
  } });
  new Counter({ name: "chain_node_gossip_published_total", help: "Blocks and transactions this node published.", labelNames: ["topic"] as const, registers: [registry], collect() {
    this.reset();
    if (peerToPeer === undefined) return;
    this.inc({ topic: "block" }, peerToPeer.sync.counters.blocksPublished);
    this.inc({ topic: "tx" }, peerToPeer.sync.counters.transactionsPublished);
  } });
  new Counter({ name: "chain_node_peer_requests_total", help: "Request/response exchanges with peers, by protocol and outcome (served: for a peer; answered or failed: sent to one).", labelNames: ["protocol", "outcome"] as const, registers: [registry], collect() {
    this.reset();
    if (peerToPeer === undefined) return;
    const counts = peerToPeer.network.requestCounts();
    for (const outcome of ["served", "answered", "failed"] as const) for (const [protocol, count] of Object.entries(counts[outcome])) this.inc({ protocol, outcome }, count);
  } });
  new Gauge({ name: "chain_node_txpool_transactions", help: "Transactions in the pool, by state.", labelNames: ["state"] as const, registers: [registry], collect() {
    this.set({ state: "pending" }, pool.pending().length);
    this.set({ state: "queued" }, pool.queued().length);
  } });

  const imported = new Counter({ name: "chain_node_blocks_imported_total", help: "Blocks handed to the importer, by source and outcome (IMPORTED_BEST, INVALID_BLOCK...).", labelNames: ["source", "result"] as const, registers: [registry] });
  const unsubscribeImports = importer.subscribeOutcomes((outcome, source) => imported.inc({ source, result: outcome.status }));
  const headChanges = new Counter({ name: "chain_node_head_blocks_total", help: "Blocks that joined or left the best chain (mined, imported, reorganised, reverted).", labelNames: ["change"] as const, registers: [registry] });
  const unsubscribeHead = chain.subscribeHead(
    {
      blocksAdded: (blocks: readonly BlockWithReceipts[]) => headChanges.inc({ change: "added" }, blocks.length),
      blocksRemoved: (blocks: readonly BlockWithReceipts[]) => headChanges.inc({ change: "removed" }, blocks.length),
    },
    (error) => log.error({ err: error }, "metrics: following the chain failed"),
  );

  const callSeconds = new Histogram({ name: "chain_node_jsonrpc_call_seconds", help: "Time from a JSON-RPC call's parsing to its answer, by method.", labelNames: ["method"] as const, buckets: callDurationBuckets, registers: [registry] });
  const callErrors = new Counter({ name: "chain_node_jsonrpc_call_errors_total", help: "JSON-RPC calls answered with an error, by method and code.", labelNames: ["method", "code"] as const, registers: [registry] });
  const observeCall: CallObserver = (method, seconds, errorCode) => {
    callSeconds.observe({ method }, seconds);
    if (errorCode !== undefined) callErrors.inc({ method, code: String(errorCode) });
  };

  const server: Server = createServer((request, response) => {
    if (request.method !== "GET" || (request.url ?? "").split("?")[0] !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found: the metrics are at GET /metrics\n");
      return;
    }
    registry
      .metrics()
      .then((text) => response.writeHead(200, { "content-type": registry.contentType }).end(text))
      .catch((error: unknown) => {
        log.error({ err: error }, "metrics: collecting failed");
        response.writeHead(500, { "content-type": "text/plain" }).end("collecting the metrics failed\n");
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}/metrics`;
  log.info({ url }, "metrics endpoint listening");
  return {
    url,
    observeCall,
    async close() {
      unsubscribeImports();
      unsubscribeHead();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
