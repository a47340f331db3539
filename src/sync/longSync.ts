// Long sync (rskj: co/rsk/net/sync/*SyncState, network brief 6.2): when the best peer is more
// than `longSyncLimit` blocks ahead, its chain is fetched in chunks and imported in order:
//   0. its best header, which must hash to the status's best and carry a valid proof of work;
//   1. the connection point (connectionPoint.ts: none asked from genesis, one request when the peer's
//      chain holds our head, else a binary search);
//   2. a skeleton from there: its canonical block every chunk, up to 20 chunks, and its best (a
//      best further on is left to the next skeleton, asked from the last point while the last
//      chunks are fetched, and taken if it names that point canonical; else to the next round);
//   3. each chunk's headers, walking back from the chunk's end: the first must be the skeleton's
//      block, each the parent of the one before, the last a child of the previous chunk's end, the
//      count exact, every proof of work valid (checked together on another thread when one is given);
//   4. the bodies, in batches from every peer whose best reaches the chunk, all of a chunk's in
//      flight at once, each checked against its header (transactions root, uncles hash); the next
//      chunks' headers and bodies are fetched while this one imports (two ahead);
//   5. each block through the importer, in order (which takes the body checks of step 4 as done).
// A peer whose answer is wrong, short or late is reported (PeerFault) and its work goes to
// another; a block the importer refuses ends the sync, reported against the peer that sent its body.
// The next round starts from what was imported, until the peer's best is reached. stop() (the
// node stopping) ends it at once: the requests out are failed rather than waited for.
import { Block, bodyMismatchOf, MalformedBlockError, withSigners } from "../chain/block.js";
import type { BlockHeader } from "../chain/header.js";
import { bytesToHex } from "../common/hex.js";
import { checkProofOfWork, mergedMiningProofOf, recordBodyMatchesHeader, recordProofOfWorkCheck } from "../consensus/blockImporter.js";
import type { MergedMiningProofBatchCheck } from "../consensus/mergedMiningProof.js";
import { maxStreamsPerProtocolPerPeer } from "../p2p/interface.js";
import { recoverSignerKeyIfAny, type SignatureBatchRecovery } from "../common/signatures.js";
import { findConnectionPoint } from "./connectionPoint.js";
import type { BlockBody, PeerFault, SkeletonPoint, SyncChain, SyncPeer } from "./syncPeer.js";

/**
 * Chunks fetched while one imports: the importer waited for the network at times with one (the
 * main thread idle 4 % of a 10,000-block sync on the busy 2-core machine); two keep it fed.
 */
const chunksFetchedAhead = 2;

export interface LongSyncOptions {
  /** A peer further ahead than this is long-synced from (rskj: 24). */
  readonly longSyncLimit: bigint;
  /** Blocks between skeleton points (rskj: 192). */
  readonly chunkSize: number;
  /** Hashes in one bodies request (network brief 4: at most 64). */
  readonly bodiesPerRequest: number;
  /** Body requests in flight at once (rskj: 20). */
  readonly maxBodyRequestsInFlight: number;
  /** Body requests in flight to one peer: at most the streams of a protocol the peer lets one open (p2p/interface.ts), past which it resets them. */
  readonly maxBodyRequestsPerPeer: number;
  /** A request unanswered after this is a timeout (rskj: 30 s). */
  readonly requestTimeoutMs: number;
}

export const defaultLongSyncOptions: LongSyncOptions = {
  longSyncLimit: 24n,
  chunkSize: 192,
  bodiesPerRequest: 64,
  maxBodyRequestsInFlight: 20,
  maxBodyRequestsPerPeer: maxStreamsPerProtocolPerPeer,
  requestTimeoutMs: 30_000,
};

export interface SyncProgress {
  readonly startingBlock: bigint;
  readonly currentBlock: bigint;
  readonly highestBlock: bigint;
}

export interface LongSyncEvents {
  /** After every imported block (eth_syncing reads the last one). */
  onProgress?(progress: SyncProgress): void;
  /** A peer answered wrong, short or late. */
  reportPeer?(peerId: string, fault: PeerFault, reason: string): void;
}

