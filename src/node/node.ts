// The composition root: builds the modules in dependency order, starts them bottom-up and stops
// them top-down.
import { randomBytes } from "node:crypto";
import { openRpcDocumentJson } from "../../generated/discover.js";
import { findNetworkProfile, type NetworkProfile } from "../chain/networks.js";
import { codeCacheUse } from "../common/codeCache.js";
import { keccak256 } from "../common/crypto.js";
import { bytesToHex, hexToBytes } from "../common/hex.js";
import type { Logger } from "../common/logger.js";
import { clientVersionString } from "../common/version.js";
import { isPrivateKey } from "../common/signatures.js";
import { createStandaloneNetwork, type P2pOptions, type PeerNetwork } from "../p2p/index.js";
import type { PeerToPeerNetwork } from "../p2p/network.js";
import type { SyncProgress } from "../sync/longSync.js";
import type { SyncManager, SyncOptions } from "../sync/syncManager.js";
import { createDispatcher, createRpcMethods, createRpcServer, ModuleSelectionError, resolveEnabledModules, SubscriptionHub } from "../rpc/index.js";
import { ChainOpeningError, openChainServices, type ChainServices, type NodeKeyStore } from "./chainServices.js";
import { keyExportAllowedOn, reportKeyExposure, unlockAllowedOn } from "./keyExposure.js";
import { startMetricsEndpoint, type MetricsEndpoint } from "./metrics.js";
import { afterStartingSync, chainStatusSource, createSyncManager } from "./peerToPeer.js";
import type { NodeOptions } from "./options.js";

export interface RunningNode {
  /** http://host:port of the JSON-RPC endpoint. */
  readonly url: string;
  readonly network: NetworkProfile;
  readonly enabledModules: ReadonlySet<string>;
  /** Where the chain is kept: a directory, or "memory". */
  readonly location: string;
  /** The Prometheus endpoint's URL, when --metrics-port is given. */
  readonly metricsUrl: string | undefined;
  /** The peer-to-peer network when --p2p is on. */
  readonly peerNetwork: PeerToPeerNetwork | undefined;
  /** Calls `listener` as a long sync from peers goes, with undefined when it ends (never without --p2p). */
  onSyncProgress(listener: (progress: SyncProgress | undefined) => void): () => void;
  /** The network's development accounts with their keys (public knowledge), balances at the head, and whether the node holds them unlocked. */
  developmentAccounts(): Promise<DevelopmentAccountState[]>;
  stop(): Promise<void>;
}

export interface DevelopmentAccountState {
  /** 0x-prefixed, lower case. */
  readonly address: string;
  /** 0x-prefixed: keccak-256 of the account's seed, as the reference's regtest accounts. */
  readonly privateKey: string;
  readonly balance: bigint;
  readonly unlocked: boolean;
}

/** Options that cannot make a node; the message says which and why. */
export class NodeConfigurationError extends Error {}

function selectModules(options: NodeOptions): Set<string> {
  try {
    return resolveEnabledModules(options.rpc.modules, options.rpc.host);
  } catch (error) {
    if (error instanceof ModuleSelectionError) throw new NodeConfigurationError(error.message);
    throw error;
  }
}

/** The node key: the one given, else the stored one, else a new one kept in the store (a chain in memory keeps it for its life). */
async function nodeKeyFor(options: P2pOptions, keys: NodeKeyStore): Promise<Uint8Array> {
  if (options.nodeKey !== undefined) return options.nodeKey;
  const stored = keys.read();
  if (stored !== undefined && isPrivateKey(stored)) return stored;
  let key: Uint8Array;
  do key = new Uint8Array(randomBytes(32));
  while (!isPrivateKey(key));
  await keys.write(key);
  return key;
}

/** What the RPC layer reads of the peers: the network's, with the blocks the sync has waiting for the importer in the inbound queue. */
function withSyncQueue({ network, sync }: PeerToPeer): PeerNetwork {
  return {
    isListening: () => network.isListening(),
    connectedPeers: () => network.connectedPeers(),
    inboundQueueSize: () => network.inboundQueueSize() + sync.queuedMessages(),
  };
}

