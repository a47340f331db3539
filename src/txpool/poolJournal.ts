// The pool's transactions on disk, so that a transaction whose hash a send call answered is, after
// a crash or a restart, either in a block or back in the pool (reliability contract, §4b). Each
// held transaction is one store entry, p<arrival>, holding its signed bytes; the order of arrival
// keeps the pool's order of senders across a restart.
//
// The pool tells the journal what it takes and lets go of; the journal writes only when asked
// (flush): before a send call answers for a transaction that stays in the pool, after a revert has
// put the pool back, and when the node closes. A transaction mined before its send answers (under
// automine, nearly all) is taken and let go of between two flushes and is never written at all.
// Entries of mined transactions are deleted at the next flush after their block is on disk; one a
// crash leaves behind is dropped at the next start, where every entry is checked against the chain
// again. A revert's new contents go into the batch that cuts the chain (planRestore).
// A transaction sent from an impersonated account (chain/transactions.ts) has no signature to
// recover its sender from: its entry is its bytes after one 0x00 byte (a legacy transaction's first
// byte is 0xc0 or more, a typed one's 0x01 or 0x02), and only such an entry is read with the sender
// its stand-in signature names. A typed transaction a client sent comes back only while the node
// takes typed transactions (--typed-transactions): restarted without the flag, it is dropped as
// unreadable, with the refusal a send would get.
import type { Common } from "@ethereumjs/common";
import { decodeRawTransaction, impersonatedSenderOf, restoreImpersonatedTransaction, type ChainTransaction, type TypedTransactionsAccepted } from "../chain/transactions.js";
import type { KeyValueStore, StoreOperation } from "../storage/keyValueStore.js";
import { storeKeys } from "../storage/keys.js";
import type { JournalPlan, PoolObserver } from "./transactionPool.js";

/** A stored entry the journal cannot decode any more, and why (it is deleted). */
export interface UnreadableEntry {
  readonly key: Uint8Array;
  readonly reason: string;
}

/** First byte of the entry of a transaction sent from an impersonated account. */
const impersonatedEntryPrefix = 0x00;

/** A transaction's entry: its bytes, after the prefix when its sender is impersonated. */
function entryValue(transaction: ChainTransaction): Uint8Array {
  const named = impersonatedSenderOf(transaction.raw);
  // Only the node makes a stand-in signature that names the transaction's own sender (no key recovers to it).
  if (named === undefined || Buffer.compare(named, transaction.sender) !== 0) return transaction.raw;
  const value = new Uint8Array(transaction.raw.length + 1);
  value[0] = impersonatedEntryPrefix;
  value.set(transaction.raw, 1);
  return value;
}

export class PoolJournal implements PoolObserver {
  /**
   * Transactions whose entry is in the store (or in a write on its way there), with the entry's
   * key: those the pool holds, and for the length of a revert those its plan keeps (planRestore).
   */
  private readonly written = new Map<ChainTransaction, Uint8Array>();
  /** Held transactions not written yet. */
  private readonly toWrite = new Set<ChainTransaction>();
  /** Entries of transactions the pool let go of, not deleted yet. */
  private readonly toDelete = new Map<ChainTransaction, Uint8Array>();
  /**
   * Entries of transactions a block took, kept until that block is on disk: deleted before it, a
   * crash in between would find the transaction neither in a block nor in the journal.
   */
  private readonly awaitingBlock = new Map<ChainTransaction, Uint8Array>();
  private nextArrival = 0n;
  /** The last batch written: a flush with nothing new still waits until it is durable. */
  private lastWrite: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: KeyValueStore,
    private readonly common: Common,
    /** Whether received typed transactions are taken back (the node's --typed-transactions). */
    private readonly typed: TypedTransactionsAccepted = false,
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
        transaction = value[0] === impersonatedEntryPrefix ? restoreImpersonatedTransaction(value.subarray(1), this.common) : decodeRawTransaction(value, this.common, this.typed);
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
   * The operations that make the journal hold exactly `transactions` (a revert's pool), to be
   * written in the same batch as the cut of the chain: a crash then finds either the old chain with
   * the old pool or the reverted chain with the snapshot's pool, never a mix (the snapshot's
   * transactions may be in the blocks the cut removes; those sent after it must not come back).
   * `commit` records the batch once written, `abort` undoes the plan when it was not.
   */
  planRestore(transactions: readonly ChainTransaction[]): JournalPlan {
    const keep = new Set(transactions);
    const operations: StoreOperation[] = [];
    const added = new Map<ChainTransaction, Uint8Array>();
    const revived: [ChainTransaction, Uint8Array, Map<ChainTransaction, Uint8Array>][] = [];
    const unwritten: ChainTransaction[] = [];
    for (const transaction of transactions) {
      if (this.written.has(transaction)) continue;
      // Still on disk though let go of: kept from now on, so that no flush meanwhile deletes it.
      const revival = this.takeBack(transaction);
      if (revival !== undefined) {
        revived.push([transaction, ...revival]);
        continue;
      }
      // Held but not written yet: written by this batch, not by a flush meanwhile.
      if (this.toWrite.delete(transaction)) unwritten.push(transaction);
      added.set(transaction, this.newEntry(transaction, operations));
    }
    const removed: [ChainTransaction, Uint8Array][] = [];
    for (const entries of [this.written, this.toDelete, this.awaitingBlock]) {
      for (const [transaction, key] of entries) {
        if (keep.has(transaction)) continue;
        operations.push({ type: "del", key });
        removed.push([transaction, key]);
      }
    }
    return {
      operations,
      commit: () => {
        for (const [transaction, key] of added) this.written.set(transaction, key);
        for (const [transaction, key] of removed) {
          for (const entries of [this.written, this.toDelete, this.awaitingBlock]) if (entries.get(transaction) === key) entries.delete(transaction);
        }
      },
      abort: () => {
        for (const [transaction, key, pending] of revived) {
          if (this.written.get(transaction) !== key) continue;
          this.written.delete(transaction);
          pending.set(transaction, key);
        }
        for (const transaction of unwritten) this.toWrite.add(transaction);
      },
    };
  }

