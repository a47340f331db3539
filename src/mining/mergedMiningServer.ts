// The merged-mining server (the reference's co/rsk/mine/MinerServerImpl; network brief 8.4): block
// templates for parent-chain pools, and the way their proofs come back as blocks.
//
// A template is a block built on the tip from the pool's pending transactions, executed, but not
// proven: its hashForMergedMining is what a pool commits to in its coinbase. The last 20 stay in a
// cache keyed by that hash, so a share found on a template a few blocks old still finds it. A
// submission carries the parent-chain header, the coinbase and its merkle branch; the server finds
// the template by the hash after the coinbase's last RSKBLOCK: tag, puts the three fields into the
// template's header, checks the proof (consensus/mergedMiningProof.ts; the importer's rule then
// finds the verdict kept for that header) and imports the block through the one import path
// (consensus/blockImporter.ts), without executing it again.
//
// Templates are built when asked for: a node nobody mines through builds none. Once a pool has
// asked, the next template is built ahead, on each new best block, every refresh interval and (with
// updateWorkOnNewTransaction) when the pool gains a pending transaction, one build at a time.
import { Block } from "../chain/block.js";
import type { Chain } from "../chain/chain.js";
import type { ChainReceipt } from "../chain/receipts.js";
import { bytesToHex } from "../common/hex.js";
import type { Logger } from "../common/logger.js";
import { checkProofOfWork, type BlockImporter } from "../consensus/blockImporter.js";
import { compressCoinbase, compressCoinbaseWithTxid, lastIndexOfBytes, mergedMiningTag } from "../consensus/compressedCoinbase.js";
import type { ImportOutcome } from "../consensus/importResult.js";
import { difficultyToParentTarget, targetToLittleEndian } from "../consensus/parentChain.js";
import type { TransactionPool } from "../txpool/transactionPool.js";
import type { Miner } from "./miner.js";
import { createParentCoinbase } from "./parentCoinbase.js";

export interface MergedMiningServerOptions {
  /** How many templates a submission may refer to (the reference's 20). */
  readonly templateCacheSize: number;
  /** A template older than this is replaced (the reference's 60 s). */
  readonly refreshIntervalMs: number;
  /** Whether a new pending transaction makes a new template (the reference's miner.server.updateWorkOnNewTransaction). */
  readonly updateWorkOnNewTransaction: boolean;
  /** A submission this soon after the previous one is refused; 0: no limit (the reference's workSubmissionRateLimitInMills). */
  readonly submissionRateLimitMs: number;
  /** Milliseconds of the wall clock (tests move it). */
  readonly nowMs: () => number;
}

export const defaultMergedMiningServerOptions: MergedMiningServerOptions = {
  templateCacheSize: 20,
  refreshIntervalMs: 60_000,
  updateWorkOnNewTransaction: false,
  submissionRateLimitMs: 0,
  nowMs: () => Date.now(),
};

/** A block waiting for its proof of work. */
export class MiningTemplate {
  private ownCoinbase: { coinbase: Uint8Array; txid: Uint8Array } | undefined;
  private targetValue: bigint | undefined;
  private targetBigEndian: Uint8Array | undefined;

  constructor(
    /** Complete but for the three merged-mining fields. */
    readonly block: Block,
    readonly receipts: ChainReceipt[],
    readonly builtAtMs: number,
  ) {}

  get hashForMergedMining(): Uint8Array {
    return this.block.header.hashForMergedMining;
  }

  get parentHash(): Uint8Array {
    return this.block.header.fields.parentHash;
  }

  /** 2^256 / max(difficulty, 3): a parent header qualifies when its hash, read little-endian, is at most this. */
  get target(): bigint {
    this.targetValue ??= difficultyToParentTarget(this.block.header.fields.difficulty);
    return this.targetValue;
  }

  /** The target as 32 big-endian bytes (mnr_getWork, eth_getWork). */
  get targetBytes(): Uint8Array {
    this.targetBigEndian ??= targetToLittleEndian(this.target).reverse();
    return this.targetBigEndian;
  }

  /**
   * The coinbase eth_getWork's miners use (they never see one): the built-in miner's form with no
   * random prefix, committing to this template. Its txid is the merkle root of a one-transaction
   * parent block.
   */
  get nodeCoinbase(): { coinbase: Uint8Array; txid: Uint8Array } {
    if (this.ownCoinbase === undefined) {
      const coinbase = createParentCoinbase(new Uint8Array(0), this.hashForMergedMining);
      this.ownCoinbase = { coinbase, txid: compressCoinbaseWithTxid(coinbase).txid };
    }
    return this.ownCoinbase;
  }
}

