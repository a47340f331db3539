// Installed filters (spec 3.1): log filters, block filters and pending-transaction filters, each
// collecting what happened since its previous poll. Fed by the chain's head events (blocks on disk,
// and blocks removed, whose logs come back with removed = true) and by the pool's pending
// transactions. A filter not polled for the timeout is removed; the sweep timer never keeps the
// process alive. What filters hold between polls is bounded: each keeps its newest changes up to
// a share of one budget for all (a filter nobody polls cannot fill the memory), and a log
// delivered to many filters is one object they share.
import { randomBytes } from "node:crypto";
import type { Chain } from "../chain/chain.js";
import type { BlockWithReceipts, ChainHeadListener } from "../chain/events.js";
import type { ChainLog } from "../chain/receipts.js";
import type { ChainTransaction } from "../chain/transactions.js";
import type { TransactionPool } from "../txpool/transactionPool.js";
import { blockLogsOf } from "./blockLogs.js";
import type { LogMatcher } from "./logCriteria.js";
import { collectBlockLogs, isWithinBounds, type BlockBound, type LocatedLog } from "./logQuery.js";
import type { LogOptions } from "./options.js";

/** The query of a log filter, as installed. */
export interface LogFilterQuery {
  readonly matcher: LogMatcher;
  readonly from: BlockBound;
  readonly to: BlockBound;
}

interface FilterState {
  lastPolledAt: number;
  /** Changes dropped (the oldest) since the filter was last polled. */
  dropped: number;
}

type InstalledFilter =
  | ({ readonly kind: "logs"; readonly query: LogFilterQuery; logs: LocatedLog[] } & FilterState)
  | ({ readonly kind: "blocks" | "pendingTransactions"; hashes: Uint8Array[] } & FilterState);

/** What a filter collected since its previous poll. */
export type FilterChanges = { readonly kind: "logs"; readonly logs: readonly LocatedLog[] } | { readonly kind: "hashes"; readonly hashes: readonly Uint8Array[] };

export interface FilterManagerOptions extends Pick<LogOptions, "filterTimeoutMs"> {
  /** Milliseconds on a monotonic clock (tests may pass their own). */
  now?: () => number;
  /** A fresh random id as a QUANTITY (tests may pass their own). */
  newId?: () => string;
  /** Where a failure while delivering to filters is reported (the chain and the pool go on). */
  reportError: (error: unknown) => void;
  /** Told once per poll interval when a filter starts dropping its oldest changes. */
  reportDropping?: (filterId: string, kept: number) => void;
}

/** Most filters installed at once: each one is matched against every new block. */
export const maxInstalledFilters = 10_000;

/**
 * Most changes (logs or hashes) one filter holds between polls; past it the oldest are dropped, as
 * Erigon does. A poll after a drop answers the newest ones.
 */
export const maxChangesPerFilter = 10_000;

/**
 * Most changes all filters hold together: with more than 200 filters installed, each keeps its
 * equal share (10,000 filters keep 200 each). A held change costs a reference, plus one shared
 * object per log.
 */
export const maxChangesHeld = 2_000_000;

/** Installing one more filter would pass maxInstalledFilters. */
export class TooManyFiltersError extends Error {
  constructor(readonly limit: number) {
    super(`too many filters installed (${limit}); uninstall some, or let unpolled ones expire`);
  }
}

/** The longest pause between two sweeps of expired filters. */
const maxSweepIntervalMs = 60_000;

/** 128 random bits as a QUANTITY (no leading zeros). */
function randomFilterId(): string {
  return `0x${BigInt(`0x${randomBytes(16).toString("hex")}`).toString(16)}`;
}

/** The one spelling of a QUANTITY id: lower case, no leading zeros. */
function idKey(id: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{1,64}$/.test(id)) return undefined;
  return `0x${BigInt(id).toString(16)}`;
}