/** The network and the sync that follows its peers. */
interface PeerToPeer {
  readonly network: PeerToPeerNetwork;
  readonly sync: SyncManager;
  stop(): Promise<void>;
}

type PeerNetworkModule = typeof import("../p2p/network.js");

/** Starts the libp2p network (`module`, the network's code, loaded only for a node with --p2p) and the sync on it. */
async function startPeerToPeer(module: Promise<PeerNetworkModule>, options: P2pOptions, syncOptions: Partial<SyncOptions> | undefined, network: NetworkProfile, services: ChainServices, log: Logger): Promise<PeerToPeer> {
  const privateKey = await nodeKeyFor(options, services.nodeKeyStore);
  const { startPeerNetwork, PeerNetworkConfigurationError, InvalidRequestError } = await module;
  const p2pLog = log.child({ module: "p2p" });
  try {
    const started = await startPeerNetwork({ options, privateKey, status: chainStatusSource(network, services.chain, p2pLog), log: p2pLog, userAgent: clientVersionString() });
    const sync = createSyncManager(started, services, log, (reason) => new InvalidRequestError(reason), syncOptions);
    try {
      await sync.start();
    } catch (error) {
      await started.stop();
      throw error;
    }
    p2pLog.info({ peerId: started.peerId, nodeId: started.nodeId, multiaddrs: started.multiaddrs(), bootnodes: options.bootnodes.length, maxPeers: options.maxPeers, codeCache: codeCacheUse("p2p") }, "p2p listening");
    return {
      network: started,
      sync,
      async stop() {
        await sync.stop();
        await started.stop();
      },
    };
  } catch (error) {
    if (error instanceof PeerNetworkConfigurationError) throw new NodeConfigurationError(error.message);
    // libp2p reports a listener that failed (a port in use, an address not on this machine) as UnsupportedListenAddressesError, the system's error inside its message.
    if ((error as Error).name === "UnsupportedListenAddressesError") {
      const reason = /Error: (listen [^\n]*)/.exec((error as Error).message)?.[1] ?? (error as Error).message.split("\n")[0];
      throw new NodeConfigurationError(`the peer-to-peer port cannot be opened on ${options.host}:${options.port}: ${reason}`);
    }
    throw error;
  }
}