/** Where the checks that need no state run in batches (another thread, node/batchChecks.ts); one by one on this thread when absent. */
export interface LongSyncChecks {
  /** A chunk's headers' proofs of work. */
  readonly proofs?: MergedMiningProofBatchCheck;
  /** The senders of a batch of bodies. */
  readonly senders?: SignatureBatchRecovery;
  /** Starts what the checks run on (their thread) as the sync begins, rather than with the first batch. */
  prepare?(): void;
}

export type LongSyncResult =
  | { readonly kind: "notNeeded" }
  | { readonly kind: "synced"; readonly imported: number; readonly from: string }
  | { readonly kind: "failed"; readonly imported: number; readonly reason: string }
  /** Stopped by its owner (the node stops): what it imported stays, a restart carries on from there. */
  | { readonly kind: "stopped"; readonly imported: number };

/** One round of a long sync (a skeleton's chunks); ended once its last chunk is imported or it stops. */
interface SyncRound {
  ended: boolean;
}

/** A chunk whose headers are checked and whose bodies are on their way, batch by batch in order. */
interface FetchedChunk {
  readonly batches: readonly Promise<{ peer: SyncPeer; blocks: Block[] }>[];
}

/** A request or import given up because the sync was stopped. */
class SyncStoppedError extends Error {
  constructor() {
    super("the long sync was stopped");
  }
}

class PeerAnswerError extends Error {
  constructor(
    readonly peer: SyncPeer,
    readonly fault: PeerFault,
    reason: string,
  ) {
    super(reason);
  }
}

/** The peer to long-sync from: the heaviest that is heavier than us and more than the limit ahead. */
export function chooseSyncPeer(peers: readonly SyncPeer[], chain: SyncChain, longSyncLimit: bigint): SyncPeer | undefined {
  let best: SyncPeer | undefined;
  for (const peer of peers) {
    if (peer.best.totalDifficulty <= chain.headTotalDifficulty || peer.best.number <= chain.head.number + longSyncLimit) continue;
    if (best === undefined || peer.best.totalDifficulty > best.best.totalDifficulty) best = peer;
  }
  return best;
}

export class LongSync {
  private imported = 0;
  private readonly excluded = new Set<string>();
  private readonly bodyRequestsInFlightByPeer = new Map<string, number>();
  private readonly bodyRequestWaiters: (() => void)[] = [];
  private stopRequested = false;
  /** The requests out, each failed with SyncStoppedError by stop(). */
  private readonly requestsOut = new Set<(error: Error) => void>();

  constructor(
    private readonly chain: SyncChain,
    private readonly peers: () => readonly SyncPeer[],
    private readonly options: LongSyncOptions = defaultLongSyncOptions,
    private readonly events: LongSyncEvents = {},
    private readonly checks: LongSyncChecks = {},
  ) {}

  /**
   * Ends the sync soon: it asks nothing more, imports nothing more, and stops waiting for the
   * requests out (their answers are dropped), so that a node stopping waits neither for the rest
   * of a long sync nor for a late peer. A block being imported finishes first; run() then answers
   * "stopped".
   */
  stop(): void {
    this.stopRequested = true;
    for (const fail of [...this.requestsOut]) fail(new SyncStoppedError());
  }

  async run(): Promise<LongSyncResult> {
    const startingBlock = this.chain.head.number;
    for (;;) {
      if (this.stopRequested) return { kind: "stopped", imported: this.imported };
      const peer = chooseSyncPeer(this.usablePeers(), this.chain, this.options.longSyncLimit);
      if (peer === undefined) return this.imported === 0 && this.excluded.size === 0 ? { kind: "notNeeded" } : this.ended(startingBlock);
      this.checks.prepare?.();
      try {
        await this.syncFrom(peer, startingBlock);
        if (this.stopRequested) return { kind: "stopped", imported: this.imported };
        if (this.chain.head.number >= peer.best.number || Buffer.compare(this.chain.head.hash, peer.best.hash) === 0) return { kind: "synced", imported: this.imported, from: peer.id };
      } catch (error) {
        if (this.stopRequested) return { kind: "stopped", imported: this.imported };
        if (!(error instanceof PeerAnswerError)) throw error;
        this.events.reportPeer?.(error.peer.id, error.fault, error.message);
        this.excluded.add(error.peer.id);
        if (error.fault === "invalidBlock") return { kind: "failed", imported: this.imported, reason: `${error.peer.id}: ${error.message}` };
      }
    }
  }

