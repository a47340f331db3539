// Starts a real node on a free loopback port, with a typed client and captured logs.
import { Writable } from "node:stream";
import { RpcClient } from "../../generated/client.js";
import { createLogger, type LogLevel } from "../../src/common/logger.js";
import {
  defaultNodeOptions,
  findNetworkProfile,
  openChainServices,
  startNode,
  type ChainOptions,
  type ChainServices,
  type NodeOptions,
  type P2pOptions,
  type RunningNode,
} from "../../src/node/index.js";
import { createDispatcher, createRpcMethods, createRpcServer, SubscriptionHub, type RpcHandlerSet, type RpcOptions } from "../../src/rpc/index.js";
import { createStandaloneNetwork } from "../../src/p2p/index.js";
import { openRpcDocumentJson } from "../../generated/discover.js";
import { rpcNamespaces } from "../../generated/methods.js";

export interface TestNode {
  readonly node: RunningNode;
  readonly url: string;
  readonly client: RpcClient;
  /** Log records written so far (parsed pino lines). */
  readonly logs: Record<string, unknown>[];
  stop(): Promise<void>;
}

export interface TestNodeOverrides {
  networkId?: number;
  rpc?: Partial<RpcOptions>;
  chain?: Partial<ChainOptions>;
  /** A LevelDB directory; default: an in-memory chain. */
  dataDir?: string;
  logLevel?: LogLevel;
  metrics?: NodeOptions["metrics"];
  /** The peer-to-peer network; default: off (a lone node). */
  p2p?: P2pOptions;
  sync?: NodeOptions["sync"];
}

/** A writable that keeps pino's JSON lines. */
export function createLogCapture(): { stream: Writable; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim() !== "") records.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { stream, records };
}

export async function startTestNode(overrides: TestNodeOverrides = {}): Promise<TestNode> {
  const options: NodeOptions = {
    ...defaultNodeOptions,
    networkId: overrides.networkId ?? defaultNodeOptions.networkId,
    logLevel: overrides.logLevel ?? "info",
    storage: overrides.dataDir === undefined ? { dataDir: undefined, inMemory: true } : { dataDir: overrides.dataDir, inMemory: false },
    rpc: { ...defaultNodeOptions.rpc, port: 0, ...overrides.rpc },
    chain: { ...defaultNodeOptions.chain, ...overrides.chain },
    metrics: overrides.metrics,
    p2p: overrides.p2p,
    sync: overrides.sync,
  };
  const capture = createLogCapture();
  const node = await startNode(options, createLogger(options.logLevel, capture.stream));
  return {
    node,
    url: node.url,
    client: new RpcClient(node.url, { timeoutMs: 10_000 }),
    logs: capture.records,
    stop: () => node.stop(),
  };
}

/**
 * A JSON-RPC server over the real transport and dispatcher, on in-memory chain services the test
 * can reach, with some handlers replaced.
 */
export async function startServerWithHandlers(
  overrides: Partial<RpcHandlerSet>,
  options: { rpc?: Partial<RpcOptions>; chain?: Partial<ChainOptions> } = {},
): Promise<{ url: string; logs: Record<string, unknown>[]; services: ChainServices; subscriptions: SubscriptionHub; stop(): Promise<void> }> {
  const rpc: RpcOptions = { ...defaultNodeOptions.rpc, port: 0, ...options.rpc };
  const capture = createLogCapture();
  const log = createLogger("info", capture.stream);
  const network = findNetworkProfile(33)!;
  const services = await openChainServices(network, { dataDir: undefined, inMemory: true }, { ...defaultNodeOptions.chain, ...options.chain }, log);
  const methods = createRpcMethods({ clientVersion: "test", network, peers: createStandaloneNetwork(), responseLimitBytes: rpc.responseLimitBytes, keyExportAllowed: true, requestLimits: rpc, ...services });
  const handlers: RpcHandlerSet = { ...methods.handlers, ...overrides };
  const dispatcher = createDispatcher({
    handlers,
    enabledModules: new Set(rpcNamespaces),
    batchLimit: rpc.batchLimit,
    responseLimitBytes: rpc.responseLimitBytes,
    jsonShapeLimits: { maxDepth: rpc.jsonDepthLimit, maxValues: rpc.jsonValueLimit },
    batchTimeLimitMs: { ...defaultNodeOptions.chain, ...options.chain }.calls.timeLimitMs,
    prepareBatch: methods.prepareBatch,
    discoverDocumentJson: openRpcDocumentJson,
    log,
  });
  const subscriptions = new SubscriptionHub(services.chain, services.pool, { maxSubscriptionsPerConnection: rpc.wsMaxSubscriptions, reportError: (error) => log.error({ err: error }, "delivering notifications failed") });
  const server = createRpcServer(rpc, dispatcher, log, subscriptions);
  const address = await server.start();
  return {
    url: `http://127.0.0.1:${address.port}`,
    logs: capture.records,
    services,
    subscriptions,
    async stop() {
      await server.stop();
      subscriptions.close();
      await services.close();
    },
  };
}
