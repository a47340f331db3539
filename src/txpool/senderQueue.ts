// One sender's transactions in the pool, by nonce: the executable run that starts at the account
// nonce, and those waiting behind a nonce gap. A sender may hold thousands (a test sends them while
// mining is paused), so what admission asks of each new transaction, where the executable run ends
// and what the held ones cost up front, is kept up to date instead of recounted over them all.
import { maxGasPrice, type ChainTransaction } from "../chain/transactions.js";

/** What a transaction may take from its sender's balance: its whole gas at its price (a type 2 transaction's fee cap), and its value. */
export function upfrontCost(transaction: ChainTransaction): bigint {
  const { tx } = transaction;
  return tx.gasLimit * (tx.type === 0 ? tx.gasPrice : maxGasPrice(tx)) + tx.value;
}

export class SenderQueue {
  private readonly byNonce = new Map<bigint, ChainTransaction>();
  private account: bigint;
  private nextExecutable: bigint;
  /** Sum of upfrontCost over byNonce. */
  private heldCost = 0n;
  /** Highest nonce held; -1 when none is. */
  private highestNonce = -1n;

  constructor(accountNonce: bigint) {
    this.account = accountNonce;
    this.nextExecutable = accountNonce;
  }

  /** The sender's account nonce as the pool last saw it. */
  get accountNonce(): bigint {
    return this.account;
  }

  /** The first nonce from the account's on that is not held: the held ones below it are executable. */
  get nextExecutableNonce(): bigint {
    return this.nextExecutable;
  }

  get size(): number {
    return this.byNonce.size;
  }

  get(nonce: bigint): ChainTransaction | undefined {
    return this.byNonce.get(nonce);
  }

  isExecutable(nonce: bigint): boolean {
    return nonce >= this.account && nonce < this.nextExecutable;
  }

  /**
   * Moves to the sender's account nonce in a new tip state; answers the held transactions below it,
   * let go of here (mined, or made stale by another transaction of the same nonce).
   */
  moveAccountNonce(accountNonce: bigint): ChainTransaction[] {
    const previous = this.account;
    if (accountNonce === previous) return [];
    const stale: ChainTransaction[] = [];
    if (accountNonce > previous) {
      // Step over the nonces passed when they are fewer than the held transactions (a block's worth).
      const candidates = accountNonce - previous <= BigInt(this.byNonce.size) ? range(previous, accountNonce) : [...this.byNonce.keys()];
      for (const nonce of candidates) {
        const transaction = this.byNonce.get(nonce);
        if (nonce < accountNonce && transaction !== undefined) {
          this.forget(nonce, transaction);
          stale.push(transaction);
        }
      }
    }
    this.account = accountNonce;
    // A lower account nonce (the chain went back) is not held: the transactions wait behind a gap
    // again. A higher one past the run's end starts a new run; one within it leaves the end as it is.
    if (accountNonce < previous || accountNonce > this.nextExecutable) this.nextExecutable = this.runEndFrom(accountNonce);
    return stale;
  }

  /** Holds `transaction` at its nonce; answers the transaction it replaces there, if any. */
  put(transaction: ChainTransaction): ChainTransaction | undefined {
    const nonce = transaction.tx.nonce;
    const replaced = this.byNonce.get(nonce);
    if (replaced !== undefined) this.heldCost -= upfrontCost(replaced);
    this.byNonce.set(nonce, transaction);
    this.heldCost += upfrontCost(transaction);
    if (nonce > this.highestNonce) this.highestNonce = nonce;
    if (nonce === this.nextExecutable) this.nextExecutable = this.runEndFrom(nonce);
    return replaced;
  }

  /** Lets go of `transaction` if it is the one held at its nonce; a gap it leaves holds back the later ones. */
  delete(transaction: ChainTransaction): boolean {
    const nonce = transaction.tx.nonce;
    if (this.byNonce.get(nonce) !== transaction) return false;
    this.forget(nonce, transaction);
    if (this.isExecutable(nonce)) this.nextExecutable = nonce;
    return true;
  }

  /** The up-front cost of the held transactions with nonces below `nonce`. */
  costBelow(nonce: bigint): bigint {
    if (nonce > this.highestNonce) return this.heldCost;
    let cost = 0n;
    for (const [heldNonce, transaction] of this.byNonce) if (heldNonce < nonce) cost += upfrontCost(transaction);
    return cost;
  }

  /** The executable transactions, in nonce order. */
  executable(): ChainTransaction[] {
    const run: ChainTransaction[] = [];
    for (let nonce = this.account; nonce < this.nextExecutable; nonce++) run.push(this.byNonce.get(nonce)!);
    return run;
  }

  /** The transactions waiting behind a nonce gap. */
  queued(): ChainTransaction[] {
    return [...this.byNonce].filter(([nonce]) => nonce > this.nextExecutable).map(([, transaction]) => transaction);
  }

  /** Every held transaction, in nonce order. */
  inNonceOrder(): ChainTransaction[] {
    return [...this.byNonce.values()].sort((a, b) => (a.tx.nonce < b.tx.nonce ? -1 : 1));
  }

  private forget(nonce: bigint, transaction: ChainTransaction): void {
    this.byNonce.delete(nonce);
    this.heldCost -= upfrontCost(transaction);
    if (nonce === this.highestNonce) this.highestNonce = this.byNonce.size === 0 ? -1n : [...this.byNonce.keys()].reduce((a, b) => (a > b ? a : b));
  }

  /** The first nonce from `nonce` on that is not held. */
  private runEndFrom(nonce: bigint): bigint {
    let end = nonce;
    while (this.byNonce.has(end)) end++;
    return end;
  }
}

function range(from: bigint, to: bigint): bigint[] {
  const nonces: bigint[] = [];
  for (let nonce = from; nonce < to; nonce++) nonces.push(nonce);
  return nonces;
}
