// What a node with peers does with their chains (network brief 6): serves their requests, relays
// blocks and transactions by gossip, follows a heavier peer block by block or by long sync, and
// holds blocks whose parents have not arrived. Everything a peer sends is untrusted: a block goes
// through the gossip checks (gossipBlockVerdict.ts) and then the one import path, a transaction
// through the pool's intake; a peer that sends an invalid one is reported and disconnected.
//   - Gossip in: a block that passes the checks is imported, and relayed (gossipsub accepts it)
//     once stored valid, never before: peers blame the sender of a block that fails execution, and
//     gossip carries no author, so a node relaying a block it had not executed would be blamed
//     for it. One whose parent is unknown is held (orphanPool.ts) and its ancestors asked of the
//     sender, at most `longSyncLimit` of them (further, a long sync finds where the branches part).
//   - Gossip out: blocks that became the head from this node's miner or a merged miner, once on
//     disk; transactions as they become pending (those from peers are relayed by gossipsub).
//   - Following: after each peer status, the heaviest peer heavier than the head is followed: long
//     sync when it is more than `longSyncLimit` ahead (eth_syncing reports it), else its best block
//     is fetched and taken as a gossiped one (its missing ancestors with it).
//   - While a long sync runs, gossip of blocks and transactions is ignored, nothing is published,
//     and the built-in miner waits (a block on the old tip would be left behind at once).
import type { Block } from "../chain/block.js";
import type { ChainHeadListener, ListenerErrorReporter } from "../chain/events.js";
import type { ChainTransaction } from "../chain/transactions.js";
import { MalformedTransactionError } from "../chain/transactions.js";
import { bytesToHex, bytesToUnprefixedHex } from "../common/hex.js";
import type { Logger } from "../common/logger.js";
import type { ImportOutcome } from "../consensus/importResult.js";
import type { RuleContext } from "../consensus/rules/parent.js";
import type { GossipVerdict, PeerRecord, PeerToPeerNetwork } from "../p2p/interface.js";
import type { TransactionIntake } from "../txpool/transactionIntake.js";
import { TransactionRejectedError } from "../txpool/transactionPool.js";
import { judgeGossipBlock } from "./gossipBlockVerdict.js";
import { defaultLongSyncOptions, LongSync, chooseSyncPeer, type LongSyncChecks, type LongSyncOptions, type SyncProgress } from "./longSync.js";
import { blockTopic, decodeBlock, MessageDecodingError, syncProtocols, transactionTopic, type SyncProtocols } from "./messages.js";
import { NetworkSyncPeer, type BlockDecoding } from "./networkPeer.js";
import { defaultOrphanPoolOptions, OrphanPool, type OrphanPoolOptions } from "./orphanPool.js";
import { RequestServer, type RefuseRequest, type ServedChain } from "./requestServer.js";
import type { PeerFault, SyncChain } from "./syncPeer.js";

/** The chain as the sync reads it. */
export interface SyncedChain extends ServedChain {
  /** The block the next one builds on (imports append to it). */
  readonly tip: Block;
  readonly tipWeight: bigint;
  getBlockByHash(hash: Uint8Array): Promise<Block | undefined>;
  hasBlock(hash: Uint8Array): boolean;
  subscribeHead(listener: ChainHeadListener, reportError: ListenerErrorReporter): () => void;
}

export interface SyncImporter {
  importBlock(block: Block, source: "peer"): Promise<ImportOutcome>;
  ruleContext(): RuleContext;
}

export interface SyncedPool {
  subscribePending(listener: (transactions: readonly ChainTransaction[]) => void, reportError: (error: unknown) => void): () => void;
}

export interface SyncOptions extends LongSyncOptions {
  readonly orphans: OrphanPoolOptions;
  /** Blocks received and waiting for the importer at most; past it, gossiped blocks are ignored (rskj messageQueueMaxSize). */
  readonly maxImportQueue: number;
}

