// Block production. Automine (the default): every accepted transaction is mined into its own
// block before its send call returns. Interval: the pending transactions go into one block every
// `blockTimeSeconds`. Off: blocks come only from explicit requests (the dev methods). Automine and
// interval mining are switched apart at run time (evm_setAutomine, evm_setIntervalMining), so
// both may be on, as on Hardhat and Anvil.
// evm_stopMining pauses automine and interval mining (transactions keep entering the pool);
// evm_startMining resumes them, and automine then mines what arrived meanwhile.
// One block is built at a time; every build goes through the same queue. A build does not wait for
// the disk: it appends to the chain's tip and the next build starts while the chain writes. Who
// needs the block to be durable (the send call, a dev method) waits for that afterwards.
import type { Block } from "../chain/block.js";
import type { Chain } from "../chain/chain.js";
import type { BlockHeader } from "../chain/header.js";
import { collectAncestors, oldestFamilyNumber } from "../consensus/familyView.js";
import { selectUncles } from "../consensus/uncleSelection.js";
import { ChainWriteQueue } from "../chain/writeQueue.js";
import type { ChainTransaction } from "../chain/transactions.js";
import { bytesToHex, bytesToUnprefixedHex } from "../common/hex.js";
import type { Logger } from "../common/logger.js";
import type { BlockBuilder, BuiltBlock, StateEdit } from "../execution/blockBuilder.js";
import type { TransactionPool } from "../txpool/transactionPool.js";
import { proveBlock, seededFromBlock, type ParentMinerRandomSource } from "./blockProof.js";
import { BlockTimeExhaustedError, nextBlockTemplate, TimestampNotAfterParentError, type TemplateRules } from "./blockTemplate.js";
import { maxBlockTimestamp, type BlockClock } from "./clock.js";

export { BlockTimeExhaustedError, nextBlockTemplate, TimestampNotAfterParentError } from "./blockTemplate.js";

/** The uncles of a block on a tip with no side block near it. */
const noUncles: readonly BlockHeader[] = [];

export type MiningMode = { kind: "auto" } | { kind: "interval"; blockTimeSeconds: number } | { kind: "off" };

/** Who proves the node's blocks: its own parent-chain miner, or merged miners through the mining server only. */
export type MinerKind = "builtin" | "external";

/** A way of making a block here, asked of a node whose blocks come only from merged miners (--miner external). */
export class ExternalMiningOnlyError extends Error {
  constructor(what: string) {
    super(`${what}: this node's blocks come only from merged miners (--miner external); submit work through mnr_getWork and mnr_submitParentBlock*, or start the node with --miner builtin`);
  }
}

export interface MinerOptions {
  mode: MiningMode;
  coinbase: Uint8Array;
  extraData: Uint8Array;
  /** Seconds for the next block (the dev clock: wall clock plus offset); default: wall clock. */
  now?: () => bigint;
  /** The dev clock, whose scheduled timestamp (evm_setNextBlockTimestamp) the next block takes; wins over `now`. */
  clock?: BlockClock;
  /**
   * The network's rules for the next block: whether it may share its parent's timestamp (regtest
   * does), and the difficulty rule's constants (without them a block copies its parent's difficulty).
   */
  rules?: TemplateRules;
  /** The random prefix of each block's parent-chain coinbase (blockProof.ts); default: seeded from the block. */
  parentMinerRandom?: ParentMinerRandomSource;
  /**
   * The queue every change of the chain goes through (chain/writeQueue.ts), shared with the
   * importer and the dev methods; default: a queue of the miner's own.
   */
  writeQueue?: ChainWriteQueue;
  /**
   * "external": the miner never makes a block itself (the mode is ignored); blocks come from the
   * templates it builds (buildTemplate) once a merged miner proves one. Default "builtin".
   */
  kind?: MinerKind;
}

/** What happened to a transaction handed to automine. */
export type InclusionOutcome = { kind: "mined"; block: Block } | { kind: "dropped"; reason: string } | { kind: "waiting" };

