// The logs of the most recent canonical blocks, kept in memory (compacted: see compactBlockLogs) so
// log queries over them cost a map lookup and a bloom test per block: filled as blocks reach the
// disk and, for older blocks inside the window, on first read. Blocks below the window are read
// from the chain on every query.
//
// Added blocks are indexed after the turn that wrote them (a send's answer does not wait for it),
// or at the first read before that. A block without logs is held as its number alone: in a dev
// chain most blocks have none, and a record per block (hash, bloom, entry) cost some 400 bytes.
//
// A preparation (setPreparation: the RPC layer's wire text of the logs) runs on the blocks indexed
// with logs once no block has come for `preparationIdleMs`, a bounded number of logs per turn, so
// that the first query over new blocks finds their logs ready, and mining neither waits for it nor
// shares its turns with it: during a burst of blocks (a test suite's sends) the texts wait, and a
// query in the middle of the burst makes those it needs itself. Only the most recent blocks are
// prepared, and only while held: a block that left (revert, reorganisation) is skipped.
import { StoredDataDamagedError, type Chain } from "../chain/chain.js";
import type { BlockWithReceipts, ChainHeadListener } from "../chain/events.js";
import { emptyBloom } from "../chain/header.js";
import { blockLogsOf, compactBlockLogs, type BlockLogs } from "./blockLogs.js";

export interface BlockLogIndexOptions {
  /** The window: this many blocks below and including the head. */
  readonly maxBlocks: number;
  /** Most logs held; past it the window shrinks from below until it fits. */
  readonly maxLogs: number;
  /** The preparation waits until no block has come for this long (0: the turns right after). */
  readonly preparationIdleMs: number;
}

export const defaultBlockLogIndexOptions: BlockLogIndexOptions = { maxBlocks: 8192, maxLogs: 200_000, preparationIdleMs: 2 };

/** Reads of a block whose receipts are missing before that is an error (see canonical). */
const maxReadsWithoutReceipts = 3;

/** Most logs prepared in one turn of the event loop (some 2-3 µs each, warm). */
const preparedLogsPerTurn = 500;
/** Most logs waiting to be prepared: past it the oldest blocks are left to be prepared at their first query. */
const maxLogsToPrepare = 20_000;

/** What `held` answers for a block of the window known to have emitted no logs. */
export const heldWithoutLogs: unique symbol = Symbol("held without logs");

export class BlockLogIndex implements ChainHeadListener {
  private readonly withLogs = new Map<bigint, BlockLogs>();
  private readonly withoutLogs = new Set<bigint>();
  private logCount = 0;
  /** Blocks added and not indexed yet, in the order they came. */
  private pending: (readonly BlockWithReceipts[])[] = [];
  private pendingRun: NodeJS.Immediate | undefined;
  /** Blocks at or below this number are not held. */
  private floor: bigint;
  /** The chain's removals so far: a read that one overtook is made again (canonical). */
  private removals = 0;
  private readonly unsubscribe: () => void;
  private preparation: ((logs: BlockLogs) => void) | undefined;
  /** Blocks held with logs and not prepared yet, oldest first, and how many logs they have. */
  private toPrepare: BlockLogs[] = [];
  private logsToPrepare = 0;
  /** The preparation's next run: in the next turn, or once the blocks stop coming (never both). */
  private preparationTurn: NodeJS.Immediate | undefined;
  private preparationTimer: NodeJS.Timeout | undefined;
  /** performance.now() when the last block waiting for its preparation came. */
  private lastQueuedAt = 0;

  /** Follows the chain's head from now on; a failure while following goes to `reportError`. */
  constructor(
    private readonly chain: Pick<Chain, "head" | "getBlockByNumber" | "getReceipts" | "getCanonicalHash" | "subscribeHead">,
    private readonly reportError: (error: unknown) => void,
    private readonly options: BlockLogIndexOptions = defaultBlockLogIndexOptions,
  ) {
    this.floor = this.windowFloor();
    this.unsubscribe = chain.subscribeHead(this, reportError);
  }