/** A long-sync limit that lets any heavier peer be synced from, however few blocks ahead. */
const anyDistance = -(1n << 64n);

export const defaultSyncOptions: SyncOptions = { ...defaultLongSyncOptions, orphans: defaultOrphanPoolOptions, maxImportQueue: 2_000 };

export interface SyncManagerDependencies {
  readonly network: PeerToPeerNetwork;
  readonly chain: SyncedChain;
  readonly importer: SyncImporter;
  readonly intake: TransactionIntake;
  readonly pool: SyncedPool;
  /** Under automine, a transaction from a peer is mined as one from a client is. */
  readonly mineAdmitted: () => void;
  /** Holds the built-in miner during a long sync (true) and lets it go after (false). */
  readonly holdMining: (held: boolean) => void;
  readonly decoding: BlockDecoding;
  /** Where a long sync checks proofs of work and recovers senders in batches (another thread); on this one when undefined. */
  readonly batchChecks?: LongSyncChecks;
  /** The network's InvalidRequestError, handed in so that sync/ loads nothing of libp2p. */
  readonly refuseRequest: RefuseRequest;
  readonly log: Logger;
  readonly options?: Partial<SyncOptions>;
}

/** Counts for the operators' metrics. */
export interface SyncCounters {
  gossipBlocks: Record<GossipVerdict, number>;
  gossipTransactions: Record<GossipVerdict, number>;
  blocksImported: number;
  blocksInvalid: number;
  blocksPublished: number;
  transactionsPublished: number;
  longSyncs: number;
}

/** Hashes (hex) remembered up to a bound, oldest forgotten first. */
class RecentHashes {
  private readonly hashes = new Set<string>();
  constructor(private readonly limit: number) {}
  add(hash: Uint8Array): void {
    const key = bytesToUnprefixedHex(hash);
    this.hashes.delete(key);
    this.hashes.add(key);
    if (this.hashes.size > this.limit) this.hashes.delete(this.hashes.values().next().value!);
  }
  has(hash: Uint8Array): boolean {
    return this.hashes.has(bytesToUnprefixedHex(hash));
  }
}

/** A gossip validator that counts its verdicts in `counts`. */
function counted(counts: Record<GossipVerdict, number>, judge: (peerId: string, data: Uint8Array) => Promise<GossipVerdict>): (peerId: string, data: Uint8Array) => Promise<GossipVerdict> {
  return async (peerId, data) => {
    const verdict = await judge(peerId, data);
    counts[verdict]++;
    return verdict;
  };
}

export class SyncManager {
  readonly protocols: SyncProtocols;
  readonly counters: SyncCounters = {
    gossipBlocks: { accept: 0, ignore: 0, reject: 0 },
    gossipTransactions: { accept: 0, ignore: 0, reject: 0 },
    blocksImported: 0,
    blocksInvalid: 0,
    blocksPublished: 0,
    transactionsPublished: 0,
    longSyncs: 0,
  };
  private readonly options: SyncOptions;
  private readonly orphans: OrphanPool;
  /** Blocks and transactions that came from peers: not published again. */
  private readonly fromPeers = new RecentHashes(4_096);
  private readonly transactionsFromPeers = new RecentHashes(16_384);
  /** Ancestor fetches under way, by the hash asked for. */
  private readonly fetching = new Set<string>();
  /** Peers whose branch meets ours further back than block-by-block reaches: long-synced from whatever their lead. */
  private readonly deepForkPeers = new Set<string>();
  /** Peers' blocks handed to the importer and not yet through it, by hash (hex): their children need not wait as orphans. */
  private readonly importing = new Map<string, Block>();
  private progress: SyncProgress | undefined;
  private decision: Promise<void> | undefined;
  private decideAgain = false;
  private decisionDeferred = false;
  /** Asked-for blocks (not gossiped) in the import queue: what debug_wireProtocolQueueSize adds to the network's count. */
  private requestedImports = 0;
  private stopped = false;
  /** The long sync under way, which stop() ends rather than waits for. */
  private runningLongSync: LongSync | undefined;
  private readonly unsubscribers: (() => void)[] = [];
  private readonly progressListeners = new Set<(progress: SyncProgress | undefined) => void>();