  private ended(startingBlock: bigint): LongSyncResult {
    return this.chain.head.number > startingBlock ? { kind: "synced", imported: this.imported, from: "" } : { kind: "failed", imported: this.imported, reason: "no peer left to sync from" };
  }

  private usablePeers(): SyncPeer[] {
    return this.peers().filter((peer) => !this.excluded.has(peer.id));
  }

  /** One round per skeleton, until the peer's best is stored. */
  private async syncFrom(peer: SyncPeer, startingBlock: bigint): Promise<void> {
    const [bestHeader] = await this.ask(peer, () => peer.headers(peer.best.hash, 1));
    if (bestHeader === undefined || Buffer.compare(bestHeader.hash, peer.best.hash) !== 0 || bestHeader.number !== peer.best.number) {
      throw new PeerAnswerError(peer, "invalidHeader", `its best header is not the block ${bytesToHex(peer.best.hash)} its status gave`);
    }
    this.checkProof(peer, bestHeader);
    while (!this.chain.hasBlock(peer.best.hash)) {
      const best = this.chain.head;
      const connection = await findConnectionPoint(
        { blockHashAt: (number) => this.ask(peer, () => peer.blockHashAt(number)), hasBlock: (hash) => this.chain.hasBlock(hash), best: { number: best.number, hash: best.hash } },
        peer.best.number,
      );
      const skeleton = await this.ask(peer, () => peer.skeleton(connection.number));
      const ends = this.chunkEnds(peer, skeleton, connection.number);
      // Chunks ahead: the next ones' headers and bodies are fetched while this one imports. A chunk
      // fetched ahead may fail while another imports: it is awaited (and its error met) in its
      // turn, or not at all when the sync stops first, and must not count as unhandled meanwhile.
      // Once the round ends (done, or stopped by an error), what it fetched ahead neither retries
      // nor blames a peer: the next round shares the excluded peers and the body-request slots.
      const round: SyncRound = { ended: false };
      const fetching: Promise<FetchedChunk>[] = [];
      let fetched = 0;
      // The next skeleton, asked once this one's chunks are all being fetched, so that the chunks
      // after it come while this one's last ones import (rather than the import waiting, at each
      // skeleton's end, for a connection point, a skeleton, headers and bodies). It carries on from
      // this skeleton's last point only if it names that point as the peer's canonical block: if
      // not, the peer's chain changed below it (or the peer lies) and the next round looks for the
      // connection point again, blaming no one.
      let nextSkeleton: Promise<void> | undefined;
      let skeletonsEnded = false;
      const askNextSkeleton = () => {
        const last = ends.at(-1)!;
        if (nextSkeleton !== undefined || skeletonsEnded || round.ended || last.number >= peer.best.number) return;
        nextSkeleton = this.ask(peer, () => peer.skeleton(last.number)).then((points) => {
          nextSkeleton = undefined;
          const first = points[0];
          if (round.ended || first === undefined || first.number !== last.number || Buffer.compare(first.hash, last.hash) !== 0) {
            skeletonsEnded = true;
            return;
          }
          ends.push(...this.chunkEnds(peer, points, last.number));
          fetchAhead();
        });
        // Awaited by the loop below once nothing else is left to import.
        nextSkeleton.catch(() => undefined);
      };
      const fetchAhead = () => {
        while (fetching.length < chunksFetchedAhead && fetched < ends.length) {
          const chunk = this.fetchChunk(peer, fetched === 0 ? connection : ends[fetched - 1]!, ends[fetched]!, round);
          chunk.catch(() => undefined);
          fetching.push(chunk);
          fetched++;
        }
        if (fetched === ends.length) askNextSkeleton();
      };
      try {
        for (fetchAhead(); fetching.length > 0 || nextSkeleton !== undefined; ) {
          if (fetching.length === 0) {
            await nextSkeleton;
            continue;
          }
          const chunk = await fetching.shift()!;
          fetchAhead();
          await this.importChunk(chunk, startingBlock, peer);
        }
      } finally {
        round.ended = true;
      }
    }
  }

