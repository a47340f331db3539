// The composition root: builds the modules in dependency order, starts them bottom-up and stops
// them top-down.
import { openRpcDocumentJson } from "../../generated/discover.js";
import { findNetworkProfile, type NetworkProfile } from "../chain/networks.js";
import { keccak256 } from "../common/crypto.js";
import { bytesToHex, hexToBytes } from "../common/hex.js";
import type { Logger } from "../common/logger.js";
import { clientVersionString } from "../common/version.js";
import { createStandaloneNetwork } from "../p2p/index.js";
import { createDispatcher, createRpcMethods, createRpcServer, ModuleSelectionError, resolveEnabledModules, SubscriptionHub } from "../rpc/index.js";
import { ChainOpeningError, openChainServices } from "./chainServices.js";
import { keyExportAllowedOn, reportKeyExposure, unlockAllowedOn } from "./keyExposure.js";
import { startMetricsEndpoint, type MetricsEndpoint } from "./metrics.js";
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

export async function startNode(options: NodeOptions, log: Logger): Promise<RunningNode> {
  const network = findNetworkProfile(options.networkId);
  if (network === undefined) throw new NodeConfigurationError(`unknown network ${options.networkId}`);
  const enabledModules = selectModules(options);

  let services;
  try {
    services = await openChainServices(network, options.storage, options.chain, log, { unlockAllowed: unlockAllowedOn(options.rpc) });
  } catch (error) {
    if (error instanceof ChainOpeningError) throw new NodeConfigurationError(error.message);
    throw error;
  }
  const peers = createStandaloneNetwork();
  let metrics: MetricsEndpoint | undefined;
  if (options.metrics !== undefined) {
    try {
      metrics = await startMetricsEndpoint(options.metrics, services, peers, log.child({ module: "metrics" }));
    } catch (error) {
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
    await services.close();
    throw error;
  }
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  log.info({ url, network: network.name, chainId: Number(network.chainId), modules: [...enabledModules] }, "JSON-RPC server listening");
  reportKeyExposure(options.rpc, address.port, services.wallet, log);
  // The call worker starts now rather than with the first call's burst, and warms its call path up.
  services.callWorkers?.startAndWarm(() => services.chain.head);

  return {
    url,
    network,
    enabledModules,
    location: services.location,
    metricsUrl: metrics?.url,
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
      await server.stop();
      subscriptions.close();
      await metrics?.close();
      await services.close();
      log.info("node stopped");
    },
  };
}