  constructor(private readonly deps: SyncManagerDependencies) {
    this.options = { ...defaultSyncOptions, ...deps.options };
    this.protocols = syncProtocols(this.options.requestTimeoutMs);
    this.orphans = new OrphanPool(this.options.orphans);
  }

  private get log(): Logger {
    return this.deps.log;
  }

  async start(): Promise<void> {
    const { network, chain, pool } = this.deps;
    const reportDamage = (error: Error) => this.log.error({ err: error.message }, "a stored block a peer asked for is damaged: left out of the answer (`chain-node verify` lists every problem)");
    await new RequestServer(chain, this.options.chunkSize, this.deps.refuseRequest, reportDamage).register(network, this.protocols);
    network.subscribe(blockTopic, counted(this.counters.gossipBlocks, (peerId, data) => this.judgeBlockMessage(peerId, data)));
    network.subscribe(transactionTopic, counted(this.counters.gossipTransactions, (peerId, data) => this.judgeTransaction(peerId, data)));
    this.unsubscribers.push(network.onPeerStatus(() => this.scheduleDecision()));
    this.unsubscribers.push(chain.subscribeHead({ blocksAdded: (blocks) => this.publishBlocks(blocks.map(({ block }) => block)), blocksRemoved: () => undefined }, (error) => this.log.error({ err: error }, "publishing blocks failed")));
    this.unsubscribers.push(pool.subscribePending((transactions) => this.publishTransactions(transactions), (error) => this.log.error({ err: error }, "publishing transactions failed")));
    // Peers connected before the sync started.
    this.scheduleDecision();
  }

  /**
   * Stops following peers; the network itself is stopped by its owner. Waits for a decision under
   * way, after ending a long sync (LongSync.stop: its requests out are not waited for).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.runningLongSync?.stop();
    for (const unsubscribe of this.unsubscribers) unsubscribe();
    await this.decision?.catch(() => undefined);
  }

  /** eth_syncing: the long sync's progress, or undefined when none runs. */
  syncProgress(): SyncProgress | undefined {
    return this.progress;
  }

  /** Calls `listener` as a long sync goes (after each block), and with undefined when it ends. */
  subscribeProgress(listener: (progress: SyncProgress | undefined) => void): () => void {
    this.progressListeners.add(listener);
    return () => this.progressListeners.delete(listener);
  }

  private tellProgress(): void {
    for (const listener of this.progressListeners) {
      try {
        listener(this.progress);
      } catch (error) {
        this.log.error({ err: error }, "a sync progress listener failed");
      }
    }
  }

  /** Peer messages received and not yet processed beyond the network's own count: asked-for blocks waiting for the importer. */
  queuedMessages(): number {
    return this.requestedImports;
  }

  get orphanCount(): number {
    return this.orphans.size;
  }

  // --- gossip in ---

  private async judgeBlockMessage(peerId: string, data: Uint8Array): Promise<GossipVerdict> {
    if (this.progress !== undefined || this.stopped) return "ignore";
    let block: Block;
    try {
      block = decodeBlock(data, this.deps.decoding.common, this.deps.decoding.typed);
    } catch (error) {
      if (!(error instanceof MessageDecodingError)) throw error;
      this.penalise(peerId, "invalidMessage", error.message);
      return "reject";
    }
    return this.receiveBlock(block, peerId);
  }

