// The path every transaction a client sends takes: a submission object turned into an unsigned
// transaction with eth_sendTransaction's defaults, and a signed transaction decoded, admitted to
// the pool and, under automine, waited for until it is in a block. Shared by eth_sendTransaction,
// eth_sendRawTransaction and personal_sendTransaction.
//
// A JSON-RPC batch runs one request at a time (rpc/dispatch.ts), so the raw sends further down a
// batch wait for the ones before them. Their senders can be recovered meanwhile, on the recovery
// thread: recoverAhead decodes the next few and hands their signatures over, each send takes its
// key when its turn comes, and the next one down the batch is handed over then. A send recovered
// ahead skips the arrival-order queue of single sends (node/recoveryOffload.ts): it may reach the
// pool before a send another connection made at the same moment, as concurrent requests may.
import type { Common } from "@ethereumjs/common";
import { rpcMethodTable } from "../../../generated/methodTable.js";
import type { TransactionSubmission } from "../../../generated/types.js";
import type { UnsignedTransaction } from "../../accounts/wallet.js";
import { BlockWriteError, type Chain } from "../../chain/chain.js";
import {
  checkTransactionFields,
  decodeOwnTransaction,
  decodeSignedTransaction,
  impersonatedTransaction,
  invalidSignature,
  MalformedTransactionError,
  withSignerKey,
  type ChainTransaction,
  type SignedTransaction,
} from "../../chain/transactions.js";
import { bytesToHex, hexToBytes, toQuantity } from "../../common/hex.js";
import { recoverSignerKey, SignatureRecoveryError, type RecoveryAhead, type SenderRecovery } from "../../common/signatures.js";
import { BlockTimeExhaustedError, type InclusionOutcome, type Miner } from "../../mining/miner.js";
import { TransactionRejectedError, type TransactionPool } from "../../txpool/transactionPool.js";
import { blockNotWrittenError, invalidParamsError, invalidRawTransactionError, transactionNotMinedError, transactionRejectedError, type RpcError } from "../errors.js";

/**
 * Sends of one batch whose recoveries are under way at once: a few keep the worker ahead of the
 * main thread (a recovery takes a fraction of a send's time), and the recovery ring's other slots
 * stay open to other clients and batches.
 */
const sendsAheadPerBatch = 8;

/** A batch's raw sends after its first, and how far down them recoverAhead has gone. */
interface BatchLookAhead {
  readonly raws: readonly string[];
  /** The position of the next raw send to hand over. */
  next: number;
  /** Handed over and not yet taken by their send. */
  underWay: number;
  readonly started: [string, RecoveringAhead][];
  finished: boolean;
}

/** A received transaction decoded ahead of its send, its sender's recovery under way. */
interface RecoveringAhead {
  readonly signed: SignedTransaction;
  readonly recovery: RecoveryAhead;
  readonly batch: BatchLookAhead;
}

/**
 * eth_sendRawTransaction's own check of its parameter (DATA): the dispatcher has not run it on the
 * sends seen ahead of their turn, and hexToBytes trusts what it is given.
 */
const isRawTransactionParam = rpcMethodTable.get("eth_sendRawTransaction")!.paramValidators[0]!;

const noneToRelease = (): void => undefined;

/** eth_sendTransaction defaults (spec 2.9). */
export const defaultSendGas = 90_000n;
export const defaultSendGasPrice = 0n;

export interface TransactionSendingDependencies {
  common: Common;
  /** Its tip's minimum gas price is the base fee a type 2 submission's default fee cap covers. */
  chain: Chain;
  /** Whether the node takes typed transactions (--typed-transactions). */
  typedTransactions: boolean;
  pool: TransactionPool;
  miner: Miner;
  /**
   * Recovers received transactions' signers, perhaps on another thread (node/recoveryOffload.ts);
   * on the main thread at once when not given.
   */
  senderRecovery?: SenderRecovery;
}

