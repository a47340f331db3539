// How a transaction enters the pool, whoever hands it over: a received one is decoded (typed ones
// only with --typed-transactions), its sender recovered (on the main thread, or on the recovery
// thread through SenderRecovery), and it is admitted to the pool; the node's own and impersonated
// ones are decoded with the sender they are known to have. Refusals are the domain's errors:
// MalformedTransactionError (a signature without a signer is one, reason "signature"), and the
// pool's TransactionRejectedError; any other failure passes as it is. What follows admission (a
// client's wait for a block under automine, persistence) is the caller's.
//
// Received transactions that will be handed over soon (the later raw sends of a JSON-RPC batch,
// which run one at a time) can have their senders recovered meanwhile: recoverAhead decodes the
// next few and hands their signatures over, each one takes its key when receive gets it, and the
// next one down is handed over then. One recovered ahead skips the arrival-order queue of single
// recoveries (node/recoveryOffload.ts): it may reach the pool before one another client sent at
// the same moment, as concurrent requests may.
import type { Common } from "@ethereumjs/common";
import {
  decodeOwnTransaction,
  decodeSignedTransaction,
  impersonatedTransaction,
  invalidSignature,
  withSignerKey,
  type ChainTransaction,
  type SignedTransaction,
} from "../chain/transactions.js";
import { hexToBytes } from "../common/hex.js";
import { recoverSignerKey, SignatureRecoveryError, type RecoveryAhead, type SenderRecovery } from "../common/signatures.js";
import type { UnsignedTransaction } from "../common/unsignedTransaction.js";
import type { Admission, TransactionPool } from "./transactionPool.js";

/**
 * Received transactions of one look-ahead whose recoveries are under way at once: a few keep the
 * recovery thread ahead of the main thread (a recovery takes a fraction of a send's time), and the
 * recovery ring's other slots stay open to other clients and batches.
 */
export const recoveriesAheadPerBatch = 8;

/** The transactions of one recoverAhead call, and how far down them it has gone. */
interface BatchLookAhead {
  readonly raws: readonly string[];
  /** The position of the next one to hand over. */
  next: number;
  /** Handed over and not yet taken by receive. */
  underWay: number;
  readonly started: [string, RecoveringAhead][];
  finished: boolean;
}

/** A received transaction decoded ahead of its turn, its sender's recovery under way. */
interface RecoveringAhead {
  readonly signed: SignedTransaction;
  readonly recovery: RecoveryAhead;
  readonly batch: BatchLookAhead;
}

const noneToRelease = (): void => undefined;

export interface TransactionIntakeDependencies {
  common: Common;
  /** Whether the node takes typed transactions (--typed-transactions). */
  typedTransactions: boolean;
  pool: TransactionPool;
  /**
   * Recovers received transactions' signers, perhaps on another thread (node/recoveryOffload.ts);
   * on the main thread at once when not given.
   */
  senderRecovery?: SenderRecovery;
}

export interface TransactionIntake {
  /**
   * A received signed transaction (hex, well-formed: callers check that) decoded, with its sender
   * recovered (or taken as recoverAhead recovered it). Refuses with MalformedTransactionError.
   */
  receive(raw: string): Promise<ChainTransaction>;
  /**
   * Starts recovering the senders of received transactions (hex, well-formed) that receive will
   * get later; answers what lets the unclaimed ones go once they will not come.
   */
  recoverAhead(raws: readonly string[]): () => void;
  /** A transaction the node has just signed with the key of `signer`, decoded. Refuses with MalformedTransactionError. */
  own(raw: Uint8Array, signer: Uint8Array): ChainTransaction;
  /** A transaction from an impersonated account, which no key signs (chain/transactions.ts). Refuses with MalformedTransactionError. */
  impersonated(unsigned: UnsignedTransaction, sender: Uint8Array): ChainTransaction;
  /** Admits a decoded transaction to the pool. Refuses with TransactionRejectedError. */
  admit(transaction: ChainTransaction): Promise<Admission>;
}

export function createTransactionIntake(deps: TransactionIntakeDependencies): TransactionIntake {
  const { common, pool, senderRecovery, typedTransactions } = deps;
  /** Received transactions whose senders are being recovered ahead of their turn, by their hex. */
  const recoveringAhead = new Map<string, RecoveringAhead>();

  async function receive(raw: string): Promise<ChainTransaction> {
    const ahead = recoveringAhead.get(raw);
    if (ahead !== undefined) {
      recoveringAhead.delete(raw);
      const { batch } = ahead;
      batch.underWay--;
      handOverMore(batch);
    }
    const signed = ahead?.signed ?? decodeSignedTransaction(hexToBytes(raw), common, typedTransactions);
    let signerKey: Uint8Array;
    try {
      if (ahead !== undefined) signerKey = ahead.recovery.key();
      else signerKey = senderRecovery === undefined ? recoverSignerKey(signed.signature) : await senderRecovery.recover(signed.signature);
    } catch (error) {
      if (error instanceof SignatureRecoveryError) throw invalidSignature();
      throw error;
    }
    return withSignerKey(signed, signerKey);
  }

  function recoverAhead(raws: readonly string[]): () => void {
    if (senderRecovery === undefined || raws.length === 0) return noneToRelease;
    const batch: BatchLookAhead = { raws, next: 0, underWay: 0, started: [], finished: false };
    const finish = () => {
      batch.finished = true;
      for (const [raw, entry] of batch.started) {
        if (recoveringAhead.get(raw) !== entry) continue;
        recoveringAhead.delete(raw);
        entry.recovery.release();
      }
    };
    try {
      handOverMore(batch);
    } catch (error) {
      finish();
      throw error;
    }
    return finish;
  }

  /** Hands over the batch's next transactions until `recoveriesAheadPerBatch` are under way or the recovery has no room. */
  function handOverMore(batch: BatchLookAhead): void {
    while (!batch.finished && batch.underWay < recoveriesAheadPerBatch && batch.next < batch.raws.length) {
      const raw = batch.raws[batch.next]!;
      let signed: SignedTransaction | undefined;
      if (!recoveringAhead.has(raw)) {
        try {
          signed = decodeSignedTransaction(hexToBytes(raw), common, typedTransactions);
        } catch {
          // refused when its turn comes, as any other
        }
      }
      if (signed !== undefined) {
        const recovery = senderRecovery!.recoverAhead(signed.signature);
        if (recovery === undefined) return; // no room now: tried again when one of the batch's takes its key
        const entry: RecoveringAhead = { signed, recovery, batch };
        recoveringAhead.set(raw, entry);
        batch.started.push([raw, entry]);
        batch.underWay++;
      }
      batch.next++;
    }
  }

  return {
    receive,
    recoverAhead,
    own: (raw, signer) => decodeOwnTransaction(raw, signer, common, typedTransactions),
    impersonated: (unsigned, sender) => impersonatedTransaction(unsigned, sender, common),
    admit: (transaction) => pool.add(transaction),
  };
}