  /** A block from a peer (gossip or an answer): judged, then queued for import, held as an orphan, or refused. */
  private async receiveBlock(block: Block, peerId: string, how: { requested: boolean; fetchAncestors: boolean } = { requested: false, fetchAncestors: true }): Promise<GossipVerdict> {
    const { chain, importer } = this.deps;
    const verdict = await judgeGossipBlock(block, {
      rules: importer.ruleContext(),
      bestNumber: chain.tip.number,
      requested: how.requested,
      isKnown: (hash) => chain.hasBlock(hash) || this.orphans.has(hash) || this.importing.has(bytesToUnprefixedHex(hash)),
      // A parent still in the import queue counts: the queue imports in order, the parent first.
      parentOf: async (candidate) => this.importing.get(bytesToUnprefixedHex(candidate.header.fields.parentHash))?.header ?? (await chain.getBlockByHash(candidate.header.fields.parentHash))?.header,
    });
    switch (verdict.kind) {
      case "ignore":
        return "ignore";
      case "reject":
        this.penalise(peerId, "invalidBlock", `block ${block.number} ${bytesToHex(block.hash)}: ${verdict.rule}: ${verdict.reason}`);
        return "reject";
      case "orphan":
        if (this.orphans.add(block, peerId, chain.tip.number) === "held" && how.fetchAncestors) void this.fetchAncestors(block.hash, peerId);
        return "ignore";
      case "accept":
        if (this.importing.size >= this.options.maxImportQueue) return "ignore";
        // Relayed only once imported (see the file's header).
        return this.importFromPeer(block, peerId, how.requested);
    }
  }

  /**
   * Imports a peer's block, then (not waited for) the held blocks waiting for it; scores the sender
   * by the outcome. Answers the gossip verdict: accept (relay) only a block stored valid.
   */
  private async importFromPeer(block: Block, peerId: string, requested: boolean): Promise<GossipVerdict> {
    const key = bytesToUnprefixedHex(block.hash);
    this.importing.set(key, block);
    // A gossiped block waiting here is counted by the network's validations already.
    if (requested) this.requestedImports++;
    let outcome: ImportOutcome;
    try {
      this.fromPeers.add(block.hash);
      outcome = await this.deps.importer.importBlock(block, "peer");
    } catch (error) {
      this.log.error({ err: error, block: bytesToHex(block.hash) }, "importing a peer's block failed");
      return "ignore";
    } finally {
      this.importing.delete(key);
      if (requested) this.requestedImports--;
      if (this.importing.size === 0 && this.decisionDeferred) {
        this.decisionDeferred = false;
        this.scheduleDecision();
      }
    }
    this.judgeOutcome(outcome, peerId);
    if (outcome.status === "IMPORTED_BEST" || outcome.status === "IMPORTED_NOT_BEST" || outcome.status === "EXIST") {
      this.connectDescendants(block.hash).catch((error: unknown) => this.log.error({ err: error, block: bytesToHex(block.hash) }, "importing the blocks held for a peer's block failed"));
    } else if (outcome.status === "NO_PARENT" && this.orphans.add(block, peerId, this.deps.chain.tip.number) === "held") {
      void this.fetchAncestors(block.hash, peerId);
    }
    return outcome.status === "IMPORTED_BEST" || outcome.status === "IMPORTED_NOT_BEST" ? "accept" : outcome.status === "INVALID_BLOCK" ? "reject" : "ignore";
  }

  /** Imports the held blocks waiting for `hash`, now stored; scores each one's sender. */
  private async connectDescendants(hash: Uint8Array): Promise<void> {
    const connected = await this.orphans.connectDescendants(hash, (child) => {
      this.fromPeers.add(child.hash);
      return this.deps.importer.importBlock(child, "peer");
    });
    for (const { orphan, outcome } of connected) this.judgeOutcome(outcome, orphan.from);
  }