export interface TransactionSending {
  /** The unsigned transaction a submission asks for; the nonce defaults to the pool's next one. */
  prepare(submission: TransactionSubmission): Promise<UnsignedTransaction>;
  /** Decodes a signed transaction (hex) and submits it; resolves to its hash (under automine once mined). */
  submitRaw(raw: string): Promise<string>;
  /**
   * Starts recovering the senders of signed transactions (hex) that submitRaw is given later, the
   * later raw sends of a batch; answers what lets the unclaimed ones go once the batch is done.
   */
  recoverAhead(raws: readonly string[]): () => void;
  /** As submitRaw, for a transaction the node has just signed with the key of `signer`. */
  submitOwn(raw: Uint8Array, signer: Uint8Array): Promise<string>;
  /** As submitRaw, for a transaction from an impersonated account, which no key signs (chain/transactions.ts). */
  submitImpersonated(unsigned: UnsignedTransaction, sender: Uint8Array): Promise<string>;
}

/**
 * The type a submission asks the node to sign (with --typed-transactions): its `type`, else 2 when
 * it names a fee cap, 1 when it names an access list, else 0. Refuses another type, and a gas price
 * beside a fee cap.
 */
function submissionType(submission: TransactionSubmission): 0 | 1 | 2 {
  const feeCaps = submission.maxFeePerGas !== undefined || submission.maxPriorityFeePerGas !== undefined;
  let type: 0 | 1 | 2;
  if (submission.type !== undefined) {
    const named = BigInt(submission.type);
    if (named !== 0n && named !== 1n && named !== 2n) {
      throw invalidParamsError(`invalid argument 0: transaction type ${submission.type} is not supported; this node signs legacy (0x0), EIP-2930 (0x1) and EIP-1559 (0x2) transactions`);
    }
    type = Number(named) as 0 | 1 | 2;
  } else type = feeCaps ? 2 : submission.accessList !== undefined ? 1 : 0;
  if (type === 2 ? submission.gasPrice !== undefined : feeCaps) {
    throw invalidParamsError(
      type === 2
        ? "invalid argument 0: both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified"
        : `invalid argument 0: maxFeePerGas and maxPriorityFeePerGas belong to a type 0x2 transaction, not to type ${toQuantity(type)}`,
    );
  }
  return type;
}