  /** A chunk's headers, then its bodies asked in batches (several in flight) as soon as the headers are checked. */
  private async fetchChunk(peer: SyncPeer, previous: { number: bigint; hash: Uint8Array | undefined }, end: SkeletonPoint, round: SyncRound): Promise<FetchedChunk> {
    const headers = await this.chunkHeaders(peer, previous, end);
    const batches: Promise<{ peer: SyncPeer; blocks: Block[] }>[] = [];
    for (let start = 0, batchIndex = 0; start < headers.length; start += this.options.bodiesPerRequest, batchIndex++) {
      const fetched = this.fetchBlocks(headers.slice(start, start + this.options.bodiesPerRequest), end.number, batchIndex, round);
      // Awaited in order by importChunk; a later batch failing first must not go unhandled meanwhile.
      fetched.catch(() => undefined);
      batches.push(fetched);
    }
    return { batches };
  }

  /** The skeleton's points past the connection point, checked: ascending, one chunk apart at most, the last the peer's best. */
  private chunkEnds(peer: SyncPeer, skeleton: readonly SkeletonPoint[], connection: bigint): SkeletonPoint[] {
    const ends = skeleton.filter((point) => point.number > connection);
    // A skeleton holds at most 20 chunks and then the peer's best all the same: a best further on
    // than one chunk past the last point is reached by a later round, from what this one imported.
    if (ends.length > 1 && ends.at(-1)!.number === peer.best.number && ends.at(-1)!.number - ends.at(-2)!.number > BigInt(this.options.chunkSize)) ends.pop();
    let previous = connection;
    for (const point of ends) {
      if (point.number <= previous || point.number - previous > BigInt(this.options.chunkSize)) {
        throw new PeerAnswerError(peer, "badAnswer", `skeleton point ${point.number} after ${previous}: not ascending by at most ${this.options.chunkSize}`);
      }
      previous = point.number;
    }
    if (ends.length === 0) throw new PeerAnswerError(peer, "badAnswer", `a skeleton with nothing after block ${connection}, below its best ${peer.best.number}`);
    return ends;
  }

  /** A chunk's headers, oldest first, checked against the skeleton and the block before it. */
  private async chunkHeaders(peer: SyncPeer, previous: { number: bigint; hash: Uint8Array | undefined }, end: SkeletonPoint): Promise<BlockHeader[]> {
    const count = Number(end.number - previous.number);
    const newestFirst = await this.ask(peer, () => peer.headers(end.hash, count));
    if (newestFirst.length !== count) throw new PeerAnswerError(peer, "invalidHeader", `${newestFirst.length} headers for blocks ${previous.number + 1n}-${end.number}, not ${count}`);
    if (Buffer.compare(newestFirst[0]!.hash, end.hash) !== 0) throw new PeerAnswerError(peer, "invalidHeader", `the chunk's first header is not the skeleton's block ${bytesToHex(end.hash)}`);
    const headers = [...newestFirst].reverse();
    for (const [index, header] of headers.entries()) {
      const expectedNumber = previous.number + 1n + BigInt(index);
      if (header.number !== expectedNumber) throw new PeerAnswerError(peer, "invalidHeader", `header ${index} of the chunk is block ${header.number}, not ${expectedNumber}`);
      const parentHash = header.fields.parentHash;
      const linked = index === 0 ? (previous.hash === undefined ? this.chain.hasBlock(parentHash) : Buffer.compare(parentHash, previous.hash) === 0) : Buffer.compare(parentHash, headers[index - 1]!.hash) === 0;
      if (!linked) throw new PeerAnswerError(peer, "invalidHeader", `block ${header.number}'s parent ${bytesToHex(parentHash)} is not the block before it`);
      if (this.checks.proofs === undefined) this.checkProof(peer, header);
    }
    if (this.checks.proofs !== undefined) {
      const checks = await this.checks.proofs.checkAll(headers.map(mergedMiningProofOf));
      // Recorded on each header: the importer's own proof check of these blocks is then a lookup.
      headers.forEach((header, index) => {
        const verdict = recordProofOfWorkCheck(header, checks[index]!);
        if (!verdict.ok) throw new PeerAnswerError(peer, "invalidHeader", `block ${header.number}: ${verdict.reason}`);
      });
    }
    return headers;
  }