  private judgeOutcome(outcome: ImportOutcome, peerId: string): void {
    if (outcome.status === "INVALID_BLOCK") {
      this.counters.blocksInvalid++;
      this.penalise(peerId, "invalidBlock", `block ${outcome.block.number} ${bytesToHex(outcome.block.hash)} refused: ${outcome.rule}: ${outcome.reason}`);
    } else if (outcome.status === "IMPORTED_BEST" || outcome.status === "IMPORTED_NOT_BEST") {
      this.counters.blocksImported++;
      this.deps.network.report(peerId, "validBlock", `block ${outcome.block.number}`);
    }
  }

  /**
   * Asks `peerId` for the missing ancestors of the held block `hash`, one at a time, until its line
   * connects; past `longSyncLimit` blocks it stops (the peer's status then starts a long sync).
   */
  private async fetchAncestors(hash: Uint8Array, peerId: string): Promise<void> {
    const { chain, network } = this.deps;
    const record = network.peerRecord(peerId);
    const peer = this.syncPeerOf(record);
    for (let fetched = 0; fetched <= Number(this.options.longSyncLimit) && !this.stopped && peer !== undefined; fetched++) {
      const missing = this.orphans.missingAncestorOf(hash);
      const key = bytesToUnprefixedHex(missing);
      if (chain.hasBlock(missing)) {
        // The parent arrived meanwhile: connect what waits for it.
        await this.connectDescendants(missing);
        return;
      }
      if (this.fetching.has(key)) return;
      this.fetching.add(key);
      try {
        const [block] = await peer.blocks([missing]);
        if (block === undefined) return;
        if (Buffer.compare(block.hash, missing) !== 0) {
          this.penalise(peerId, "invalidMessage", `asked for block ${bytesToHex(missing)}, answered ${bytesToHex(block.hash)}`);
          return;
        }
        // Taken for import (its descendants follow it) or refused: done. Held: its parent next.
        await this.receiveBlock(block, peerId, { requested: true, fetchAncestors: false });
        if (!this.orphans.has(block.hash)) return;
      } catch (error) {
        this.log.debug({ peer: peerId, err: (error as Error).message }, "asking for an orphan's ancestor failed");
        return;
      } finally {
        this.fetching.delete(key);
      }
    }
    // Still not connected after `longSyncLimit` ancestors: the branches part further back. A long
    // sync finds where (the connection point's search) whatever the peer's lead in numbers.
    if (!this.stopped) {
      this.deepForkPeers.add(peerId);
      this.scheduleDecision();
    }
  }

  private async judgeTransaction(peerId: string, data: Uint8Array): Promise<GossipVerdict> {
    if (this.progress !== undefined || this.stopped) return "ignore";
    const { intake } = this.deps;
    let transaction: ChainTransaction;
    try {
      transaction = await intake.receive(bytesToHex(data));
    } catch (error) {
      if (!(error instanceof MalformedTransactionError)) throw error;
      // A typed transaction is valid elsewhere; this node just does not take them.
      if (error.reason === "typed") return "ignore";
      this.deps.network.report(peerId, "invalidTransaction", error.message);
      return "reject";
    }
    this.transactionsFromPeers.add(transaction.hash);
    try {
      await intake.admit(transaction);
    } catch (error) {
      if (error instanceof TransactionRejectedError) return "ignore";
      throw error;
    }
    this.deps.network.report(peerId, "validTransaction", bytesToHex(transaction.hash));
    this.deps.mineAdmitted();
    return "accept";
  }

  // --- gossip out ---

  private publishBlocks(blocks: readonly Block[]): void {
    if (this.progress !== undefined || this.stopped) return;
    for (const block of blocks) {
      if (this.fromPeers.has(block.hash)) continue;
      this.counters.blocksPublished++;
      this.deps.network.publish(blockTopic, block.encode()).catch((error: unknown) => this.log.debug({ err: (error as Error).message, block: Number(block.number) }, "publishing a block failed"));
    }
  }

