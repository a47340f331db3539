// The long-sync and orphan state machines with scripted peers (network brief 10, layer 1): each
// peer serves a real chain mined in another set of chain services, and may time out, answer short,
// lie in its skeleton or headers, or send a body that is not its header's. The local side is real
// chain services importing through the one import path.
import { expect } from "chai";
import { Block } from "../../../src/chain/block.js";
import { BlockHeader } from "../../../src/chain/header.js";
import { decodeSignedTransaction } from "../../../src/chain/transactions.js";
import type { ImportOutcome } from "../../../src/consensus/importResult.js";
import { proveBlock } from "../../../src/mining/blockProof.js";
import { BatchCheckThread } from "../../../src/node/batchChecks.js";
import { createLogger } from "../../../src/common/logger.js";
import type { ChainServices } from "../../../src/node/index.js";
import { findConnectionPoint } from "../../../src/sync/connectionPoint.js";
import { LongSync, chooseSyncPeer, defaultLongSyncOptions, type LongSyncOptions, type SyncProgress } from "../../../src/sync/longSync.js";
import { OrphanPool } from "../../../src/sync/orphanPool.js";
import type { BlockBody, PeerFault, SkeletonPoint, SyncChain, SyncPeer } from "../../../src/sync/syncPeer.js";
import { asReceived, mineBlocks, openTestChain, signedTransfer } from "../../helpers/chainPair.js";
import { withoutSigner } from "../../helpers/signatures.js";

const stranger = "0x00000000000000000000000000000000000000aa";
const fastOptions: LongSyncOptions = { ...defaultLongSyncOptions, chunkSize: 16, bodiesPerRequest: 5, maxBodyRequestsInFlight: 3, requestTimeoutMs: 200 };

/** How a scripted peer misbehaves. */
interface Script {
  /** Requests of these kinds never answer. */
  silentOn?: ("headers" | "bodies" | "skeleton" | "blockHash")[];
  /** Headers answers lose their last entry. */
  shortHeaders?: boolean;
  /** Bodies answers drop each block's transactions. */
  emptyBodies?: boolean;
  /** Bodies answers carry an uncle their headers do not commit to (the genesis header). */
  foreignUncles?: boolean;
  /** Skeleton points are moved one block off. */
  skewedSkeleton?: boolean;
  /** A skeleton asked from past block 0 names another hash for its first point (the peer's chain changed below it, as far as the asker can tell). */
  changedSkeletonStart?: boolean;
  /** Headers from block 20 to the one before the best carry a merkle proof that does not hold (not hashed: the links stay). */
  brokenProofs?: boolean;
  /** The last transaction of each body has a signature without a signer (its bytes unchanged: the root holds). */
  signerlessTransactions?: boolean;
  /** Bodies requests past this many at once fail as libp2p fails a stream the serving node resets for its limit; each answer waits a little, so that requests overlap. */
  concurrentBodiesLimit?: number;
  /** Bodies requests for blocks from `from` on wait for `until`, then answer that the peer has none of them. */
  heldBodies?: { readonly from: bigint; readonly until: Promise<void> };
}

/** A request a scripted peer heard: headers by the blocks they reach back over, bodies by the blocks asked for. */
interface HeardRequest {
  readonly kind: "headers" | "bodies";
  readonly numbers: readonly bigint[];
}

/** `header` with a merged-mining merkle proof of 31 bytes: the same hash, a proof of work that fails. */
function withBrokenProof(header: BlockHeader): BlockHeader {
  return new BlockHeader({ ...header.fields, mergedMiningMerkleProof: new Uint8Array(31) });
}

