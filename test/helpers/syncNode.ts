// A whole node's peer-to-peer side in one process: a chain in memory, or one the test opened
// (mining off; the test mines with miner.mineBlock), the libp2p network over the memory transport and the sync on it, wired by
// the node's own pieces (node/peerToPeer.ts).
import { findNetworkProfile } from "../../src/chain/networks.js";
import { createLogger, type Logger } from "../../src/common/logger.js";
import type { ChainServices } from "../../src/node/chainServices.js";
import type { TransportFactory } from "../../src/p2p/libp2p.js";
import { InvalidRequestError, startPeerNetwork, type NetworkTimings, type PeerToPeerNetwork } from "../../src/p2p/network.js";
import { chainStatusSource, createSyncManager } from "../../src/node/peerToPeer.js";
import type { SyncManager, SyncOptions } from "../../src/sync/syncManager.js";
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
  /** The chain, opened by the caller (on a data dir, say); the node closes it when it stops. A new chain in memory when left out. */
  services?: ChainServices;
}

/** A regtest node in memory on the memory transport, its sync started. */
export async function startSyncNode(settings: SyncNodeSettings = {}): Promise<SyncNode> {
  const profile = findNetworkProfile(33)!;
  const log = settings.log ?? createLogger("silent");
  const services = settings.services ?? (await openTestChain());
  try {
    const p2pLog = log.child({ module: "p2p" });
    const listen = settings.listen ?? memoryAddress();
    const network = await startPeerNetwork({
      options: { host: "127.0.0.1", port: 0, bootnodes: settings.bootnodes ?? [], maxPeers: 30, minPeers: 1, nodeKey: undefined },
      privateKey: settings.privateKey ?? newNodeKey(),
      status: chainStatusSource(profile, services.chain, p2pLog),
      log: p2pLog,
      userAgent: "chain-node-test",
      timings: settings.timings,
      transport: { factory: settings.transport ?? memoryTransport(), listen: [listen] },
    });
    const sync = createSyncManager(network, services, log, (reason) => new InvalidRequestError(reason), settings.sync);
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