  /** Stops following the chain and lets go of what it holds. */
  close(): void {
    this.unsubscribe();
    if (this.pendingRun !== undefined) clearImmediate(this.pendingRun);
    this.pendingRun = undefined;
    this.cancelPreparationRun();
    this.preparation = undefined;
    this.toPrepare = [];
    this.logsToPrepare = 0;
    this.pending = [];
    this.withLogs.clear();
    this.withoutLogs.clear();
    this.logCount = 0;
  }

  /**
   * Has `prepare` run on each block indexed with logs from now on, in the turns after it is indexed
   * (see the header). A failure is reported and fails nothing else.
   */
  setPreparation(prepare: (logs: BlockLogs) => void): void {
    this.preparation = prepare;
  }

  /**
   * The logs of canonical block `number` when held, `heldWithoutLogs` when it is known to have
   * none, else undefined (no await on the hot path of a query).
   */
  held(number: bigint): BlockLogs | typeof heldWithoutLogs | undefined {
    this.indexPending();
    return this.withLogs.get(number) ?? (this.withoutLogs.has(number) ? heldWithoutLogs : undefined);
  }

  /**
   * The logs of canonical block `number`; undefined past the head. When a revert overtakes the
   * reads, they are made again: the answer is of the chain after it, and a block read before it is
   * not held (the revert forgot the removed blocks already, so it would stay held for good).
   */
  async canonical(number: bigint): Promise<BlockLogs | undefined> {
    for (let readsWithoutReceipts = 0; ; ) {
      const held = this.held(number);
      if (held === heldWithoutLogs) {
        const hash = await this.chain.getCanonicalHash(number);
        return hash === undefined ? undefined : { number, hash, bloom: emptyBloom, transactions: [], logCount: 0 };
      }
      if (held !== undefined) return held;
      const removalsBefore = this.removals;
      const block = await this.chain.getBlockByNumber(number);
      if (block === undefined) return undefined;
      const receipts = await this.chain.getReceipts(block.hash);
      if (this.removals !== removalsBefore) continue;
      if (receipts === undefined) {
        if (++readsWithoutReceipts > maxReadsWithoutReceipts) throw new StoredDataDamagedError(`the store is damaged: the receipts of canonical block ${block.number} are missing`);
        // A revert deletes its blocks' receipts before it moves the head and tells its listeners
        // (Chain.revert): read again once it has.
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      const logs = blockLogsOf(block, receipts);
      const fits = this.logCount + logs.logCount <= this.options.maxLogs;
      if (!fits || number <= this.floor) return logs;
      const compact = compactBlockLogs(logs);
      this.hold(compact);
      return compact;
    }
  }

  /** Blocks held, with logs or without. */
  get size(): number {
    this.indexPending();
    return this.withLogs.size + this.withoutLogs.size;
  }

  blocksAdded(blocks: readonly BlockWithReceipts[]): void {
    this.pending.push(blocks);
    this.pendingRun ??= setImmediate(() => {
      this.pendingRun = undefined;
      this.indexPending();
    });
  }

  blocksRemoved(blocks: readonly BlockWithReceipts[]): void {
    this.removals++;
    this.indexPending();
    for (const { block } of blocks) {
      const held = this.withLogs.get(block.number);
      // A block without logs is held by number alone: forgotten whichever block left.
      if ((held !== undefined && Buffer.compare(held.hash, block.hash) === 0) || this.withoutLogs.has(block.number)) this.forget(block.number);
    }
    // The window follows the head down, so that the blocks mined again after a revert are held.
    const windowFloor = this.windowFloor();
    if (windowFloor < this.floor) this.floor = windowFloor;
  }

  /** The highest block number below the window of the current head. */
  private windowFloor(): bigint {
    return this.chain.head.number - BigInt(this.options.maxBlocks);
  }

  /**
   * Indexes the blocks added since the last time. A block that cannot be indexed is reported and
   * left to be read from the chain; it fails neither the read that flushed it nor the others.
   */
  private indexPending(): void {
    if (this.pending.length === 0) return;
    const pending = this.pending;
    this.pending = [];
    for (const blocks of pending) {
      for (const { block, receipts } of blocks) {
        if (block.number <= this.floor) continue;
        try {
          const logs = compactBlockLogs(blockLogsOf(block, receipts));
          this.hold(logs);
          if (logs.logCount > 0 && this.preparation !== undefined) this.queuePreparation(logs);
        } catch (error) {
          this.reportError(error);
        }
      }
    }
    const windowFloor = this.windowFloor();
    while (this.floor < windowFloor) this.forget(++this.floor);
    this.shrinkToFit();
  }

  private queuePreparation(logs: BlockLogs): void {
    this.toPrepare.push(logs);
    this.logsToPrepare += logs.logCount;
    while (this.logsToPrepare > maxLogsToPrepare && this.toPrepare.length > 1) this.logsToPrepare -= this.toPrepare.shift()!.logCount;
    this.lastQueuedAt = performance.now();
    this.schedulePreparation();
  }

  /** Runs prepareSome once no block has come for preparationIdleMs (at once in the next turn when 0). */
  private schedulePreparation(): void {
    if (this.preparationTurn !== undefined || this.preparationTimer !== undefined) return;
    const idleMs = this.options.preparationIdleMs;
    if (idleMs === 0) {
      this.preparationTurn = setImmediate(() => this.prepareSome());
      return;
    }
    const quietFor = performance.now() - this.lastQueuedAt;
    this.preparationTimer = setTimeout(
      () => {
        this.preparationTimer = undefined;
        if (performance.now() - this.lastQueuedAt < idleMs) this.schedulePreparation();
        else this.prepareSome();
      },
      Math.max(1, idleMs - quietFor),
    );
  }

  private cancelPreparationRun(): void {
    if (this.preparationTurn !== undefined) clearImmediate(this.preparationTurn);
    if (this.preparationTimer !== undefined) clearTimeout(this.preparationTimer);
    this.preparationTurn = undefined;
    this.preparationTimer = undefined;
  }

  /** Prepares the oldest waiting blocks still held, up to preparedLogsPerTurn logs; the rest in a later turn. */
  private prepareSome(): void {
    this.preparationTurn = undefined;
    const prepare = this.preparation;
    if (prepare === undefined) return;
    let prepared = 0;
    let taken = 0;
    while (taken < this.toPrepare.length && prepared < preparedLogsPerTurn) {
      const logs = this.toPrepare[taken++]!;
      this.logsToPrepare -= logs.logCount;
      if (this.withLogs.get(logs.number) !== logs) continue;
      prepared += logs.logCount;
      try {
        prepare(logs);
      } catch (error) {
        this.reportError(error);
      }
    }
    this.toPrepare.splice(0, taken);
    // The rest in the next turn, or once the blocks that came meanwhile stop.
    if (this.toPrepare.length > 0) {
      if (performance.now() - this.lastQueuedAt < this.options.preparationIdleMs) this.schedulePreparation();
      else this.preparationTurn = setImmediate(() => this.prepareSome());
    }
  }

  private hold(logs: BlockLogs): void {
    this.forget(logs.number);
    if (logs.logCount === 0) {
      this.withoutLogs.add(logs.number);
      return;
    }
    this.withLogs.set(logs.number, logs);
    this.logCount += logs.logCount;
  }

  private forget(number: bigint): void {
    if (this.withoutLogs.delete(number)) return;
    const held = this.withLogs.get(number);
    if (held === undefined) return;
    this.withLogs.delete(number);
    this.logCount -= held.logCount;
  }

  private shrinkToFit(): void {
    const head = this.chain.head.number;
    while (this.logCount > this.options.maxLogs && this.floor < head) this.forget(++this.floor);
  }
}