/** A peer serving `source`'s canonical chain, as the request/response protocols would, by `script`. */
async function scriptedPeer(id: string, source: ChainServices, receiver: ChainServices, script: Script = {}, chunkSize = fastOptions.chunkSize): Promise<SyncPeer & { requests: Record<string, number>; heard: HeardRequest[] }> {
  const chain = source.chain;
  const head = chain.head;
  const requests: Record<string, number> = { headers: 0, bodies: 0, skeleton: 0, blockHash: 0, bodiesInFlight: 0, mostBodiesInFlight: 0 };
  const heard: HeardRequest[] = [];
  const numberOf = async (hash: Uint8Array) => (await chain.getBlockByHash(hash))?.number ?? -1n;
  const never = <T>() => new Promise<T>(() => undefined);
  const received = async (hash: Uint8Array) => asReceived((await chain.getBlockByHash(hash))!, receiver);
  return {
    id,
    requests,
    heard,
    best: { number: head.number, hash: head.hash, totalDifficulty: (await chain.getTotalDifficulty(head.hash))! },
    async blockHashAt(number) {
      requests.blockHash!++;
      if (script.silentOn?.includes("blockHash")) return never();
      return chain.getCanonicalHash(number);
    },
    async skeleton(startNumber) {
      requests.skeleton!++;
      if (script.silentOn?.includes("skeleton")) return never();
      const points: SkeletonPoint[] = [];
      const step = BigInt(chunkSize);
      for (let number = startNumber - (startNumber % step); number < head.number && points.length < 20; number += step) points.push({ number: number + (script.skewedSkeleton === true && number > startNumber ? 1n : 0n), hash: (await chain.getCanonicalHash(number))! });
      points.push({ number: head.number, hash: head.hash });
      if (script.changedSkeletonStart === true && startNumber > 0n) points[0] = { ...points[0]!, hash: new Uint8Array(32).fill(0xc4) };
      return points;
    },
    async headers(startHash, count) {
      requests.headers!++;
      const startNumber = await numberOf(startHash);
      heard.push({ kind: "headers", numbers: Array.from({ length: count }, (_, index) => startNumber - BigInt(index)) });
      if (script.silentOn?.includes("headers")) return never();
      const headers: BlockHeader[] = [];
      let cursor = await chain.getBlockByHash(startHash);
      while (cursor !== undefined && headers.length < count) {
        const header = (await received(cursor.hash)).header;
        headers.push(script.brokenProofs === true && header.number >= 20n && header.number < head.number ? withBrokenProof(header) : header);
        cursor = cursor.number === 0n ? undefined : await chain.getBlockByHash(cursor.header.fields.parentHash);
      }
      return script.shortHeaders === true && headers.length > 1 ? headers.slice(0, -1) : headers;
    },
    async bodies(hashes) {
      requests.bodies!++;
      const limit = script.concurrentBodiesLimit;
      if (limit !== undefined) {
        requests.mostBodiesInFlight = Math.max(requests.mostBodiesInFlight!, ++requests.bodiesInFlight!);
        try {
          if (requests.bodiesInFlight! > limit) throw new Error("Cannot write to a stream that is closed");
          await new Promise((resolve) => setTimeout(resolve, 5));
        } finally {
          requests.bodiesInFlight!--;
        }
      }
      const numbers = await Promise.all(hashes.map(numberOf));
      heard.push({ kind: "bodies", numbers });
      if (script.silentOn?.includes("bodies")) return never();
      const held = script.heldBodies;
      if (held !== undefined && numbers.some((number) => number >= held.from)) {
        await held.until;
        return hashes.map(() => undefined);
      }
      const bodies: (BlockBody | undefined)[] = [];
      for (const hash of hashes) {
        const block = await chain.getBlockByHash(hash);
        if (block === undefined) bodies.push(undefined);
        else {
          const copy = await received(hash);
          const transactions = copy.transactions.map((transaction) => decodeSignedTransaction(transaction.raw, receiver.common, receiver.typedTransactions));
          const last = transactions.at(-1);
          if (script.signerlessTransactions === true && last !== undefined) transactions[transactions.length - 1] = { ...last, signature: withoutSigner(last.signature) };
          const uncles = script.foreignUncles === true ? [...copy.uncles, (await chain.getBlockByNumber(0n))!.header] : copy.uncles;
          bodies.push({ transactions: script.emptyBodies === true && transactions.length > 0 ? [] : transactions, uncles });
        }
      }
      return bodies;
    },
  };
}

/**
 * `source`'s chain on `forged` as a forger would serve it: block `invalidAt` claims a wrong state
 * root (its proof of work is valid: only execution finds it), the blocks after it are re-proven on
 * their new parents. Blocks from `invalidAt` on are stored as given, not imported.
 */
