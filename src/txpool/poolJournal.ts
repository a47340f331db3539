// The pool's transactions on disk, so that a transaction whose hash a send call answered is, after
// a crash or a restart, either in a block or back in the pool (reliability contract, §4b). Each
// held transaction is one store entry, p<arrival>, holding its signed bytes; the order of arrival
// keeps the pool's order of senders across a restart.
//
// The pool tells the journal what it takes and lets go of; the journal writes only when asked
// (flush): before a send call answers for a transaction that stays in the pool, after a revert has
// put the pool back, and when the node closes. A transaction mined before its send answers (under
// automine, nearly all) is taken and let go of between two flushes and is never written at all.
// Entries of mined transactions are deleted at the next flush; one a crash leaves behind is
// dropped at the next start, where every entry is checked against the chain again.
import type { Common } from "@ethereumjs/common";
import { decodeRawTransaction, type ChainTransaction } from "../chain/transactions.js";
import type { KeyValueStore, StoreOperation } from "../storage/keyValueStore.js";
import { storeKeys } from "../storage/keys.js";
import type { PoolObserver } from "./transactionPool.js";

/** A stored entry the journal cannot decode any more, and why (it is deleted). */
export interface UnreadableEntry {
  readonly key: Uint8Array;
  readonly reason: string;
}

export class PoolJournal implements PoolObserver {
  /**
   * Transactions whose entry is in the store (or in a write on its way there), with the entry's
   * key: those the pool holds, and for the length of a revert those written ahead of it.
   */
  private readonly written = new Map<ChainTransaction, Uint8Array>();
  /** Held transactions not written yet. */
  private readonly toWrite = new Set<ChainTransaction>();
  /** Entries of transactions the pool let go of, not deleted yet. */
  private readonly toDelete = new Map<ChainTransaction, Uint8Array>();
  private nextArrival = 0n;
  /** The last batch written: a flush with nothing new still waits until it is durable. */
  private lastWrite: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: KeyValueStore,
    private readonly common: Common,
  ) {}

  /**
   * The transactions the store holds, in order of arrival, for the pool to take back (restart);
   * each is then counted as written. Entries that no longer decode are deleted at once.
   */
  async load(): Promise<{ transactions: ChainTransaction[]; unreadable: UnreadableEntry[] }> {
    const transactions: ChainTransaction[] = [];
    const unreadable: UnreadableEntry[] = [];
    for (const { key, value } of await this.store.entries(storeKeys.pooledTransactions)) {
      if (key.length !== storeKeys.pooledTransactions.length + 8) {
        unreadable.push({ key, reason: "not an entry of the pool's journal (key length)" });
        continue;
      }
      const arrival = new DataView(key.buffer, key.byteOffset + storeKeys.pooledTransactions.length, 8).getBigUint64(0);
      if (arrival >= this.nextArrival) this.nextArrival = arrival + 1n;
      let transaction: ChainTransaction;
      try {
        transaction = decodeRawTransaction(value, this.common);
      } catch (error) {
        unreadable.push({ key, reason: (error as Error).message });
        continue;
      }
      this.written.set(transaction, key);
      transactions.push(transaction);
    }
    if (unreadable.length > 0) await this.store.write(unreadable.map(({ key }) => ({ type: "del", key })));
    return { transactions, unreadable };
  }

  /**
   * Writes entries for `transactions` whether the pool holds them or not, and settles once they are
   * durable: before a revert cuts the chain, the snapshot's pool (which may hold transactions the
   * cut takes out of blocks) must be on disk, or a crash between the cut and the pool's restore
   * would lose them. dropUnheld after the restore deletes those the pool did not take.
   */
  writeAhead(transactions: readonly ChainTransaction[]): Promise<void> {
    const operations: StoreOperation[] = [];
    for (const transaction of transactions) {
      if (this.written.has(transaction)) continue;
      const stillStored = this.toDelete.get(transaction);
      if (stillStored !== undefined) {
        this.toDelete.delete(transaction);
        this.written.set(transaction, stillStored);
        continue;
      }
      this.toWrite.delete(transaction);
      this.addEntry(transaction, operations);
    }
    if (operations.length === 0) return this.lastWrite;
    this.lastWrite = this.store.write(operations);
    return this.lastWrite;
  }

  /**
   * Forgets the entries of transactions the pool does not hold (after a restore: those it did not
   * take back, mined meanwhile or no longer valid): their deletion goes with the next flush.
   */
  dropUnheld(isHeld: (transaction: ChainTransaction) => boolean): void {
    for (const [transaction, key] of this.written) {
      if (isHeld(transaction)) continue;
      this.written.delete(transaction);
      this.toDelete.set(transaction, key);
    }
  }

  held(transaction: ChainTransaction): void {
    const key = this.toDelete.get(transaction);
    if (key !== undefined) {
      // Let go of and taken back (a revert) before its entry was deleted: it stays.
      this.toDelete.delete(transaction);
      this.written.set(transaction, key);
    } else if (!this.written.has(transaction)) {
      this.toWrite.add(transaction);
    }
  }

  released(transaction: ChainTransaction): void {
    if (this.toWrite.delete(transaction)) return;
    const key = this.written.get(transaction);
    if (key === undefined) return;
    this.written.delete(transaction);
    this.toDelete.set(transaction, key);
  }

  /** Whether a flush has anything to write. */
  private get hasChanges(): boolean {
    return this.toWrite.size > 0 || this.toDelete.size > 0;
  }

  /**
   * Writes what changed since the last flush in one batch: entries for the transactions taken,
   * deletions for those let go of. Settles once the batch is durable (in the store's log).
   */
  flush(): Promise<void> {
    if (!this.hasChanges) return this.lastWrite;
    const operations: StoreOperation[] = [];
    for (const key of this.toDelete.values()) operations.push({ type: "del", key });
    for (const transaction of this.toWrite) this.addEntry(transaction, operations);
    this.toDelete.clear();
    this.toWrite.clear();
    this.lastWrite = this.store.write(operations);
    return this.lastWrite;
  }

  /** Adds the put of a new entry for `transaction` (the next in order of arrival) to `operations`. */
  private addEntry(transaction: ChainTransaction, operations: StoreOperation[]): void {
    const key = storeKeys.pooledTransaction(this.nextArrival++);
    operations.push({ type: "put", key, value: transaction.raw });
    this.written.set(transaction, key);
  }
}