export class Miner {
  private readonly writeQueue: ChainWriteQueue;
  /** Set by stop(): a run of automine blocks ends after the block it is building. */
  private stopping = false;
  /** State root the block builder's working state is on (hex). */
  private builderRoot: string;
  private timer: NodeJS.Timeout | undefined;
  private paused = false;
  /** Set during a long sync from peers: a block built now would be on a tip about to be left behind. */
  private heldForSync = false;
  /** Whether each accepted transaction is mined at once (evm_setAutomine). */
  private automine: boolean;
  /** Seconds between interval blocks, when interval mining is on (evm_setIntervalMining). */
  private intervalSeconds: number | undefined;
  private coinbaseAddress: Uint8Array;
  private readonly clock: BlockClock;
  /** Blocks come only from merged miners (MinerOptions.kind). */
  readonly external: boolean;

  constructor(
    private readonly chain: Chain,
    private readonly pool: TransactionPool,
    private readonly builder: Pick<BlockBuilder, "build" | "resetTo">,
    private readonly options: MinerOptions,
    private readonly log: Logger,
  ) {
    this.writeQueue = options.writeQueue ?? new ChainWriteQueue();
    const now = options.now ?? (() => BigInt(Math.floor(Date.now() / 1000)));
    this.clock = options.clock ?? { now, scheduled: () => undefined, stamped: () => undefined };
    this.external = options.kind === "external";
    this.automine = !this.external && options.mode.kind === "auto";
    this.intervalSeconds = !this.external && options.mode.kind === "interval" ? options.mode.blockTimeSeconds : undefined;
    this.coinbaseAddress = options.coinbase;
    this.builderRoot = bytesToUnprefixedHex(chain.tip.header.fields.stateRoot);
  }

  get coinbase(): Uint8Array {
    return this.coinbaseAddress;
  }

  /** The address later blocks pay their fees to (anvil_setCoinbase); the blocks already mined keep theirs. */
  set coinbase(address: Uint8Array) {
    this.coinbaseAddress = address;
  }

  /** Whether blocks come on their own (automine or interval mining, not paused). */
  get isMining(): boolean {
    return (this.automine || this.intervalSeconds !== undefined) && !this.paused && !this.heldForSync;
  }

  /** Whether a sent transaction is mined before its send returns. */
  get isAutomining(): boolean {
    return this.automine && !this.paused && !this.heldForSync;
  }

  /** Seconds between interval blocks; undefined when interval mining is off. */
  get blockTimeSeconds(): number | undefined {
    return this.intervalSeconds;
  }

  /**
   * Turns automine on or off. Turned on (and not paused), the transactions waiting in the pool are
   * mined now, one block each, and this resolves once they are on disk.
   */
  async setAutomine(enabled: boolean): Promise<void> {
    if (enabled) this.refuseIfExternal("automine");
    this.automine = enabled;
    if (enabled) await this.minePending();
  }

  /** Interval blocks every `seconds` from now on; 0 turns interval mining off (automine stays as it is). */
  setIntervalMining(seconds: number): void {
    if (seconds > 0) this.refuseIfExternal("interval mining");
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.intervalSeconds = seconds > 0 ? seconds : undefined;
    if (!this.stopping) this.startTimer();
  }

  /** Pauses automine and interval mining; explicit blocks (mineBlock) still come. */
  pause(): void {
    this.paused = true;
  }

  /**
   * Resumes automatic mining. Under automine the transactions that arrived while paused are mined
   * now, one block each, and this resolves once they are on disk; interval mining takes them at its
   * next tick.
   */
  async resume(): Promise<void> {
    this.refuseIfExternal("starting the built-in miner");
    if (!this.paused) return;
    this.paused = false;
    await this.minePending();
  }