export async function startNode(options: NodeOptions, log: Logger): Promise<RunningNode> {
  const network = findNetworkProfile(options.networkId);
  if (network === undefined) throw new NodeConfigurationError(`unknown network ${options.networkId}`);
  const enabledModules = selectModules(options);

  // The network's code loads while the chain opens (its files read on other threads meanwhile):
  // loaded after, it delayed a syncing node's first peer by its load. Awaited by startPeerToPeer,
  // unless the chain cannot open.
  const peerNetworkModule = options.p2p === undefined ? undefined : import("../p2p/network.js");
  peerNetworkModule?.catch(() => undefined);
  let services;
  try {
    services = await openChainServices(network, options.storage, options.chain, log, { unlockAllowed: unlockAllowedOn(options.rpc) });
  } catch (error) {
    if (error instanceof ChainOpeningError) throw new NodeConfigurationError(error.message);
    throw error;
  }
  let peerToPeer: PeerToPeer | undefined;
  if (options.p2p !== undefined && peerNetworkModule !== undefined) {
    try {
      peerToPeer = await startPeerToPeer(peerNetworkModule, options.p2p, options.sync, network, services, log);
    } catch (error) {
      await services.close();
      throw error;
    }
  }
  const peerNetwork = peerToPeer?.network;
  const peers: PeerNetwork = peerToPeer === undefined ? createStandaloneNetwork() : withSyncQueue(peerToPeer);
  let metrics: MetricsEndpoint | undefined;
  if (options.metrics !== undefined) {
    try {
      metrics = await startMetricsEndpoint(options.metrics, services, peers, peerToPeer, log.child({ module: "metrics" }));
    } catch (error) {
      await peerToPeer?.stop();
      await services.close();
      throw new NodeConfigurationError(`the metrics endpoint cannot listen on ${options.metrics.host}:${options.metrics.port}: ${(error as Error).message}`);
    }
  }
  const { handlers, prepareBatch } = createRpcMethods({
    clientVersion: clientVersionString(),
    network,
    peers,
    responseLimitBytes: options.rpc.responseLimitBytes,
    traceAnswerLimitBytes: options.rpc.traceAnswerLimitBytes,
    keyExportAllowed: keyExportAllowedOn(options.rpc.host),
    requestLimits: options.rpc,
    ...services,
    syncProgress: () => peerToPeer?.sync.syncProgress(),
  });
  const dispatcher = createDispatcher({
    handlers,
    enabledModules,
    batchLimit: options.rpc.batchLimit,
    responseLimitBytes: options.rpc.responseLimitBytes,
    jsonShapeLimits: { maxDepth: options.rpc.jsonDepthLimit, maxValues: options.rpc.jsonValueLimit },
    batchTimeLimitMs: options.chain.calls.timeLimitMs,
    prepareBatch,
    observeCall: metrics?.observeCall,
    discoverDocumentJson: openRpcDocumentJson,
    log: log.child({ module: "rpc" }),
  });
  const subscriptionsLog = log.child({ module: "subscriptions" });
  const subscriptions = new SubscriptionHub(services.chain, services.pool, {
    maxSubscriptionsPerConnection: options.rpc.wsMaxSubscriptions,
    baseFeePerGas: services.typedTransactions,
    reportError: (error) => subscriptionsLog.error({ err: error }, "delivering notifications failed"),
  });
  const server = createRpcServer(options.rpc, dispatcher, log.child({ module: "http" }), subscriptions);
  let address;
  try {
    address = await server.start();
  } catch (error) {
    subscriptions.close();
    await metrics?.close();
    await peerToPeer?.stop();
    await services.close();
    throw error;
  }
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  log.info({ url, network: network.name, chainId: Number(network.chainId), modules: [...enabledModules], codeCache: codeCacheUse() }, "JSON-RPC server listening");
  reportKeyExposure(options.rpc, address.port, services.wallet, log);
  // The call worker starts now rather than with the first call's burst, and warms its call path up;
  // with bootnodes, once the long sync the node may begin on their status is over (calls that come
  // meanwhile run on the main thread, or start the worker as a burst does).
  const warmCallWorker = () => services.callWorkers?.startAndWarm(() => services.chain.head);
  let cancelWarmUp: (() => void) | undefined;
  if (peerToPeer !== undefined && (options.p2p?.bootnodes.length ?? 0) > 0) cancelWarmUp = afterStartingSync(peerToPeer.network, peerToPeer.sync, warmCallWorker);
  else warmCallWorker();

  return {
    url,
    network,
    enabledModules,
    location: services.location,
    metricsUrl: metrics?.url,
    peerNetwork,
    onSyncProgress: (listener) => peerToPeer?.sync.subscribeProgress(listener) ?? (() => undefined),
    async developmentAccounts() {
      const root = services.chain.head.header.fields.stateRoot;
      return Promise.all(
        network.developmentAccounts.map(async ({ seed, address }) => {
          const addressBytes = hexToBytes(`0x${address}`);
          const account = await services.state.readAccount(root, addressBytes);
          return { address: `0x${address}`, privateKey: bytesToHex(keccak256(new TextEncoder().encode(seed))), balance: account?.balance ?? 0n, unlocked: services.wallet.isUnlocked(addressBytes) };
        }),
      );
    },
    async stop() {
      cancelWarmUp?.();
      await server.stop();
      subscriptions.close();
      await metrics?.close();
      await peerToPeer?.stop();
      await services.close();
      log.info("node stopped");
    },
  };
}