  private publishTransactions(transactions: readonly ChainTransaction[]): void {
    if (this.progress !== undefined || this.stopped) return;
    for (const transaction of transactions) {
      if (this.transactionsFromPeers.has(transaction.hash)) continue;
      this.counters.transactionsPublished++;
      this.deps.network.publish(transactionTopic, transaction.raw).catch((error: unknown) => this.log.debug({ err: (error as Error).message }, "publishing a transaction failed"));
    }
  }

  // --- following peers ---

  /** One decision at a time; statuses that arrive meanwhile make one more after it. */
  private scheduleDecision(): void {
    if (this.stopped) return;
    if (this.decision !== undefined) {
      this.decideAgain = true;
      return;
    }
    this.decision = (async () => {
      try {
        do {
          this.decideAgain = false;
          await this.decide();
        } while (this.decideAgain && !this.stopped);
      } catch (error) {
        this.log.error({ err: error }, "following peers failed");
      } finally {
        this.decision = undefined;
      }
    })();
  }

  private syncPeerOf(record: PeerRecord | undefined): NetworkSyncPeer | undefined {
    const status = record?.status;
    if (record === undefined || status === undefined) return undefined;
    return new NetworkSyncPeer(record.peerId, { number: status.bestNumber, hash: status.bestHash, totalDifficulty: status.totalDifficulty }, this.deps.network, this.protocols, this.deps.decoding);
  }

  /** The ready peers whose status is known, as the sync state machines take them. */
  private syncPeers(): NetworkSyncPeer[] {
    return this.deps.network
      .readyPeers()
      .map((record) => this.syncPeerOf(record))
      .filter((peer): peer is NetworkSyncPeer => peer !== undefined);
  }

  private async decide(): Promise<void> {
    if (this.importing.size > 0) {
      // Blocks are coming by gossip: decide once they are in (a burst would otherwise look like a lead to long-sync).
      this.decisionDeferred = true;
      return;
    }
    const peers = this.syncPeers();
    const local = this.syncChain();
    const ahead = chooseSyncPeer(peers, local, this.options.longSyncLimit);
    if (ahead !== undefined) {
      await this.longSync(ahead.best.number, this.options);
      return;
    }
    const deepFork = chooseSyncPeer(
      peers.filter((peer) => this.deepForkPeers.has(peer.id)),
      local,
      anyDistance,
    );
    this.deepForkPeers.clear();
    if (deepFork !== undefined) {
      await this.longSync(deepFork.best.number, { ...this.options, longSyncLimit: anyDistance }, (peer) => peer.id === deepFork.id);
      return;
    }
    // The heaviest peer heavier than us, within reach of block-by-block: fetch its best.
    let heaviest: NetworkSyncPeer | undefined;
    for (const peer of peers) {
      if (peer.best.totalDifficulty > local.headTotalDifficulty && (heaviest === undefined || peer.best.totalDifficulty > heaviest.best.totalDifficulty)) heaviest = peer;
    }
    if (heaviest === undefined || this.deps.chain.hasBlock(heaviest.best.hash)) return;
    if (this.orphans.has(heaviest.best.hash)) {
      // Held already: its ancestors are asked again unless that is under way (an earlier fetch failed, or the peer's branch moved).
      if (!this.fetching.has(bytesToUnprefixedHex(this.orphans.missingAncestorOf(heaviest.best.hash)))) void this.fetchAncestors(heaviest.best.hash, heaviest.id);
      return;
    }
    const key = bytesToUnprefixedHex(heaviest.best.hash);
    if (this.fetching.has(key)) return;
    this.fetching.add(key);
    try {
      const [block] = await heaviest.blocks([heaviest.best.hash]);
      if (block === undefined || Buffer.compare(block.hash, heaviest.best.hash) !== 0) return;
      await this.receiveBlock(block, heaviest.id, { requested: true, fetchAncestors: true });
    } catch (error) {
      this.log.debug({ peer: heaviest.id, err: (error as Error).message }, "asking a peer for its best block failed");
    } finally {
      this.fetching.delete(key);
    }
  }