async function forgeChain(source: ChainServices, forged: ChainServices, invalidAt: bigint): Promise<void> {
  for (let number = 1n; number <= source.chain.head.number; number++) {
    let block = asReceived((await source.chain.getBlockByNumber(number))!, forged);
    if (number >= invalidAt) {
      const parent = forged.chain.tip;
      const fields = { ...block.header.fields, parentHash: parent.hash, stateRoot: number === invalidAt ? new Uint8Array(32).fill(9) : block.header.fields.stateRoot, mergedMiningHeader: new Uint8Array(), mergedMiningMerkleProof: new Uint8Array(), mergedMiningCoinbaseTransaction: new Uint8Array() };
      block = proveBlock(new Block(new BlockHeader(fields), block.transactions, block.uncles));
      forged.chain.appendBlock(block, []);
      await forged.chain.whenTipWritten();
      continue;
    }
    await forged.importer.importBlock(block, "peer");
  }
}

/** Waits until `condition` holds, or `ms` have passed. */
async function until(condition: () => boolean, ms: number): Promise<void> {
  for (const deadline = Date.now() + ms; !condition() && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 5));
}

function syncChainOf(services: ChainServices): SyncChain & { imports: number } {
  const view = {
    imports: 0,
    get head() {
      return services.chain.head;
    },
    get headTotalDifficulty() {
      return services.chain.tipWeight;
    },
    hasBlock: (hash: Uint8Array) => services.chain.hasBlock(hash),
    importBlock: async (block: Block): Promise<ImportOutcome> => {
      view.imports++;
      return services.importer.importBlock(block, "peer");
    },
  };
  return view;
}