export function createTransactionSending(deps: TransactionSendingDependencies): TransactionSending {
  const { common, chain, pool, miner, senderRecovery, typedTransactions } = deps;
  /** Received transactions whose senders are being recovered ahead of their send, by their hex. */
  const recoveringAhead = new Map<string, RecoveringAhead>();

  /** Admits a decoded transaction and, under automine, waits until it is in a block. */
  async function submit(transaction: ChainTransaction): Promise<string> {
    try {
      await pool.add(transaction);
    } catch (error) {
      if (error instanceof TransactionRejectedError) throw transactionRejectedError(error.message);
      throw error;
    }
    if (miner.isAutomining) {
      let outcome: InclusionOutcome;
      try {
        outcome = await miner.mineUntilIncluded(transaction);
      } catch (error) {
        // The transaction stays pending: a block can take it once the chain went back.
        if (error instanceof BlockTimeExhaustedError) throw transactionNotMinedError(error.message);
        if (error instanceof BlockWriteError) throw transactionNotMinedError(blockNotWrittenError(error).message);
        throw error;
      }
      if (outcome.kind === "dropped") throw transactionNotMinedError(outcome.reason);
    }
    // One that stays in the pool is answered for only once it would survive a crash.
    if (pool.get(transaction.hash) === transaction) {
      try {
        await pool.persist();
      } catch (error) {
        pool.remove(transaction);
        throw transactionRejectedError(`the node cannot store the transaction: ${(error as Error).message}`);
      }
    }
    return bytesToHex(transaction.hash);
  }

  /** A transaction refused before any pool rule, as the RPC answers it. */
  function refusal(error: MalformedTransactionError): RpcError {
    switch (error.reason) {
      case "chainId":
      case "signature":
      case "initCode":
        return transactionRejectedError(error.message);
      default:
        return invalidRawTransactionError(error.message);
    }
  }

  /** Runs a decoding or check, with its refusals as the RPC answers them. */
  function checked<T>(check: () => T): T {
    try {
      return check();
    } catch (error) {
      if (error instanceof MalformedTransactionError) throw refusal(error);
      throw error;
    }
  }

  /** Decodes a received transaction (or takes it as recoverAhead decoded it) and recovers its sender. */
  async function decodeReceived(raw: string): Promise<ChainTransaction> {
    const ahead = recoveringAhead.get(raw);
    if (ahead !== undefined) {
      recoveringAhead.delete(raw);
      const { batch } = ahead;
      batch.underWay--;
      handOverMore(batch);
    }
    const signed = ahead?.signed ?? checked(() => decodeSignedTransaction(hexToBytes(raw), common, typedTransactions));
    let signerKey: Uint8Array;
    try {
      if (ahead !== undefined) signerKey = ahead.recovery.key();
      else signerKey = senderRecovery === undefined ? recoverSignerKey(signed.signature) : await senderRecovery.recover(signed.signature);
    } catch (error) {
      if (error instanceof SignatureRecoveryError) throw refusal(invalidSignature());
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

  /** Hands over the batch's next sends until `sendsAheadPerBatch` are under way or the recovery has no room. */
  function handOverMore(batch: BatchLookAhead): void {
    while (!batch.finished && batch.underWay < sendsAheadPerBatch && batch.next < batch.raws.length) {
      const raw = batch.raws[batch.next]!;
      let signed: SignedTransaction | undefined;
      if (!recoveringAhead.has(raw) && isRawTransactionParam(raw)) {
        try {
          signed = decodeSignedTransaction(hexToBytes(raw), common, typedTransactions);
        } catch {
          // refused when its turn comes, as any other
        }
      }
      if (signed !== undefined) {
        const recovery = senderRecovery!.recoverAhead(signed.signature);
        if (recovery === undefined) return; // no room now: tried again when one of the batch's sends takes its key
        const entry: RecoveringAhead = { signed, recovery, batch };
        recoveringAhead.set(raw, entry);
        batch.started.push([raw, entry]);
        batch.underWay++;
      }
      batch.next++;
    }
  }

  return {
    async prepare(submission) {
      if (submission.data !== undefined && submission.input !== undefined && submission.data.toLowerCase() !== submission.input.toLowerCase()) {
        throw invalidParamsError('invalid argument 0: "data" and "input" are both given and differ');
      }
      const from = hexToBytes(submission.from);
      const type = typedTransactions ? submissionType(submission) : 0;
      const unsigned: UnsignedTransaction = {
        nonce: submission.nonce === undefined ? await pool.nextNonce(from) : BigInt(submission.nonce),
        gasPrice: submission.gasPrice === undefined ? defaultSendGasPrice : BigInt(submission.gasPrice),
        gasLimit: BigInt(submission.gas ?? submission.gasLimit ?? defaultSendGas),
        to: submission.to === undefined || submission.to === null ? undefined : hexToBytes(submission.to),
        value: submission.value === undefined ? 0n : BigInt(submission.value),
        data: hexToBytes(submission.input ?? submission.data ?? "0x"),
      };
      if (type !== 0) {
        unsigned.type = type;
        unsigned.accessList = (submission.accessList ?? []).map(({ address, storageKeys }) => ({ address: hexToBytes(address), storageKeys: storageKeys.map(hexToBytes) }));
      }
      if (type === 2) {
        const maxPriorityFeePerGas = submission.maxPriorityFeePerGas === undefined ? 0n : BigInt(submission.maxPriorityFeePerGas);
        unsigned.maxPriorityFeePerGas = maxPriorityFeePerGas;
        unsigned.maxFeePerGas = submission.maxFeePerGas === undefined ? chain.tip.header.fields.minimumGasPrice + maxPriorityFeePerGas : BigInt(submission.maxFeePerGas);
        unsigned.gasPrice = 0n;
      }
      // What signing would refuse is refused as a received transaction would be.
      checked(() => checkTransactionFields(unsigned, common));
      return unsigned;
    },
    submitRaw: async (raw) => submit(await decodeReceived(raw)),
    recoverAhead,
    submitOwn: (raw, signer) => submit(checked(() => decodeOwnTransaction(raw, signer, common, typedTransactions))),
    submitImpersonated: (unsigned, sender) => submit(checked(() => impersonatedTransaction(unsigned, sender, common))),
  };
}
