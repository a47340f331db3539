// The logs of the most recent canonical blocks, kept in memory (compacted: see compactBlockLogs) so
// log queries over them cost a map lookup and a bloom test per block: filled as blocks reach the
// disk and, for older blocks inside the window, on first read. Blocks below the window are read
// from the chain on every query.
import type { Chain } from "../chain/chain.js";
import type { BlockWithReceipts, ChainHeadListener } from "../chain/events.js";
import { blockLogsOf, compactBlockLogs, type BlockLogs } from "./blockLogs.js";

export interface BlockLogIndexOptions {
  /** The window: this many blocks below and including the head. */
  readonly maxBlocks: number;
  /** Most logs held; past it the window shrinks from below until it fits. */
  readonly maxLogs: number;
}

export const defaultBlockLogIndexOptions: BlockLogIndexOptions = { maxBlocks: 8192, maxLogs: 200_000 };

export class BlockLogIndex implements ChainHeadListener {
  private readonly byNumber = new Map<bigint, BlockLogs>();
  private logCount = 0;
  /** Blocks at or below this number are not held. */
  private floor: bigint;
  private readonly unsubscribe: () => void;

  /** Follows the chain's head from now on; a failure while following goes to `reportError`. */
  constructor(
    private readonly chain: Pick<Chain, "head" | "getBlockByNumber" | "getReceipts" | "getCanonicalHash" | "subscribeHead">,
    reportError: (error: unknown) => void,
    private readonly options: BlockLogIndexOptions = defaultBlockLogIndexOptions,
  ) {
    this.floor = chain.head.number - BigInt(options.maxBlocks);
    this.unsubscribe = chain.subscribeHead(this, reportError);
  }

  /** Stops following the chain and lets go of what it holds. */
  close(): void {
    this.unsubscribe();
    this.byNumber.clear();
    this.logCount = 0;
  }

  /** The logs of canonical block `number` when held (no await on the hot path of a query). */
  held(number: bigint): BlockLogs | undefined {
    return this.byNumber.get(number);
  }

  /** The logs of canonical block `number`; undefined past the head. */
  async canonical(number: bigint): Promise<BlockLogs | undefined> {
    const held = this.byNumber.get(number);
    if (held !== undefined) return held;
    const block = await this.chain.getBlockByNumber(number);
    if (block === undefined) return undefined;
    const receipts = await this.chain.getReceipts(block.hash);
    if (receipts === undefined) throw new Error(`the receipts of block ${block.number} are missing from the store`);
    const logs = blockLogsOf(block, receipts);
    // Still canonical after the reads (a revert may have run between them): then worth keeping.
    const canonicalHash = await this.chain.getCanonicalHash(number);
    const fits = this.logCount + logs.logCount <= this.options.maxLogs;
    if (!fits || number <= this.floor || canonicalHash === undefined || Buffer.compare(canonicalHash, block.hash) !== 0) return logs;
    const compact = compactBlockLogs(logs);
    this.hold(compact);
    return compact;
  }

  get size(): number {
    return this.byNumber.size;
  }

  blocksAdded(blocks: readonly BlockWithReceipts[]): void {
    for (const { block, receipts } of blocks) this.hold(compactBlockLogs(blockLogsOf(block, receipts)));
    const windowFloor = this.chain.head.number - BigInt(this.options.maxBlocks);
    while (this.floor < windowFloor) this.forget(++this.floor);
    this.shrinkToFit();
  }

  blocksRemoved(blocks: readonly BlockWithReceipts[]): void {
    for (const { block } of blocks) {
      const held = this.byNumber.get(block.number);
      if (held !== undefined && Buffer.compare(held.hash, block.hash) === 0) this.forget(block.number);
    }
  }

  private hold(logs: BlockLogs): void {
    this.forget(logs.number);
    this.byNumber.set(logs.number, logs);
    this.logCount += logs.logCount;
  }

  private forget(number: bigint): void {
    const held = this.byNumber.get(number);
    if (held === undefined) return;
    this.byNumber.delete(number);
    this.logCount -= held.logCount;
  }

  private shrinkToFit(): void {
    const head = this.chain.head.number;
    while (this.logCount > this.options.maxLogs && this.floor < head) this.forget(++this.floor);
  }
}