export class FilterManager implements ChainHeadListener {
  private readonly filters = new Map<string, InstalledFilter>();
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly unsubscribe: (() => void)[];
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    chain: Pick<Chain, "subscribeHead">,
    pool: Pick<TransactionPool, "subscribePending">,
    private readonly options: FilterManagerOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
    this.newId = options.newId ?? randomFilterId;
    this.unsubscribe = [
      chain.subscribeHead(this, options.reportError),
      pool.subscribePending((transactions) => this.pendingTransactionsAdded(transactions), options.reportError),
    ];
  }

  installLogFilter(query: LogFilterQuery): string {
    return this.install({ kind: "logs", query, lastPolledAt: this.now(), dropped: 0, logs: [] });
  }

  installBlockFilter(): string {
    return this.install({ kind: "blocks", lastPolledAt: this.now(), dropped: 0, hashes: [] });
  }

  installPendingTransactionFilter(): string {
    return this.install({ kind: "pendingTransactions", lastPolledAt: this.now(), dropped: 0, hashes: [] });
  }

  /** Hands over what the filter collected and starts collecting anew; undefined for an unknown or expired id. */
  takeChanges(id: string): FilterChanges | undefined {
    const filter = this.find(id);
    if (filter === undefined) return undefined;
    filter.lastPolledAt = this.now();
    filter.dropped = 0;
    if (filter.kind === "logs") {
      const logs = filter.logs;
      filter.logs = [];
      return { kind: "logs", logs };
    }
    const hashes = filter.hashes;
    filter.hashes = [];
    return { kind: "hashes", hashes };
  }

  /**
   * Gives back the changes of a poll whose answer carried only the first `sent` of them: the rest
   * are the first of the next poll. Nothing happens for a filter removed meanwhile.
   */
  returnUnsent(id: string, changes: FilterChanges, sent: number): void {
    const filter = this.find(id);
    if (filter === undefined) return;
    if (filter.kind === "logs" && changes.kind === "logs") filter.logs = [...changes.logs.slice(sent), ...filter.logs];
    else if (filter.kind !== "logs" && changes.kind === "hashes") filter.hashes = [...changes.hashes.slice(sent), ...filter.hashes];
  }

  /** The query of a log filter; undefined for an unknown or expired id or another kind of filter. */
  logFilterQuery(id: string): LogFilterQuery | undefined {
    const filter = this.find(id);
    return filter?.kind === "logs" ? filter.query : undefined;
  }

  /** true when the filter existed (and had not expired) and is now removed. */
  uninstall(id: string): boolean {
    const filter = this.find(id);
    if (filter === undefined) return false;
    this.filters.delete(idKey(id)!);
    this.stopSweepWhenIdle();
    return true;
  }

  get size(): number {
    return this.filters.size;
  }

  blocksAdded(blocks: readonly BlockWithReceipts[]): void {
    this.deliverBlocks(blocks, false);
  }

  blocksRemoved(blocks: readonly BlockWithReceipts[]): void {
    this.deliverBlocks(blocks, true);
  }

  /** Stops listening to the chain and the pool and forgets every filter. */
  close(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    this.filters.clear();
    this.stopSweepWhenIdle();
  }

  private deliverBlocks(blocks: readonly BlockWithReceipts[], removed: boolean): void {
    if (this.filters.size === 0) return;
    const blockLogs = blocks.map(({ block, receipts }) => blockLogsOf(block, receipts));
    const sharedLogs = new Map<ChainLog, LocatedLog>();
    const keep = this.changesKeptPerFilter();
    for (const [id, filter] of this.filters) {
      if (filter.kind === "logs") {
        const { matcher, from, to } = filter.query;
        for (const logs of blockLogs) if (isWithinBounds(logs.number, from, to)) collectBlockLogs(matcher, logs, removed, filter.logs, sharedLogs);
        if (filter.logs.length > keep) filter.logs = this.newest(id, filter, filter.logs, keep);
      } else if (filter.kind === "blocks" && !removed) {
        // Block filters report new blocks only, as geth's: a removed block's hash is not news.
        for (const { block } of blocks) filter.hashes.push(block.hash);
        if (filter.hashes.length > keep) filter.hashes = this.newest(id, filter, filter.hashes, keep);
      }
    }
  }

  private pendingTransactionsAdded(transactions: readonly ChainTransaction[]): void {
    const keep = this.changesKeptPerFilter();
    for (const [id, filter] of this.filters) {
      if (filter.kind !== "pendingTransactions") continue;
      for (const transaction of transactions) filter.hashes.push(transaction.hash);
      if (filter.hashes.length > keep) filter.hashes = this.newest(id, filter, filter.hashes, keep);
    }
  }

  /** How many changes each filter may hold now: its share of maxChangesHeld, at most maxChangesPerFilter. */
  private changesKeptPerFilter(): number {
    return Math.min(maxChangesPerFilter, Math.floor(maxChangesHeld / Math.max(1, this.filters.size)));
  }

  /** The newest `keep` of a filter's changes; the first drop since its last poll is reported. */
  private newest<T>(id: string, filter: InstalledFilter, changes: T[], keep: number): T[] {
    if (filter.dropped === 0) this.options.reportDropping?.(id, keep);
    filter.dropped += changes.length - keep;
    return changes.slice(changes.length - keep);
  }

  private install(filter: InstalledFilter): string {
    if (this.filters.size >= maxInstalledFilters) {
      this.sweep();
      if (this.filters.size >= maxInstalledFilters) throw new TooManyFiltersError(maxInstalledFilters);
    }
    let id = idKey(this.newId())!;
    while (this.filters.has(id)) id = idKey(this.newId())!;
    this.filters.set(id, filter);
    this.startSweep();
    return id;
  }

  /** The filter under `id` unless it expired (then it is removed now). */
  private find(id: string): InstalledFilter | undefined {
    const key = idKey(id);
    const filter = key === undefined ? undefined : this.filters.get(key);
    if (filter === undefined) return undefined;
    if (this.isExpired(filter, this.now())) {
      this.filters.delete(key!);
      this.stopSweepWhenIdle();
      return undefined;
    }
    return filter;
  }

  private isExpired(filter: InstalledFilter, now: number): boolean {
    return now - filter.lastPolledAt >= this.options.filterTimeoutMs;
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, filter] of this.filters) if (this.isExpired(filter, now)) this.filters.delete(id);
    this.stopSweepWhenIdle();
  }

  private startSweep(): void {
    if (this.sweepTimer !== undefined) return;
    this.sweepTimer = setInterval(() => this.sweep(), Math.min(this.options.filterTimeoutMs, maxSweepIntervalMs));
    this.sweepTimer.unref();
  }

  private stopSweepWhenIdle(): void {
    if (this.filters.size > 0 || this.sweepTimer === undefined) return;
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }
}
