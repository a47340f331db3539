// How the node ties the peer-to-peer network to its chain: the status peers see, and the sync on
// the network (node/node.ts starts them with --p2p; test/helpers/syncNode.ts wires nodes the same
// way over the memory transport). Nothing here loads libp2p: the network is handed in.
import type { Chain } from "../chain/chain.js";
import type { NetworkProfile } from "../chain/networks.js";
import type { Logger } from "../common/logger.js";
import type { PeerToPeerNetwork, StatusSource } from "../p2p/interface.js";
import { SyncManager, type SyncOptions } from "../sync/syncManager.js";
import type { ChainServices } from "./chainServices.js";

/** The chain's status as peers see it: the head, its parent and weight, the network's identity. */
export function chainStatusSource(network: NetworkProfile, chain: Chain, log: Logger): StatusSource {
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
    subscribe: (changed) =>
      chain.subscribeHead({ blocksAdded: changed, blocksRemoved: changed }, (error) => log.error({ err: error }, "telling peers of the head failed")),
  };
}

/**
 * The sync on `network` over the node's chain services: peers' blocks through the importer, their
 * transactions through the pool's intake (mined under automine as a client's), the miner held
 * during a long sync. `refuseRequest` is the network's InvalidRequestError (its module is loaded by
 * the caller). Not started.
 */
export function createSyncManager(network: PeerToPeerNetwork, services: ChainServices, log: Logger, refuseRequest: (reason: string) => Error, options: Partial<SyncOptions> | undefined): SyncManager {
  const { miner } = services;
  const syncLog = log.child({ module: "sync" });
  return new SyncManager({
    network,
    chain: services.chain,
    importer: services.importer,
    intake: services.intake,
    pool: services.pool,
    mineAdmitted: () => {
      if (miner.isAutomining) miner.minePending().catch((error: unknown) => syncLog.error({ err: error }, "mining a peer's transaction failed"));
    },
    holdMining: (held) => {
      miner.holdForSync(held).catch((error: unknown) => syncLog.error({ err: error }, "mining what arrived during the sync failed"));
    },
    decoding: { common: services.common, typed: services.typedTransactions },
    batchChecks: services.batchChecks === undefined ? undefined : { proofs: services.batchChecks, senders: services.batchChecks, prepare: () => services.batchChecks?.prepare() },
    refuseRequest,
    log: syncLog,
    options,
  });
}

export interface AfterStartingSyncTimings {
  /** After the first peer's status: long enough for the sync to have begun a long sync on it. */
  readonly settleMs: number;
  /** Without a peer's status by then (the bootnodes not reached), `then` runs unless a long sync runs. */
  readonly limitMs: number;
}

export const defaultAfterStartingSyncTimings: AfterStartingSyncTimings = { settleMs: 250, limitMs: 5_000 };

/**
 * Runs `then` (once) when the long sync a node with bootnodes may begin as it starts is over, or
 * not to come: once a long sync ends; `settleMs` after the first peer's status when none began; at
 * `limitMs` when no peer's status came and none runs. Answers a function that cancels it (the node
 * stops). The node's call worker starts so (node/node.ts): a syncing node's first seconds are its
 * sync's, and the worker's start and warm-up took the same two cores (issue 38, a fresh node
 * syncing 10,009 blocks on a loaded machine, spawn to its 64th block imported: 1,791 ms with the
 * worker started as the server listens, 1,278 without the worker, medians of 8 alternating runs).
 */
export function afterStartingSync(network: Pick<PeerToPeerNetwork, "onPeerStatus" | "readyPeers">, sync: Pick<SyncManager, "syncProgress" | "subscribeProgress">, then: () => void, timings: AfterStartingSyncTimings = defaultAfterStartingSyncTimings): () => void {
  let done = false;
  let settle: NodeJS.Timeout | undefined;
  const finish = (run: boolean) => {
    if (done) return;
    done = true;
    clearTimeout(settle);
    clearTimeout(limit);
    unsubscribeStatus();
    unsubscribeProgress();
    if (run) then();
  };
  const unlessSyncing = () => {
    if (sync.syncProgress() === undefined) finish(true);
  };
  const settleSoon = () => {
    if (settle !== undefined) return;
    settle = setTimeout(unlessSyncing, timings.settleMs);
    settle.unref();
  };
  const unsubscribeProgress = sync.subscribeProgress((progress) => {
    if (progress === undefined) finish(true);
  });
  const unsubscribeStatus = network.onPeerStatus(settleSoon);
  const limit = setTimeout(unlessSyncing, timings.limitMs);
  limit.unref();
  // A peer's status that came before this was called.
  if (network.readyPeers().length > 0) settleSoon();
  return () => finish(false);
}
