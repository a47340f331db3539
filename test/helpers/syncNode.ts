// A whole node's peer-to-peer side in one process: a chain in memory (mining off; the test mines
// with miner.mineBlock), the libp2p network over the memory transport and the sync on it, wired as
// node/node.ts's startPeerToPeer wires them.
import type { NetworkProfile } from "../../src/chain/networks.js";
import { findNetworkProfile } from "../../src/chain/networks.js";
import { createLogger, type Logger } from "../../src/common/logger.js";
import type { ChainServices } from "../../src/node/chainServices.js";
import type { StatusSource } from "../../src/p2p/interface.js";
import type { TransportFactory } from "../../src/p2p/libp2p.js";
import { InvalidRequestError, startPeerNetwork, type NetworkTimings, type PeerToPeerNetwork } from "../../src/p2p/network.js";
import { SyncManager, type SyncOptions } from "../../src/sync/syncManager.js";
import { openTestChain } from "./chainPair.js";
import { memoryAddress, memoryTransport, newNodeKey } from "./p2p.js";

export interface SyncNode {
  readonly services: ChainServices;
  readonly network: PeerToPeerNetwork;
  readonly sync: SyncManager;
  /** The address others dial: /memory/<name>/p2p/<peer id>. */
  readonly address: string;
  stop(): Promise<void>;
}

export interface SyncNodeSettings {
  /** The node key; a new one when left out. */
  privateKey?: Uint8Array;
  /** The /memory/ listen address; a new one when left out. */
  listen?: string;
  bootnodes?: string[];
  /** The transport; @libp2p/memory's when left out. */
  transport?: TransportFactory;
  timings?: Partial<NetworkTimings>;
  sync?: Partial<SyncOptions>;
  log?: Logger;
}

/** The chain's status as peers see it (node/node.ts chainStatusSource). */
export function chainStatusSource(network: NetworkProfile, services: ChainServices, log: Logger): StatusSource {
  const { chain } = services;
  return {
    current: () => ({
      networkId: network.p2pNetworkId,
      chainId: network.chainId,
      genesisHash: chain.genesis.hash,
      bestNumber: chain.head.number,
      bestHash: chain.head.hash,
      bestParentHash: chain.head.header.fields.parentHash,
      totalDifficulty: chain.headWeight,
    }),
    subscribe: (changed) => chain.subscribeHead({ blocksAdded: changed, blocksRemoved: changed }, (error) => log.error({ err: error }, "telling peers of the head failed")),
  };
}

/** A regtest node in memory on the memory transport, its sync started. */
export async function startSyncNode(settings: SyncNodeSettings = {}): Promise<SyncNode> {
  const profile = findNetworkProfile(33)!;
  const log = settings.log ?? createLogger("silent");
  const services = await openTestChain();
  try {
    const p2pLog = log.child({ module: "p2p" });
    const listen = settings.listen ?? memoryAddress();
    const network = await startPeerNetwork({
      options: { host: "127.0.0.1", port: 0, bootnodes: settings.bootnodes ?? [], maxPeers: 30, minPeers: 1, nodeKey: undefined },
      privateKey: settings.privateKey ?? newNodeKey(),
      status: chainStatusSource(profile, services, p2pLog),
      log: p2pLog,
      userAgent: "chain-node-test",
      timings: settings.timings,
      transport: { factory: settings.transport ?? memoryTransport(), listen: [listen] },
    });
    // Main's SyncManager also holds the miner during a long sync (holdMining, Miner.holdForSync):
    // handed over when the miner has it, in an object the constructor takes whether it asks for it or not.
    const miner = services.miner as typeof services.miner & { holdForSync?(held: boolean): Promise<void> };
    const dependencies = {
      network,
      chain: services.chain,
      importer: services.importer,
      intake: services.intake,
      pool: services.pool,
      mineAdmitted: () => {
        if (services.miner.isAutomining) services.miner.minePending().catch((error: unknown) => p2pLog.error({ err: error }, "mining a peer's transaction failed"));
      },
      holdMining: (held: boolean) => {
        miner.holdForSync?.(held).catch((error: unknown) => p2pLog.error({ err: error }, "mining what arrived during the sync failed"));
      },
      decoding: { common: services.common, typed: services.typedTransactions },
      refuseRequest: (reason: string) => new InvalidRequestError(reason),
      log: log.child({ module: "sync" }),
      options: settings.sync,
    };
    const sync = new SyncManager(dependencies);
    try {
      await sync.start();
    } catch (error) {
      await network.stop();
      throw error;
    }
    return {
      services,
      network,
      sync,
      address: network.multiaddrs()[0]!,
      async stop() {
        await sync.stop();
        await network.stop();
        await services.close();
      },
    };
  } catch (error) {
    await services.close();
    throw error;
  }
}