  private checkProof(peer: SyncPeer, header: BlockHeader): void {
    const verdict = checkProofOfWork(header);
    if (!verdict.ok) throw new PeerAnswerError(peer, "invalidHeader", `block ${header.number}: ${verdict.reason}`);
  }

  /** The chunk's blocks imported in order as their batches arrive. */
  private async importChunk(chunk: FetchedChunk, startingBlock: bigint, headerPeer: SyncPeer): Promise<void> {
    const highestBlock = headerPeer.best.number;
    for (const batch of chunk.batches) {
      const { peer, blocks } = await batch;
      for (const block of blocks) {
        if (this.stopRequested) throw new SyncStoppedError();
        const outcome = await this.chain.importBlock(block);
        if (outcome.status === "INVALID_BLOCK") throw new PeerAnswerError(peer, "invalidBlock", `block ${block.number} ${bytesToHex(block.hash)} refused: ${outcome.rule}: ${outcome.reason}`);
        if (outcome.status === "NO_PARENT") throw new PeerAnswerError(headerPeer, "invalidHeader", `block ${block.number} does not connect`);
        if (outcome.status !== "EXIST") this.imported++;
        const currentBlock = this.chain.head.number;
        this.events.onProgress?.({ startingBlock, currentBlock, highestBlock: highestBlock > currentBlock ? highestBlock : currentBlock });
      }
    }
  }

  /** One batch's bodies, from the next peer that can serve them; a peer that fails is reported and the batch asked of another. */
  private async fetchBlocks(headers: readonly BlockHeader[], chunkEnd: bigint, batchIndex: number, round: SyncRound): Promise<{ peer: SyncPeer; blocks: Block[] }> {
    for (;;) {
      if (round.ended) throw new Error("the sync round ended");
      const peer = await this.bodyRequestSlot(() => this.usablePeers().filter((candidate) => candidate.best.number >= chunkEnd), batchIndex);
      if (peer === undefined) throw new Error("no peer left to ask for bodies");
      try {
        const bodies = await this.ask(peer, () => peer.bodies(headers.map((header) => header.hash)));
        headers.forEach((header, index) => this.checkBody(peer, header, bodies[index]));
        // Past the peer's time limit: the recovery is this node's work, not the peer's answer.
        return { peer, blocks: await this.withSenders(peer, headers, bodies as BlockBody[]) };
      } catch (error) {
        if (!(error instanceof PeerAnswerError) || error.fault === "invalidBlock" || round.ended) throw error;
        this.events.reportPeer?.(error.peer.id, error.fault, error.message);
        this.excluded.add(error.peer.id);
      } finally {
        this.releaseBodyRequestSlot(peer);
      }
    }
  }

