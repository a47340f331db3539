// The transaction pool: admission rules with the reference node's rejection wording, executable
// (pending) versus nonce-gap (queued) transactions per sender, replacement by price bump, and
// clean-up when blocks are mined. A type 2 transaction (--typed-transactions) is held to the
// minimum gas price by its fee cap, and to the price cap and the replacement bump by what it would
// pay in the next block (its effective gas price there).
import { effectiveGasPrice, type ChainTransaction } from "../chain/transactions.js";
import type { StoreOperation } from "../storage/keyValueStore.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import { SenderQueue, upfrontCost } from "./senderQueue.js";

/** A transaction the pool refuses; the message is the reference node's wording. */
export class TransactionRejectedError extends Error {}

export interface SenderAccount {
  nonce: bigint;
  balance: bigint;
}

export interface PoolLimits {
  /** Gas limit of the next block. */
  blockGasLimit: bigint;
  /** Minimum gas price of the next block. */
  minimumGasPrice: bigint;
}

/**
 * Told of every transaction the pool takes and lets go of (mined, replaced, dropped; after a
 * restore, of what it holds then), and asked to make what it holds durable: the journal
 * (txpool/poolJournal.ts).
 */
export interface PoolObserver {
  held(transaction: ChainTransaction): void;
  /** `blockWritten`: the transaction went into a block that is on disk once this settles. */
  released(transaction: ChainTransaction, blockWritten?: Promise<void>): void;
  /** Settles once the transactions held now would be back in the pool after a crash. */
  flush(): Promise<void>;
  /** The store operations that make what it keeps `transactions` (for a revert's batch). */
  planRestore(transactions: readonly ChainTransaction[]): JournalPlan;
  /** Forgets what it keeps of transactions the pool does not hold (after a restore). */
  dropUnheld(isHeld: (transaction: ChainTransaction) => boolean): void;
}

/** A change of the pool's journal planned to go into another batch (a revert's). */
export interface JournalPlan {
  readonly operations: readonly StoreOperation[];
  /** Records the operations as written (call once the batch holding them is). */
  commit(): void;
  /** Undoes the plan: the batch was not written. */
  abort(): void;
}

const nothingPlanned: JournalPlan = { operations: [], commit: () => undefined, abort: () => undefined };

export interface TransactionPoolOptions {
  /** The sender's account in the head state. */
  readAccount(address: Uint8Array): Promise<SenderAccount>;
  limits(): PoolLimits;
  observer?: PoolObserver;
}

/** Largest accepted signed transaction (reference: 128 KiB). */
export const maxTransactionBytes = 131_072;
/** Largest contract-creation code (EIP-3860). */
export const maxInitCodeBytes = 49_152;
/**
 * Highest gas price over the block minimum a transaction may offer, when the minimum is above zero
 * (the reference's cap, RSKIP252: a price far above the minimum is most likely a mistake).
 */
export const maxGasPriceOverMinimum = 80n;
/**
 * A transaction's nonce must be below its sender's next executable nonce (the account nonce after
 * the sender's executable pool transactions) plus this many: at most 15 transactions of a sender
 * wait behind a nonce gap, while its executable ones are bounded only by the pool's capacity. The
 * reference counts its 16 slots from the account nonce, which refused the 17th transaction a test
 * queued for a node account while blocks were paused, on a nonce the node itself chose.
 */
export const maxNonceSlotsAheadOfPending = 16n;
/** A replacement must raise the gas price by this many percent. */
export const replacementBumpPercent = 40n;
/**
 * Most transactions the pool holds, pending and queued (geth: 5,120 + 1,024 slots; more here, for
 * a dev chain whose mining is paused while a test sends).
 */
export const maxPoolTransactions = 10_000;
/** Most bytes of signed transactions the pool holds (geth: 5,120 slots of 32 KiB, 160 MiB). */
export const maxPoolBytes = 64 * 1024 * 1024;

export type Admission = "pending" | "queued";

/** Transactions that just became pending (executable), in nonce order per sender. */
export type PendingTransactionsListener = (transactions: readonly ChainTransaction[]) => void;

export class TransactionPool {
  /** Senders in order of first arrival; each with its transactions by nonce. */
  private readonly senders = new Map<string, SenderQueue>();
  private readonly byHash = new Map<string, ChainTransaction>();
  /** Bytes of the signed transactions in byHash. */
  private heldBytes = 0;
  private readonly pendingListeners = new Map<PendingTransactionsListener, (error: unknown) => void>();

  constructor(private readonly options: TransactionPoolOptions) {}

  /**
   * Tells `listener` about transactions as they become pending: on admission when executable, and
   * queued ones when a new transaction fills the nonce gap in front of them. A listener's error goes
   * to `reportError`, never to the sender. Answers the function that unsubscribes.
   */
  subscribePending(listener: PendingTransactionsListener, reportError: (error: unknown) => void): () => void {
    this.pendingListeners.set(listener, reportError);
    return () => this.pendingListeners.delete(listener);
  }