  private syncChain(): SyncChain {
    const { chain, importer } = this.deps;
    return {
      get head() {
        return chain.tip;
      },
      get headTotalDifficulty() {
        return chain.tipWeight;
      },
      hasBlock: (hash) => chain.hasBlock(hash),
      importBlock: (block) => {
        this.fromPeers.add(block.hash);
        return importer.importBlock(block, "peer");
      },
    };
  }

  /** A long sync toward a peer whose best is `highestBlock` (the estimate eth_syncing shows until blocks arrive). */
  private async longSync(highestBlock: bigint, options: LongSyncOptions, eligible: (peer: NetworkSyncPeer) => boolean = () => true): Promise<void> {
    const { chain } = this.deps;
    const startingBlock = chain.tip.number;
    this.counters.longSyncs++;
    const started = performance.now();
    // The main thread's busy share over the sync, in its closing line: near 1, the sync waited on this node's CPU, not on peers.
    const eventLoopAtStart = performance.eventLoopUtilization();
    let lastLog = started;
    this.log.info({ from: Number(startingBlock), to: Number(highestBlock) }, "long sync started");
    this.progress = { startingBlock, currentBlock: startingBlock, highestBlock };
    this.deps.holdMining(true);
    const sync = new LongSync(
      this.syncChain(),
      () => this.syncPeers().filter(eligible),
      options,
      {
        onProgress: (progress) => {
          this.progress = progress;
          this.tellProgress();
          const now = performance.now();
          if (now - lastLog >= 5_000) {
            lastLog = now;
            this.log.info({ current: Number(progress.currentBlock), highest: Number(progress.highestBlock) }, "long sync");
          }
        },
        reportPeer: (peerId, fault, reason) => this.reportFault(peerId, fault, reason),
      },
      this.deps.batchChecks,
    );
    this.runningLongSync = sync;
    // A stop that came while the sync was being set up.
    if (this.stopped) sync.stop();
    try {
      const result = await sync.run();
      // The terminal's progress bar goes before the closing log line.
      this.progress = undefined;
      this.tellProgress();
      const seconds = (performance.now() - started) / 1000;
      if (result.kind === "failed") this.log.warn({ imported: result.imported, reason: result.reason, head: Number(chain.tip.number) }, "long sync ended");
      else if (result.kind === "stopped") this.log.info({ imported: result.imported, head: Number(chain.tip.number) }, "long sync stopped");
      else this.log.info({ imported: result.kind === "synced" ? result.imported : 0, head: Number(chain.tip.number), seconds: Math.round(seconds * 10) / 10, mainThreadBusy: Math.round(performance.eventLoopUtilization(eventLoopAtStart).utilization * 100) / 100 }, "long sync done");
    } finally {
      this.runningLongSync = undefined;
      if (this.progress !== undefined) {
        this.progress = undefined;
        this.tellProgress();
      }
      this.deps.holdMining(false);
    }
  }

  private reportFault(peerId: string, fault: PeerFault, reason: string): void {
    switch (fault) {
      case "invalidBlock":
      case "invalidBody":
        this.penalise(peerId, "invalidBlock", reason);
        break;
      case "invalidHeader":
        this.penalise(peerId, "invalidHeader", reason);
        break;
      case "badAnswer":
        this.deps.network.report(peerId, "invalidMessage", reason);
        break;
      case "timeout":
        this.deps.network.report(peerId, "timeout", reason);
        break;
    }
  }

  /** A peer that sent something invalid: recorded and disconnected. */
  private penalise(peerId: string, event: "invalidBlock" | "invalidHeader" | "invalidMessage", reason: string): void {
    this.log.info({ peer: peerId, event, reason }, "peer sent something invalid");
    this.deps.network.report(peerId, event, reason);
    this.deps.network.disconnect(peerId, event);
  }
}