  /**
   * Forgets the transactions the pool does not hold (after a restore: those it did not take back,
   * mined meanwhile or no longer valid): those not written yet at once, the deletion of the entries
   * of the others with the next flush.
   */
  dropUnheld(isHeld: (transaction: ChainTransaction) => boolean): void {
    for (const transaction of this.toWrite) if (!isHeld(transaction)) this.toWrite.delete(transaction);
    for (const [transaction, key] of this.written) {
      if (isHeld(transaction)) continue;
      this.written.delete(transaction);
      this.toDelete.set(transaction, key);
    }
  }

  held(transaction: ChainTransaction): void {
    // Let go of and taken back (a revert, a block not written) before its entry was deleted: it stays.
    if (this.takeBack(transaction) !== undefined) return;
    if (!this.written.has(transaction)) this.toWrite.add(transaction);
  }

  /**
   * Moves a transaction whose entry waits for deletion back among the written ones; answers its
   * key and the map it waited in, or undefined when it waited in none.
   */
  private takeBack(transaction: ChainTransaction): [Uint8Array, Map<ChainTransaction, Uint8Array>] | undefined {
    for (const waiting of [this.toDelete, this.awaitingBlock]) {
      const key = waiting.get(transaction);
      if (key === undefined) continue;
      waiting.delete(transaction);
      this.written.set(transaction, key);
      return [key, waiting];
    }
    return undefined;
  }

  released(transaction: ChainTransaction, blockWritten?: Promise<void>): void {
    if (this.toWrite.delete(transaction)) return;
    const key = this.written.get(transaction);
    if (key === undefined) return;
    this.written.delete(transaction);
    if (blockWritten === undefined) {
      this.toDelete.set(transaction, key);
      return;
    }
    this.awaitingBlock.set(transaction, key);
    const blockSettled = () => {
      if (this.awaitingBlock.get(transaction) !== key) return;
      this.awaitingBlock.delete(transaction);
      this.toDelete.set(transaction, key);
    };
    blockWritten.then(blockSettled, blockSettled);
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
    for (const transaction of this.toWrite) this.written.set(transaction, this.newEntry(transaction, operations));
    this.toDelete.clear();
    this.toWrite.clear();
    this.lastWrite = this.store.write(operations);
    return this.lastWrite;
  }

  /** Adds the put of a new entry for `transaction` (the next in order of arrival) to `operations`; answers its key. */
  private newEntry(transaction: ChainTransaction, operations: StoreOperation[]): Uint8Array {
    const key = storeKeys.pooledTransaction(this.nextArrival++);
    operations.push({ type: "put", key, value: entryValue(transaction) });
    return key;
  }
}