  /** Checks a transaction against the pool rules and the head state, then holds it. */
  add(transaction: ChainTransaction): Promise<Admission> {
    return this.admit(transaction, true);
  }

  /** What the pool holds, in arrival order per sender: O(pool size), for restore(). */
  contents(): readonly ChainTransaction[] {
    const held: ChainTransaction[] = [];
    for (const queue of this.senders.values()) held.push(...queue.inNonceOrder());
    return held;
  }

  /**
   * Replaces what the pool holds with `transactions` (from contents()), each checked again against
   * the current tip state. Pending-transaction listeners are told of those pending now that were
   * not pending before (as geth announces the transactions a reorganisation puts back). Answers the
   * transactions the rules refuse now, with the reason.
   */
  async restore(transactions: readonly ChainTransaction[]): Promise<{ transaction: ChainTransaction; reason: string }[]> {
    const pendingBefore = new Set(this.pending());
    this.senders.clear();
    this.byHash.clear();
    this.heldBytes = 0;
    const refused: { transaction: ChainTransaction; reason: string }[] = [];
    for (const transaction of transactions) {
      try {
        await this.admit(transaction, false);
      } catch (error) {
        if (!(error instanceof TransactionRejectedError)) throw error;
        refused.push({ transaction, reason: error.message });
      }
    }
    // The journal lets go only now, of those not taken back: a transaction taken back keeps its
    // entry throughout (a journal write by a send meanwhile must not delete it).
    this.options.observer?.dropUnheld((transaction) => this.byHash.get(bytesToUnprefixedHex(transaction.hash)) === transaction);
    const newlyPending = this.pending().filter((transaction) => !pendingBefore.has(transaction));
    if (newlyPending.length > 0) this.notifyPending(newlyPending);
    return refused;
  }

  /**
   * The journal operations that make the pool kept on disk `transactions`, to be written in the
   * batch of a revert's cut, before restore() takes them back (see PoolJournal.planRestore).
   */
  planRestore(transactions: readonly ChainTransaction[]): JournalPlan {
    return this.options.observer?.planRestore(transactions) ?? nothingPlanned;
  }

  private async admit(transaction: ChainTransaction, notify: boolean): Promise<Admission> {
    const { tx } = transaction;
    const { blockGasLimit, minimumGasPrice } = this.options.limits();
    if (transaction.raw.length > maxTransactionBytes) {
      throw new TransactionRejectedError(`transaction's size is higher than defined maximum: ${transaction.raw.length} > ${maxTransactionBytes}`);
    }
    if (tx.to === undefined && tx.data.length > maxInitCodeBytes) throw new TransactionRejectedError("transaction's init code size is invalid");
    if (tx.gasLimit > blockGasLimit) {
      throw new TransactionRejectedError(`transaction's gas limit of ${tx.gasLimit} is higher than the block's gas limit of ${blockGasLimit}`);
    }
    if (tx.getIntrinsicGas() > tx.gasLimit) throw new TransactionRejectedError("transaction's basic cost is above the gas limit");
    if (tx.type === 2) {
      if (tx.maxFeePerGas < minimumGasPrice) {
        throw new TransactionRejectedError(`transaction's maxFeePerGas (${tx.maxFeePerGas}) is lower than the block's minimum gas price (${minimumGasPrice}), which is its base fee`);
      }
    } else if (tx.gasPrice < minimumGasPrice) throw new TransactionRejectedError("transaction's gas price lower than block's minimum");
    const price = tx.type === 0 ? tx.gasPrice : effectiveGasPrice(tx, minimumGasPrice);
    if (minimumGasPrice > 0n && price > minimumGasPrice * maxGasPriceOverMinimum) throw new TransactionRejectedError("transaction's gas price exceeds cap");

    const senderKey = bytesToUnprefixedHex(transaction.sender);
    const hashKey = bytesToUnprefixedHex(transaction.hash);
    const account = await this.options.readAccount(transaction.sender);
    const queue = this.senders.get(senderKey) ?? new SenderQueue(account.nonce);
    for (const stale of queue.moveAccountNonce(account.nonce)) this.release(stale);

    const nextExecutable = queue.nextExecutableNonce;
    if (this.byHash.has(hashKey)) {
      throw new TransactionRejectedError(`${queue.isExecutable(tx.nonce) ? "pending" : "queued"} transaction with same hash already exists`);
    }
    if (tx.nonce < account.nonce) throw new TransactionRejectedError("transaction nonce too low");
    if (tx.nonce >= nextExecutable + maxNonceSlotsAheadOfPending) throw new TransactionRejectedError("transaction nonce too high");
    if (account.balance < upfrontCost(transaction)) throw new TransactionRejectedError("insufficient funds");
    if (account.balance < queue.costBelow(tx.nonce) + upfrontCost(transaction)) {
      throw new TransactionRejectedError("insufficient funds to pay for pending and new transactions");
    }
    const replaced = queue.get(tx.nonce);
    if (replaced !== undefined) {
      const oldPrice = effectiveGasPrice(replaced.tx, minimumGasPrice);
      if (price <= oldPrice || price * 100n < oldPrice * (100n + replacementBumpPercent)) {
        throw new TransactionRejectedError("gas price not enough to bump transaction");
      }
    }
    const countAfter = this.byHash.size + (replaced === undefined ? 1 : 0);
    const bytesAfter = this.heldBytes - (replaced?.raw.length ?? 0) + transaction.raw.length;
    if (countAfter > maxPoolTransactions || bytesAfter > maxPoolBytes) throw new TransactionRejectedError("txpool is full");
    if (replaced !== undefined) this.release(replaced);
    queue.put(transaction);
    this.senders.set(senderKey, queue);
    this.byHash.set(hashKey, transaction);
    this.heldBytes += transaction.raw.length;
    this.options.observer?.held(transaction);
    if (tx.nonce > nextExecutable) return "queued";
    // A replacement takes a pending place; a new nonce may also release the queued ones behind it.
    const newlyPending = [transaction];
    if (replaced === undefined) for (let nonce = tx.nonce + 1n; nonce < queue.nextExecutableNonce; nonce++) newlyPending.push(queue.get(nonce)!);
    if (notify) this.notifyPending(newlyPending);
    return "pending";
  }