/** What mnr_getWork shows. */
export interface MergedMiningWork {
  readonly template: MiningTemplate;
  /** True the first time work on a new parent is handed out, false after. */
  readonly notify: boolean;
}

/** A proof of work for a template, in the form the block header keeps it (the RPC layer builds it from a pool's parameters). */
export interface ParentChainProof {
  /** The 80-byte parent-chain header. */
  readonly parentHeader: Uint8Array;
  /** The whole parent-chain coinbase, serialized without witness. */
  readonly coinbase: Uint8Array;
  /** The coinbase's merkle branch: sibling hashes bottom-up, 32 bytes each in internal byte order. */
  readonly merkleBranch: Uint8Array;
}

export type SubmissionOutcome =
  | { readonly kind: "imported"; readonly outcome: ImportOutcome }
  | { readonly kind: "rateLimited" }
  /** The coinbase names no cached template; `hashForMergedMining` is what follows its last tag (undefined: no tag, or fewer than 32 bytes after it). */
  | { readonly kind: "unknownWork"; readonly hashForMergedMining: Uint8Array | undefined }
  /** The proof does not hold for the template it names. */
  | { readonly kind: "invalidProof"; readonly block: Block; readonly reason: string };

const hashSize = 32;

export class MergedMiningServer {
  /** By hashForMergedMining (hex), oldest first. */
  private readonly templates = new Map<string, MiningTemplate>();
  private current: MiningTemplate | undefined;
  /** The template being built, which every caller in the meantime waits for. */
  private building: Promise<MiningTemplate> | undefined;
  /** Whether something changed since `current` was built that the next template should see. */
  private stale = true;
  /** The parent of the last work handed out with notify: true. */
  private notifiedParent: string | undefined;
  private lastSubmissionMs: number | undefined;
  /** Set once a pool asked for work: from then on templates are built ahead. */
  private poolsAsking = false;
  private refreshTimer: NodeJS.Timeout | undefined;
  private readonly unsubscribers: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly chain: Chain,
    private readonly pool: TransactionPool,
    private readonly miner: Miner,
    private readonly importer: BlockImporter,
    private readonly options: MergedMiningServerOptions,
    private readonly log: Logger,
  ) {}

  /**
   * The work to hand out now, with `notify` (mnr_getWork): the current template, built first when
   * there is none or it is out of date. Answered at once (no promise) when the current one serves:
   * pools poll this.
   */
  getWork(): MergedMiningWork | Promise<MergedMiningWork> {
    const template = this.currentTemplate();
    return template instanceof Promise ? template.then((built) => this.handOut(built)) : this.handOut(template);
  }

  /** The current template without touching `notify` (eth_getWork, which has no such flag). */
  currentTemplate(): MiningTemplate | Promise<MiningTemplate> {
    if (!this.poolsAsking) this.startBuildingAhead();
    const current = this.current;
    return current !== undefined && this.isCurrent(current) ? current : this.nextTemplate();
  }

  private handOut(template: MiningTemplate): MergedMiningWork {
    const parent = bytesToHex(template.parentHash);
    const notify = parent !== this.notifiedParent;
    if (notify) this.notifiedParent = parent;
    return { template, notify };
  }

  /** The cached template committed to by `hashForMergedMining`. */
  template(hashForMergedMining: Uint8Array): MiningTemplate | undefined {
    return this.templates.get(bytesToHex(hashForMergedMining));
  }

  /**
   * A pool's proof: for the template its coinbase names (or `template`, which eth_submitWork found by
   * its hash), proven by it, imported. The import's outcome is answered whatever it is
   * (INVALID_BLOCK included), once an imported block is on disk.
   */
  async submit(proof: ParentChainProof, template?: MiningTemplate): Promise<SubmissionOutcome> {
    const now = this.options.nowMs();
    const { submissionRateLimitMs } = this.options;
    if (submissionRateLimitMs > 0 && this.lastSubmissionMs !== undefined && now - this.lastSubmissionMs < submissionRateLimitMs) return { kind: "rateLimited" };
    this.lastSubmissionMs = now;
    if (template === undefined) {
      const named = hashAfterLastTag(proof.coinbase);
      template = named === undefined ? undefined : this.template(named);
      if (template === undefined) return { kind: "unknownWork", hashForMergedMining: named };
    }
    return this.proveAndImport(template, proof);
  }

  private async proveAndImport(template: MiningTemplate, proof: ParentChainProof): Promise<SubmissionOutcome> {
    const compressedCoinbase = compressCoinbase(proof.coinbase);
    const { header, transactions, uncles } = template.block;
    const block = new Block(
      header.withMergedMining({ mergedMiningHeader: proof.parentHeader, mergedMiningMerkleProof: proof.merkleBranch, mergedMiningCoinbaseTransaction: compressedCoinbase }),
      transactions,
      uncles,
    );
    // The importer's proof-of-work rule finds this verdict kept on the header: checked once.
    const check = checkProofOfWork(block.header);
    if (!check.ok) return { kind: "invalidProof", block, reason: check.reason };
    const outcome = await this.importer.importBuiltBlock(block, template.receipts, "mergedMiner");
    if (outcome.status === "IMPORTED_BEST") await this.chain.whenTipWritten();
    if (outcome.status === "INVALID_BLOCK") this.log.warn({ number: Number(block.number), hash: bytesToHex(block.hash), rule: outcome.rule, reason: outcome.reason }, "merged-mined block refused");
    else this.log.info({ number: Number(block.number), hash: bytesToHex(block.hash), result: outcome.status }, "merged-mined block");
    return { kind: "imported", outcome };
  }

  /** Stops building ahead; a build under way finishes. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.refreshTimer !== undefined) clearInterval(this.refreshTimer);
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    await this.building?.catch(() => undefined);
  }

  private isCurrent(template: MiningTemplate | undefined): boolean {
    if (template === undefined || this.stale) return false;
    if (Buffer.compare(template.parentHash, this.chain.tip.hash) !== 0) return false;
    return this.options.nowMs() - template.builtAtMs < this.options.refreshIntervalMs;
  }

  /**
   * The next template: the one being built if it started after the last change, else a new build.
   * A change during a build makes another once it ends.
   */
  private nextTemplate(): Promise<MiningTemplate> {
    if (this.building !== undefined) return this.building.then((template) => (this.isCurrent(template) ? template : this.nextTemplate()));
    this.stale = false;
    const building = this.build().finally(() => {
      if (this.building !== building) return;
      this.building = undefined;
      if (this.stale && this.poolsAsking) this.buildAheadSoon();
    });
    this.building = building;
    return building;
  }

  private async build(): Promise<MiningTemplate> {
    const built = await this.miner.buildTemplate();
    const template = new MiningTemplate(built.block, built.receipts, this.options.nowMs());
    const key = bytesToHex(template.hashForMergedMining);
    this.templates.delete(key);
    this.templates.set(key, template);
    while (this.templates.size > this.options.templateCacheSize) this.templates.delete(this.templates.keys().next().value!);
    this.current = template;
    this.log.debug({ number: Number(built.block.number), hashForMergedMining: key, transactions: built.block.transactions.length }, "new work for merged miners");
    return template;
  }

  private startBuildingAhead(): void {
    this.poolsAsking = true;
    const changed = () => this.markStale();
    this.unsubscribers.push(
      this.chain.subscribeHead({ blocksAdded: changed, blocksRemoved: changed }, (error) => this.log.error({ err: error }, "following the chain for merged-mining work failed")),
    );
    if (this.options.updateWorkOnNewTransaction) {
      this.unsubscribers.push(this.pool.subscribePending(changed, (error) => this.log.error({ err: error }, "following the pool for merged-mining work failed")));
    }
    this.refreshTimer = setInterval(changed, this.options.refreshIntervalMs);
    this.refreshTimer.unref();
  }

  /** Something the template depends on changed: the next one is built now, in the background. */
  private markStale(): void {
    this.stale = true;
    this.buildAheadSoon();
  }

  private buildAheadSoon(): void {
    if (this.closed) return;
    // Once the event that made it stale has been dealt with (the block is appended, the pool told).
    setImmediate(() => {
      if (this.closed || !this.stale || this.building !== undefined) return;
      this.nextTemplate().catch((error: unknown) => this.log.warn({ err: error }, "building merged-mining work failed"));
    });
  }
}

/** The 32 bytes after the coinbase's last RSKBLOCK: tag, as the reference reads them to find the template. */
export function hashAfterLastTag(coinbase: Uint8Array): Uint8Array | undefined {
  const tagAt = lastIndexOfBytes(coinbase, mergedMiningTag);
  if (tagAt < 0) return undefined;
  const start = tagAt + mergedMiningTag.length;
  return start + hashSize <= coinbase.length ? coinbase.slice(start, start + hashSize) : undefined;
}