describe("sync: long sync and orphans with scripted peers", function () {
  this.timeout(60_000);
  let source: ChainServices;
  let local: ChainServices;

  /** 70 blocks on `source`, a transfer in every third. */
  async function mineSource(): Promise<void> {
    let nonce = 0;
    await mineBlocks(source, 70, async (index) => (index % 3 === 0 ? [await signedTransfer(source, "cow", nonce++, stranger)] : []));
  }

  beforeEach(async () => {
    source = await openTestChain();
    local = await openTestChain();
    await mineSource();
  });
  afterEach(async () => {
    await source.close();
    await local.close();
  });

  /** The connection-point search of `peer`'s chain from `local`'s best. */
  function searchFrom(peer: SyncPeer, services: ChainServices = local) {
    const best = services.chain.tip;
    return findConnectionPoint({ blockHashAt: (number) => peer.blockHashAt(number), hasBlock: (hash) => services.chain.hasBlock(hash), best: { number: best.number, hash: best.hash } }, peer.best.number);
  }

  /** Imports `from`'s canonical blocks `first` to `last` into `into`. */
  async function importRange(from: ChainServices, into: ChainServices, first: bigint, last: bigint): Promise<void> {
    for (let number = first; number <= last; number++) await into.importer.importBlock(asReceived((await from.chain.getBlockByNumber(number))!, into), "peer");
  }

  it("finds the connection point without a request when our best is genesis", async () => {
    const peer = await scriptedPeer("p", source, local);
    expect(await searchFrom(peer)).to.deep.equal({ number: 0n, hash: undefined, requests: 0 });
    expect(peer.requests.blockHash).to.equal(0);
  });

  it("finds the connection point with one request when the peer's chain holds our best", async () => {
    const peer = await scriptedPeer("p", source, local);
    // The local chain holds the source's first 10 blocks.
    await importRange(source, local, 1n, 10n);
    const found = await searchFrom(peer);
    expect(found).to.deep.equal({ number: 10n, hash: (await source.chain.getCanonicalHash(10n))!, requests: 1 });
    expect(peer.requests.blockHash).to.equal(1);
  });

  it("finds the connection point by binary search when our best is on a branch the peer's chain left", async () => {
    const peer = await scriptedPeer("p", source, local);
    // The source's first 10 blocks, then 3 of the local chain's own (transfers the source has not): its best, 13, is not the peer's.
    await importRange(source, local, 1n, 10n);
    await mineBlocks(local, 3, async (index) => [await signedTransfer(local, "cow", 4 + index, stranger, 6n)]);
    expect(local.chain.tip.number).to.equal(13n);
    const found = await searchFrom(peer);
    expect(found.number).to.equal(10n);
    expect(found.hash).to.deep.equal(await source.chain.getCanonicalHash(10n));
    // The probe at 13, then a search below it: 13 numbers, 4 probes.
    expect(found.requests).to.equal(5);
    expect(peer.requests.blockHash).to.equal(5);
  });

  it("finds the connection point by binary search above our best when we store the peer's block there on a side branch", async () => {
    // Our best: the source's first 4 blocks and 6 of another chain's own (10, first seen); the
    // source's blocks 5 to 10 stored beside them, on a side branch of the same weight.
    const other = await openTestChain();
    try {
      await importRange(source, other, 1n, 4n);
      await mineBlocks(other, 6);
      await importRange(other, local, 1n, 10n);
      await importRange(source, local, 5n, 10n);
      expect(local.chain.tip.hash).to.deep.equal(other.chain.head.hash);
      const sourceTen = (await source.chain.getCanonicalHash(10n))!;
      expect(local.chain.hasBlock(sourceTen)).to.equal(true);
      const peer = await scriptedPeer("p", source, local);
      const found = await searchFrom(peer);
      expect(found.number).to.equal(10n);
      expect(found.hash).to.deep.equal(sourceTen);
      // The probe at 10 (stored), then a search of the 60 numbers above it: 5 probes.
      expect(found.requests).to.equal(6);
    } finally {
      await other.close();
    }
  });

  it("asks one block hash per round after the first: the peer's chain holds the head each round reached", async () => {
    // Chunks of 2 blocks and a skeleton that names another block at its first point when asked past 0: each round is a search.
    const peer = await scriptedPeer("changed", source, local, { changedSkeletonStart: true }, 2);
    await importRange(source, local, 1n, 10n);
    const result = await new LongSync(syncChainOf(local), () => [peer], { ...fastOptions, chunkSize: 2 }).run();
    expect(result).to.deep.equal({ kind: "synced", imported: 60, from: "changed" });
    // Rounds from 10 and from 48 (10 + 19 chunks of 2).
    expect(peer.requests.blockHash).to.equal(2);
  });

  it("syncs from the best peer: same head and state root, progress reported, the stale peer never asked", async () => {
    const stale = await openTestChain();
    try {
      await mineBlocks(stale, 5);
      const stalePeer = await scriptedPeer("stale", stale, local);
      const good = await scriptedPeer("good", source, local);
      const chain = syncChainOf(local);
      expect(chooseSyncPeer([stalePeer, good], chain, fastOptions.longSyncLimit)?.id).to.equal("good");
      const progress: SyncProgress[] = [];
      const result = await new LongSync(chain, () => [stalePeer, good], fastOptions, { onProgress: (entry) => progress.push(entry) }).run();
      expect(result).to.deep.equal({ kind: "synced", imported: 70, from: "good" });
      expect(local.chain.head.hash).to.deep.equal(source.chain.head.hash);
      expect(local.chain.head.header.fields.stateRoot).to.deep.equal(source.chain.head.header.fields.stateRoot);
      expect(progress[0]).to.deep.equal({ startingBlock: 0n, currentBlock: 1n, highestBlock: 70n });
      expect(progress.at(-1)).to.deep.equal({ startingBlock: 0n, currentBlock: 70n, highestBlock: 70n });
      expect(Object.values(stalePeer.requests).every((count) => count === 0)).to.equal(true);
      // From genesis: no connection-point search.
      expect(good.requests.blockHash).to.equal(0);
    } finally {
      await stale.close();
    }
  });

  it("syncs from a peer further ahead than one skeleton reaches (20 chunks): the skeleton's last point, the peer's best, is for a later round", async () => {
    // Chunks of 2 blocks: a skeleton reaches 40 blocks, then names the best, 70.
    const peer = await scriptedPeer("far", source, local, {}, 2);
    const result = await new LongSync(syncChainOf(local), () => [peer], { ...fastOptions, chunkSize: 2 }).run();
    expect(result).to.deep.equal({ kind: "synced", imported: 70, from: "far" });
    expect(local.chain.head.hash).to.deep.equal(source.chain.head.hash);
    expect(peer.requests.skeleton).to.equal(2);
  });

  it("asks the next skeleton while the last chunks of one are fetched: the chunk after it comes before that skeleton's last block imports, and the connection point is looked for once", async () => {
    // Chunks of 2 blocks: the first round's skeleton reaches block 38 (19 points past 0), the next one goes from 38 to the best, 70.
    const peer = await scriptedPeer("far", source, local, {}, 2);
    const chain = syncChainOf(local);
    const importBlock = chain.importBlock;
    let nextChunkAskedBefore38: boolean | undefined;
    chain.importBlock = async (block) => {
      if (block.number === 38n) {
        await until(() => peer.heard.some((request) => request.kind === "bodies" && request.numbers.includes(40n)), 2_000);
        nextChunkAskedBefore38 = peer.heard.some((request) => request.kind === "bodies" && request.numbers.includes(40n));
      }
      return importBlock(block);
    };
    // The local head at each block-hash request (a connection-point search).
    const headsAtSearch: bigint[] = [];
    const counting = { ...peer, blockHashAt: (number: bigint) => (headsAtSearch.push(local.chain.head.number), peer.blockHashAt(number)) };
    const result = await new LongSync(chain, () => [counting], { ...fastOptions, chunkSize: 2 }).run();
    expect(result).to.deep.equal({ kind: "synced", imported: 70, from: "far" });
    expect(local.chain.head.hash).to.deep.equal(source.chain.head.hash);
    expect(nextChunkAskedBefore38).to.equal(true);
    expect(peer.requests.skeleton).to.equal(2);
    // One connection point, at the start only (from genesis: no request; a later one would ask at least one).
    expect(headsAtSearch).to.deep.equal([]);
  });

  it("a next skeleton that does not name the last point canonical is not taken: no peer blamed, the next round looks for the connection point again", async () => {
    const peer = await scriptedPeer("changed", source, local, { changedSkeletonStart: true }, 2);
    const reports: [string, PeerFault][] = [];
    const headsAtSearch: bigint[] = [];
    const counting = { ...peer, blockHashAt: (number: bigint) => (headsAtSearch.push(local.chain.head.number), peer.blockHashAt(number)) };
    const result = await new LongSync(syncChainOf(local), () => [counting], { ...fastOptions, chunkSize: 2 }, { reportPeer: (peerId, reported) => reports.push([peerId, reported]) }).run();
    expect(result).to.deep.equal({ kind: "synced", imported: 70, from: "changed" });
    expect(local.chain.head.hash).to.deep.equal(source.chain.head.hash);
    expect(reports).to.deep.equal([]);
    // The first round's skeleton, the next one refused, the second round's.
    expect(peer.requests.skeleton).to.equal(3);
    // A connection point at the start (genesis: no request) and another once the first skeleton's blocks (to 38) were in (one request).
    expect(headsAtSearch).to.deep.equal([38n]);
  });

  it("keeps its bodies requests to one peer under the streams the peer lets it open: none reset, no peer blamed, with more allowed in flight overall", async () => {
    const peer = await scriptedPeer("limited", source, local, { concurrentBodiesLimit: fastOptions.maxBodyRequestsPerPeer });
    const reports: [string, PeerFault][] = [];
    const options: LongSyncOptions = { ...fastOptions, bodiesPerRequest: 2, maxBodyRequestsInFlight: 20, requestTimeoutMs: 10_000 };
    const result = await new LongSync(syncChainOf(local), () => [peer], options, { reportPeer: (peerId, reported) => reports.push([peerId, reported]) }).run();
    expect(result).to.deep.equal({ kind: "synced", imported: 70, from: "limited" });
    expect(reports).to.deep.equal([]);
    expect(peer.requests.mostBodiesInFlight).to.equal(fastOptions.maxBodyRequestsPerPeer);
  });

  it("does not long-sync from a peer 24 blocks ahead or fewer", async () => {
    for (let number = 1n; number <= 46n; number++) await local.importer.importBlock(asReceived((await source.chain.getBlockByNumber(number))!, local), "peer");
    const peer = await scriptedPeer("near", source, local);
    expect(await new LongSync(syncChainOf(local), () => [peer], fastOptions).run()).to.deep.equal({ kind: "notNeeded" });
  });

  const faults: [string, Script, PeerFault][] = [
    ["a peer that never answers headers", { silentOn: ["headers"] }, "timeout"],
    ["a peer that never answers bodies", { silentOn: ["bodies"] }, "timeout"],
    ["a peer that answers short", { shortHeaders: true }, "invalidHeader"],
    ["a peer that sends bodies not of their headers", { emptyBodies: true }, "invalidBody"],
    ["a peer that sends bodies with an uncle their headers do not commit to", { foreignUncles: true }, "invalidBody"],
    ["a peer whose skeleton is off by one", { skewedSkeleton: true }, "badAnswer"],
    ["a peer whose headers carry proofs of work that do not hold", { brokenProofs: true }, "invalidHeader"],
    ["a peer whose bodies hold a transaction whose signature has no signer", { signerlessTransactions: true }, "invalidBody"],
  ];
  for (const [name, script, fault] of faults) {
    it(`reports ${name} and finishes from an honest one`, async () => {
      const liar = await scriptedPeer("liar", source, local, script);
      const honest = await scriptedPeer("honest", source, local);
      // The liar looks heavier, so it is tried first.
      const heavierLiar = { ...liar, best: { ...liar.best, totalDifficulty: liar.best.totalDifficulty + 1n } };
      const reports: [string, PeerFault][] = [];
      const result = await new LongSync(syncChainOf(local), () => [heavierLiar, honest], fastOptions, { reportPeer: (peerId, reported) => reports.push([peerId, reported]) }).run();
      expect(reports[0]).to.deep.equal(["liar", fault]);
      expect(result.kind).to.equal("synced");
      expect(local.chain.head.hash).to.deep.equal(source.chain.head.hash);
    });
  }

  it("checks a chunk's proofs of work on the batch-check thread: the same head, and the same fault for a broken proof", async () => {
    const checks = new BatchCheckThread(createLogger("error"));
    try {
      const liar = await scriptedPeer("liar", source, local, { brokenProofs: true });
      const honest = await scriptedPeer("honest", source, local);
      const heavierLiar = { ...liar, best: { ...liar.best, totalDifficulty: liar.best.totalDifficulty + 1n } };
      const reports: [string, PeerFault, string][] = [];
      const result = await new LongSync(syncChainOf(local), () => [heavierLiar, honest], fastOptions, { reportPeer: (peerId, reported, reason) => reports.push([peerId, reported, reason]) }, { proofs: checks, senders: checks }).run();
      expect(reports).to.have.length(1);
      expect(reports[0]!.slice(0, 2)).to.deep.equal(["liar", "invalidHeader"]);
      expect(reports[0]![2]).to.match(/^block (1[7-9]|2\d|3[0-2]): merkle proof of 31 bytes, not a multiple of 32$/);
      expect(result).to.deep.equal({ kind: "synced", imported: 70, from: "honest" });
      expect(local.chain.head.hash).to.deep.equal(source.chain.head.hash);
      expect(checks.checkedOnMainThread).to.equal(0);
    } finally {
      await checks.close();
    }
  });

  it("has its checks' thread started as it begins, before its first request, not with the first batch", async () => {
    const thread = new BatchCheckThread(createLogger("error"));
    try {
      const peer = await scriptedPeer("p", source, local);
      let requestsWhenPrepared: number | undefined;
      const checks = { proofs: thread, senders: thread, prepare: () => ((requestsWhenPrepared ??= peer.requests.headers! + peer.requests.skeleton! + peer.requests.blockHash!), thread.prepare()) };
      const result = await new LongSync(syncChainOf(local), () => [peer], fastOptions, {}, checks).run();
      expect(result).to.deep.equal({ kind: "synced", imported: 70, from: "p" });
      expect(requestsWhenPrepared).to.equal(0);
      expect(thread.checkedOnMainThread).to.equal(0);
      expect(await thread.close()).to.equal("left");
    } finally {
      await thread.close();
    }
  });

  it("stops at a block the importer refuses and reports the peer that sent it; nothing after it is imported", async () => {
    const forged = await openTestChain();
    try {
      await forgeChain(source, forged, 40n);
      const forger = await scriptedPeer("forger", forged, local);
      const reports: [string, PeerFault][] = [];
      const result = await new LongSync(syncChainOf(local), () => [forger], fastOptions, { reportPeer: (peerId, reported) => reports.push([peerId, reported]) }).run();
      expect(result.kind).to.equal("failed");
      expect(reports).to.deep.equal([["forger", "invalidBlock"]]);
      expect(local.chain.head.number).to.equal(39n);
    } finally {
      await forged.close();
    }
  });

  it("fetches the next two chunks' headers and bodies while a chunk imports", async () => {
    // A chunk's bodies in one request, every request in flight at once: what is asked is what is fetched, none waits for a slot.
    const options: LongSyncOptions = { ...fastOptions, bodiesPerRequest: 16, maxBodyRequestsInFlight: 20, requestTimeoutMs: 10_000 };
    const peer = await scriptedPeer("p", source, local);
    // Chunks of 16 from block 1: 0 is blocks 1-16, ..., 4 is 65-70 (the peer's best).
    const chunkOf = (number: bigint) => Number((number - 1n) / 16n);
    const lastChunk = chunkOf(70n);
    const isChunkEnd = (number: bigint) => number % 16n === 0n || number === 70n;
    const asked = (kind: HeardRequest["kind"], chunk: number) => peer.heard.some((request) => request.kind === kind && request.numbers.every((number) => chunkOf(number) === chunk));
    const fetchedAhead = (chunk: number) => [chunk + 1, chunk + 2].filter((next) => next <= lastChunk && asked("headers", next) && asked("bodies", next));
    const seenAtChunkEnd: number[][] = [];
    const chain = syncChainOf(local);
    const importBlock = chain.importBlock;
    chain.importBlock = async (block) => {
      if (isChunkEnd(block.number)) {
        // Before a chunk's last block imports, the next two chunks' headers and bodies have been asked
        // for. Waited for (2 s at most): fetched ahead, they come while this import waits; fetched
        // only after this chunk, they never do.
        const chunk = chunkOf(block.number);
        const expected = [chunk + 1, chunk + 2].filter((next) => next <= lastChunk);
        await until(() => fetchedAhead(chunk).length === expected.length, 2_000);
        seenAtChunkEnd.push(fetchedAhead(chunk));
      }
      return importBlock(block);
    };
    const result = await new LongSync(chain, () => [peer], options).run();
    expect(result).to.deep.equal({ kind: "synced", imported: 70, from: "p" });
    expect(seenAtChunkEnd).to.deep.equal([[1, 2], [2, 3], [3, 4], [4], []]);
    // One headers and one bodies request a chunk, and the best's header: nothing asked twice.
    expect(peer.requests.headers).to.equal(6);
    expect(peer.requests.bodies).to.equal(5);
  });

  it("what an ended round fetched ahead neither blames its peer nor is asked again when its answers come late", async () => {
    const forged = await openTestChain();
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    try {
      // Block 10, in the first chunk, is refused: the round ends while chunks 1 and 2 (blocks 17-48)
      // are fetched ahead. Their bodies answers are held until the sync has ended, then say the peer
      // has none of them: in a live round, a bad answer reported and asked of another peer.
      await forgeChain(source, forged, 10n);
      const forger = await scriptedPeer("forger", forged, local, { heldBodies: { from: 17n, until: released } });
      const heldRequests = () => forger.heard.filter((request) => request.kind === "bodies" && request.numbers[0]! >= 17n).length;
      const chain = syncChainOf(local);
      const importBlock = chain.importBlock;
      chain.importBlock = async (block) => {
        // Both chunks ahead have asked for all their bodies (4 requests of 5 each) before the round ends.
        if (block.number === 10n) await until(() => heldRequests() === 8, 2_000);
        return importBlock(block);
      };
      const reports: [string, PeerFault][] = [];
      const options: LongSyncOptions = { ...fastOptions, maxBodyRequestsInFlight: 20, requestTimeoutMs: 10_000 };
      const result = await new LongSync(chain, () => [forger], options, { reportPeer: (peerId, reported) => reports.push([peerId, reported]) }).run();
      expect(result.kind).to.equal("failed");
      expect(reports).to.deep.equal([["forger", "invalidBlock"]]);
      expect(heldRequests()).to.equal(8);
      const bodiesAsked = forger.requests.bodies;
      release();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(reports, "no report after the round ended").to.deep.equal([["forger", "invalidBlock"]]);
      expect(forger.requests.bodies, "nothing asked again").to.equal(bodiesAsked);
      expect(local.chain.head.number).to.equal(9n);
    } finally {
      release();
      await forged.close();
    }
  });

  it("stops when told: the requests out are not waited for, nothing more is asked or imported, and a new sync carries on from its head", async () => {
    // Bodies from block 17 on are held (a slow peer) with a request time limit of a minute: without
    // stop() the sync would wait that long.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    try {
      const slow = await scriptedPeer("slow", source, local, { heldBodies: { from: 17n, until: released } });
      const options: LongSyncOptions = { ...fastOptions, requestTimeoutMs: 60_000 };
      const sync = new LongSync(syncChainOf(local), () => [slow], options);
      const running = sync.run();
      await until(() => local.chain.head.number === 16n && slow.heard.some((request) => request.kind === "bodies" && request.numbers[0]! >= 17n), 10_000);
      expect(local.chain.head.number, "the first chunk imported").to.equal(16n);
      const asked = { ...slow.requests };
      const stopped = performance.now();
      sync.stop();
      const result = await running;
      expect(performance.now() - stopped, "answered at once, not after the request time limit").to.be.below(5_000);
      expect(result).to.deep.equal({ kind: "stopped", imported: 16 });
      release();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(slow.requests, "nothing asked after the stop").to.deep.equal(asked);
      expect(local.chain.head.number, "nothing imported after the stop").to.equal(16n);

      const honest = await scriptedPeer("honest", source, local);
      const after = await new LongSync(syncChainOf(local), () => [honest], fastOptions).run();
      expect(after.kind).to.equal("synced");
      expect(local.chain.head.hash).to.deep.equal(source.chain.head.hash);
    } finally {
      release();
    }
  });

  it("holds orphans until their parent lands, then imports them with their descendants", async () => {
    const pool = new OrphanPool({ maxBlocks: 4, maxAheadOfBest: 50n });
    const blocks = await Promise.all([1n, 2n, 3n, 4n, 5n].map(async (number) => asReceived((await source.chain.getBlockByNumber(number))!, local)));
    expect(pool.add(blocks[2]!, "a", 0n)).to.equal("held");
    expect(pool.add(blocks[1]!, "a", 0n)).to.equal("held");
    expect(pool.add(blocks[4]!, "b", 0n)).to.equal("held");
    expect(pool.add(blocks[4]!, "b", 0n)).to.equal("known");
    expect(pool.add(asReceived((await source.chain.getBlockByNumber(60n))!, local), "c", 0n)).to.equal("tooFarAhead");
    // Block 5 waits for 4, which waits for 3 (held), which waits for 2 (held), which waits for 1.
    expect(pool.missingAncestorOf(blocks[2]!.hash)).to.deep.equal(blocks[0]!.hash);
    expect((await local.importer.importBlock(blocks[0]!, "peer")).status).to.equal("IMPORTED_BEST");
    const connected = await pool.connectDescendants(blocks[0]!.hash, (block) => local.importer.importBlock(block, "peer"));
    expect(connected.map(({ orphan, outcome }) => [Number(orphan.block.number), outcome.status])).to.deep.equal([
      [2, "IMPORTED_BEST"],
      [3, "IMPORTED_BEST"],
    ]);
    expect(local.chain.head.number).to.equal(3n);
    expect(pool.size, "block 5 still waits for 4").to.equal(1);
    // Full: the oldest goes first.
    for (const number of [10n, 11n, 12n, 13n]) pool.add(asReceived((await source.chain.getBlockByNumber(number))!, local), "d", 3n);
    expect(pool.has(blocks[4]!.hash)).to.equal(false);
    expect(pool.size).to.equal(4);
  });
});