  private notifyPending(transactions: readonly ChainTransaction[]): void {
    for (const [listener, reportError] of this.pendingListeners) {
      try {
        listener(transactions);
      } catch (error) {
        reportError(error);
      }
    }
  }

  /** A held transaction by hash. */
  get(hash: Uint8Array): ChainTransaction | undefined {
    return this.byHash.get(bytesToUnprefixedHex(hash));
  }

  /** Whether the transaction is held and executable now. */
  isPending(hash: Uint8Array): boolean {
    const transaction = this.get(hash);
    if (transaction === undefined) return false;
    const queue = this.senders.get(bytesToUnprefixedHex(transaction.sender));
    return queue !== undefined && queue.isExecutable(transaction.tx.nonce);
  }

  /** Executable transactions: per sender the nonces that follow the account's without a gap; senders in arrival order. */
  pending(): ChainTransaction[] {
    const result: ChainTransaction[] = [];
    for (const queue of this.senders.values()) result.push(...queue.executable());
    return result;
  }

  /** Transactions waiting behind a nonce gap. */
  queued(): ChainTransaction[] {
    const result: ChainTransaction[] = [];
    for (const queue of this.senders.values()) result.push(...queue.queued());
    return result;
  }

  /** The nonce a new transaction of `sender` takes: after its account nonce and its executable transactions. */
  async nextNonce(sender: Uint8Array): Promise<bigint> {
    const queue = this.senders.get(bytesToUnprefixedHex(sender));
    return queue === undefined ? (await this.options.readAccount(sender)).nonce : queue.nextExecutableNonce;
  }

  /**
   * Forgets mined transactions and moves each sender of the block past its mined nonces;
   * `blockWritten` settles once their block is on disk (the journal keeps them until then).
   */
  onBlockMined(transactions: readonly ChainTransaction[], blockWritten?: Promise<void>): void {
    for (const transaction of transactions) {
      const senderKey = bytesToUnprefixedHex(transaction.sender);
      const queue = this.senders.get(senderKey);
      this.release(transaction, blockWritten);
      if (queue === undefined) continue;
      if (transaction.tx.nonce + 1n > queue.accountNonce) for (const stale of queue.moveAccountNonce(transaction.tx.nonce + 1n)) this.release(stale);
      if (queue.size === 0) this.senders.delete(senderKey);
    }
  }

  /** Drops a transaction the chain cannot take any more (skipped by the block builder as invalid). */
  remove(transaction: ChainTransaction): void {
    const queue = this.senders.get(bytesToUnprefixedHex(transaction.sender));
    this.release(transaction);
    queue?.delete(transaction);
    if (queue?.size === 0) this.senders.delete(bytesToUnprefixedHex(transaction.sender));
  }

  get size(): number {
    return this.byHash.size;
  }

  /**
   * Settles once what the pool holds now is durable (with a journal: nothing a send call answered
   * for is lost in a crash); at once without one.
   */
  persist(): Promise<void> {
    return this.options.observer?.flush() ?? Promise.resolve();
  }

  /** Forgets a held transaction's hash and bytes (its sender queue is the caller's business). */
  private release(transaction: ChainTransaction, blockWritten?: Promise<void>): void {
    const hashKey = bytesToUnprefixedHex(transaction.hash);
    // The object held, which may not be the one given (a block's copy of the transaction).
    const held = this.byHash.get(hashKey);
    if (held === undefined) return;
    this.byHash.delete(hashKey);
    this.heldBytes -= held.raw.length;
    this.options.observer?.released(held, blockWritten);
  }
}