  /**
   * A peer to ask a batch of bodies of, once fewer than maxBodyRequestsInFlight requests are out
   * and fewer than maxBodyRequestsPerPeer to that peer (first come, first served): the candidate the
   * batch's index falls on, else the next one with room. Undefined when no candidate is left.
   */
  private async bodyRequestSlot(candidates: () => readonly SyncPeer[], batchIndex: number): Promise<SyncPeer | undefined> {
    for (let waited = false; ; waited = true) {
      const peers = candidates();
      if (peers.length === 0) {
        // Whoever waits behind this batch may have other candidates.
        if (waited) this.bodyRequestWaiters.shift()?.();
        return undefined;
      }
      // A batch that waited goes before the ones that did not.
      if (this.bodyRequestsInFlight() < this.options.maxBodyRequestsInFlight && (waited || this.bodyRequestWaiters.length === 0)) {
        for (let offset = 0; offset < peers.length; offset++) {
          const peer = peers[(batchIndex + offset) % peers.length]!;
          const toPeer = this.bodyRequestsInFlightByPeer.get(peer.id) ?? 0;
          if (toPeer < this.options.maxBodyRequestsPerPeer) {
            this.bodyRequestsInFlightByPeer.set(peer.id, toPeer + 1);
            // The next waiter may fit too (another peer with room).
            if (waited) this.bodyRequestWaiters.shift()?.();
            return peer;
          }
        }
      }
      await new Promise<void>((resolve) => (waited ? this.bodyRequestWaiters.unshift(resolve) : this.bodyRequestWaiters.push(resolve)));
    }
  }

  private bodyRequestsInFlight(): number {
    let total = 0;
    for (const toPeer of this.bodyRequestsInFlightByPeer.values()) total += toPeer;
    return total;
  }

  private releaseBodyRequestSlot(peer: SyncPeer): void {
    const toPeer = this.bodyRequestsInFlightByPeer.get(peer.id)! - 1;
    if (toPeer === 0) this.bodyRequestsInFlightByPeer.delete(peer.id);
    else this.bodyRequestsInFlightByPeer.set(peer.id, toPeer);
    this.bodyRequestWaiters.shift()?.();
  }

  /** A body that is its header's: the uncles hash and the transactions root (checked before any sender is recovered). */
  private checkBody(peer: SyncPeer, header: BlockHeader, body: BlockBody | undefined): asserts body is BlockBody {
    if (body === undefined) throw new PeerAnswerError(peer, "badAnswer", `no body for block ${header.number}`);
    const mismatch = bodyMismatchOf(header, body);
    if (mismatch !== undefined) throw new PeerAnswerError(peer, "invalidBody", `block ${header.number}: ${mismatch}`);
  }

  /**
   * The blocks of checked bodies, their transactions' senders recovered together; a signature
   * without a signer is the peer's invalid body. Each block is made of the header and the body
   * checkBody passed (the same raw transactions, the same uncles), and recorded so: the importer
   * does not compute its uncles hash and transactions root again.
   */
  private async withSenders(peer: SyncPeer, headers: readonly BlockHeader[], bodies: readonly BlockBody[]): Promise<Block[]> {
    const signatures = bodies.flatMap((body) => body.transactions.map((transaction) => transaction.signature));
    const signerKeys = this.checks.senders === undefined ? signatures.map(recoverSignerKeyIfAny) : await this.checks.senders.recoverAll(signatures);
    let next = 0;
    return bodies.map((body, index) => {
      const keys = signerKeys.slice(next, (next += body.transactions.length));
      try {
        return recordBodyMatchesHeader(new Block(headers[index]!, withSigners(body.transactions, keys), body.uncles));
      } catch (error) {
        if (error instanceof MalformedBlockError) throw new PeerAnswerError(peer, "invalidBody", `block ${headers[index]!.number}: ${error.message}`);
        throw error;
      }
    });
  }

  /** A peer's answer within the request time limit, or a timeout fault. */
  private ask<T>(peer: SyncPeer, request: () => Promise<T>): Promise<T> {
    if (this.stopRequested) return Promise.reject(new SyncStoppedError());
    return new Promise<T>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        this.requestsOut.delete(fail);
      };
      const fail = (error: Error) => {
        settle();
        reject(error);
      };
      const timer = setTimeout(() => fail(new PeerAnswerError(peer, "timeout", `no answer within ${this.options.requestTimeoutMs} ms`)), this.options.requestTimeoutMs);
      this.requestsOut.add(fail);
      Promise.resolve()
        .then(request)
        .then(
          (value) => {
            settle();
            resolve(value);
          },
          (error: unknown) => fail(error instanceof PeerAnswerError ? error : new PeerAnswerError(peer, "badAnswer", (error as Error).message)),
        );
    });
  }
}