  /**
   * Holds automine and interval mining while the node long-syncs from peers (the reference's miner
   * waits too), and lets them go on after it: under automine what arrived meanwhile is mined then.
   * Explicit blocks (evm_mine) still come. Independent of pause/resume (evm_stopMining).
   */
  async holdForSync(held: boolean): Promise<void> {
    if (this.heldForSync === held) return;
    this.heldForSync = held;
    if (!held) await this.minePending();
  }

  /**
   * Under automine (not paused), mines the pool's pending transactions now, one block each (those
   * that arrived while paused, or that a restart took back into the pool), and resolves once they
   * are on disk. Otherwise they wait for the next interval block or an explicit one.
   */
  async minePending(): Promise<void> {
    if (!this.isAutomining) return;
    const { lastWritten } = await this.enqueue(() => this.mineEachPending());
    await (lastWritten ?? this.chain.whenTipWritten());
  }

  /**
   * Runs `work` when no block is being built, and builds none until it is done (a revert of the
   * chain runs this way).
   */
  runExclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.enqueue(work);
  }

  start(): void {
    this.startTimer();
  }

  private startTimer(): void {
    if (this.intervalSeconds === undefined || this.timer !== undefined) return;
    const intervalMs = this.intervalSeconds * 1000;
    this.timer = setInterval(() => {
      if (this.paused || this.heldForSync) return;
      this.mineBlockFromPool().catch((error: unknown) => this.log.error({ err: error }, "interval block failed"));
    }, intervalMs);
  }

  /** Stops interval mining and waits for the block being built. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.stopping = true;
    await this.writeQueue.whenIdle();
  }

  /**
   * Automine: mines one-transaction blocks from the pending transactions, in order, until none is
   * left (so transactions a nonce gap held back follow the one that fills it), waits until those
   * blocks are on disk, then reports on `transaction`. A transaction still behind a gap is "waiting".
   */
  async mineUntilIncluded(transaction: ChainTransaction): Promise<InclusionOutcome> {
    const { dropReason, lastWritten, includedIn } = await this.enqueue(() => this.mineEachPending(transaction));
    // A failed write fails every block after it: the last block on disk means all of them are.
    await (lastWritten ?? this.chain.whenTipWritten());
    if (includedIn !== undefined) return { kind: "mined", block: includedIn };
    // Another send's run of blocks may have taken it.
    const location = await this.chain.getTransactionLocation(transaction.hash);
    if (location !== undefined) return { kind: "mined", block: (await this.chain.getBlockByHash(location.blockHash))! };
    if (dropReason !== undefined) return { kind: "dropped", reason: dropReason };
    return this.pool.get(transaction.hash) === undefined ? { kind: "dropped", reason: "transaction wasn't mined" } : { kind: "waiting" };
  }

  /** Mines one block from `candidates` (may be empty), now, and answers it once it is on disk. */
  mineBlock(candidates: readonly ChainTransaction[]): Promise<Block> {
    return this.mineOne(() => candidates);
  }

  /**
   * Mines one block from the transactions pending when its turn in the queue comes (not when it
   * was asked for: a revert queued before it may change the pool): now, or at exactly `timestamp`,
   * which must be after the parent's (else TimestampNotAfterParentError); then runs `afterBuild`
   * still inside the queue. Answers the block once it is on disk.
   */
  mineBlockFromPool(timestamp?: bigint, afterBuild?: () => void): Promise<Block> {
    return this.mineOne(() => this.pool.pending(), timestamp, afterBuild);
  }

  /**
   * Mines a dev block: `edit` changes the state (anvil_setBalance and the like) and the block holds
   * no transaction. It keeps the parent's timestamp where the rules allow (else parent + 1): it
   * changes the state, not the time, and leaves a scheduled timestamp to the next block. `afterBuild`
   * runs in the queue once the block is the tip. Answers the block once it is on disk.
   */
  async mineStateChange(edit: StateEdit, afterBuild?: () => Promise<void>): Promise<Block> {
    this.refuseIfExternal("a change of the state is made by mining a block");
    const { built, written } = await this.enqueue(async () => {
      await this.giveTurnIfDue();
      const appended = await this.buildAndAppend([], undefined, edit);
      await afterBuild?.();
      return appended;
    });
    await written;
    return built.block;
  }

  /**
   * A block for merged miners to prove (mining/mergedMiningServer.ts): the pool's pending
   * transactions on the tip, at the clock's time, built and executed but not proven nor appended.
   * Its trie nodes wait in the state database's unwritten set; they reach the disk with the next
   * block written (this one once proven, or another: nodes are keyed by hash, extra ones are inert).
   */
  buildTemplate(): Promise<BuiltBlock> {
    return this.enqueue(() => this.buildOn(this.chain.tip, this.pool.pending(), this.clock.now(), undefined, false));
  }

  private refuseIfExternal(what: string): void {
    if (this.external) throw new ExternalMiningOnlyError(what);
  }

  private async mineOne(candidates: () => readonly ChainTransaction[], timestamp?: bigint, afterBuild?: () => void): Promise<Block> {
    this.refuseIfExternal("mining a block");
    const { built, written } = await this.enqueue(async () => {
      // The turn comes before the candidates are read: a replacement arriving in it is seen.
      await this.giveTurnIfDue();
      const appended = await this.buildAndAppend(candidates(), timestamp);
      afterBuild?.();
      return appended;
    });
    await written;
    return built.block;
  }

  /**
   * Mines the pending transactions one block each (automine), until none is left, a gap holds the
   * next back, or mining was paused meanwhile (a send queued before evm_stopMining then waits).
   */
  private async mineEachPending(watched?: ChainTransaction): Promise<{ dropReason: string | undefined; lastWritten: Promise<void> | undefined; includedIn: Block | undefined }> {
    let dropReason: string | undefined;
    let lastWritten: Promise<void> | undefined;
    /** The block that took `watched`, when one of these did. */
    let includedIn: Block | undefined;
    for (;;) {
      await this.giveTurnIfDue();
      const next = this.pool.pending()[0];
      if (next === undefined || this.paused || this.heldForSync || this.stopping) break;
      const { built, written } = await this.buildAndAppend([next]);
      lastWritten = written;
      const skippedNext = built.skipped.find((entry) => entry.transaction === next);
      if (skippedNext?.deferred === true) break;
      if (skippedNext !== undefined && next === watched) dropReason = skippedNext.reason;
      if (skippedNext === undefined && next === watched) includedIn = built.block;
    }
    return { dropReason, lastWritten, includedIn };
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    return this.writeQueue.run(work);
  }

  /** Gives the event loop a turn once blocks have been built for a slice without one. */
  private giveTurnIfDue(): Promise<void> {
    return this.writeQueue.yieldIfDue();
  }

  /**
   * Builds a block on the chain's tip and appends it; the chain writes it in the background. When
   * a failed write took the tip back while the block was being built, the block is thrown away
   * and built again on the new tip: its transactions are still in the pool.
   */
  private async buildAndAppend(candidates: readonly ChainTransaction[], timestamp?: bigint, edit?: StateEdit): Promise<{ built: BuiltBlock; written: Promise<void> }> {
    for (;;) {
      const parent = this.chain.tip;
      const parentTimestamp = parent.header.fields.timestamp;
      // A scheduled time goes to the next block that carries transactions or was asked for, not to a dev block.
      const scheduled = timestamp === undefined && edit === undefined ? this.clock.scheduled() : undefined;
      const exact = timestamp ?? scheduled;
      if (exact !== undefined && exact <= parentTimestamp) throw new TimestampNotAfterParentError(exact, parentTimestamp);
      const built = await this.buildOn(parent, candidates, exact ?? (edit !== undefined ? parentTimestamp : this.clock.now()), edit);
      if (scheduled !== undefined) this.clock.stamped(scheduled);
      if (this.chain.tip !== parent) {
        this.log.warn({ number: Number(built.block.number) }, "the tip went back while the block was built; building again");
        continue;
      }
      const written = this.chain.appendBlock(built.block, built.receipts);
      written.catch((error: unknown) => this.returnToPool(built.block, error));
      for (const { transaction, reason, deferred } of built.skipped) {
        if (deferred) continue;
        this.log.debug({ hash: bytesToHex(transaction.hash), reason }, "transaction dropped: the block builder cannot run it");
        this.pool.remove(transaction);
      }
      // The pool's journal keeps their entries until the block is on disk.
      this.pool.onBlockMined(built.block.transactions, written);
      return { built, written };
    }
  }

  /** A block that could not be written: its transactions go back to the pool, checked against the tip again. */
  private returnToPool(block: Block, error: unknown): void {
    this.log.error({ err: error, number: Number(block.number) }, "block write failed; its transactions go back to the pool");
    for (const transaction of block.transactions) {
      this.pool.add(transaction).catch((rejection: unknown) => {
        this.log.warn({ hash: bytesToHex(transaction.hash), reason: (rejection as Error).message }, "transaction of an unwritten block not taken back");
      });
    }
  }

  /**
   * The uncles a block on `parent` includes: the side blocks stored within the uncle window that
   * no ancestor included yet (consensus/uncleSelection.ts). A chain without side blocks near the
   * tip (every dev chain that imported nothing) reads nothing.
   */
  private async unclesFor(parent: Block): Promise<readonly BlockHeader[]> {
    const limits = this.options.rules?.uncles;
    const blockNumber = parent.number + 1n;
    if (limits === undefined || !this.mayHaveUncles(parent)) return noUncles;
    const ancestors = await collectAncestors(blockNumber, parent.hash, limits.uncleGenerationLimit, (hash) => this.chain.getBlockFromTip(hash));
    const headersAt = new Map<bigint, BlockHeader[]>();
    for (const ancestor of ancestors) headersAt.set(ancestor.header.number, await this.chain.headersAt(ancestor.header.number));
    return selectUncles(blockNumber, { ancestors, headersAt: (number) => headersAt.get(number) ?? [] }, limits);
  }

  /** Whether a side block is stored within the uncle window of a block on `parent` (see unclesFor). */
  private mayHaveUncles(parent: Block): boolean {
    const limits = this.options.rules?.uncles;
    return limits !== undefined && this.chain.hasSideBlocksFrom(oldestFamilyNumber(parent.number + 1n, limits.uncleGenerationLimit));
  }

  /** `clockTime` is the block's time unless the parent's forbids it (nextBlockTemplate). */
  private async buildOn(parent: Block, candidates: readonly ChainTransaction[], clockTime: bigint, edit: StateEdit | undefined, prove = true): Promise<BuiltBlock> {
    const parentRoot = parent.header.fields.stateRoot;
    // After a failed write the tip went back: so does the working state.
    if (bytesToUnprefixedHex(parentRoot) !== this.builderRoot) {
      await this.builder.resetTo(parentRoot);
      this.builderRoot = bytesToUnprefixedHex(parentRoot);
    }
    // Most chains hold no side block near the tip: nothing to wait for then.
    const uncles = this.mayHaveUncles(parent) ? await this.unclesFor(parent) : noUncles;
    const template = nextBlockTemplate(parent, { coinbase: this.coinbaseAddress, extraData: this.options.extraData }, clockTime, this.options.rules, uncles);
    if (template.timestamp > maxBlockTimestamp) throw new BlockTimeExhaustedError(parent.header.fields.timestamp);
    try {
      const built = await this.builder.build(template, candidates, edit);
      this.builderRoot = bytesToUnprefixedHex(built.block.header.fields.stateRoot);
      // The block is complete but for its proof of work, which its hash then covers.
      return prove ? { ...built, block: proveBlock(built.block, this.options.parentMinerRandom ?? seededFromBlock) } : built;
    } catch (error) {
      await this.builder.resetTo(parentRoot);
      throw error;
    }
  }
}
