// The path every transaction a client sends takes: a submission object turned into an unsigned
// transaction with eth_sendTransaction's defaults, and a signed transaction decoded, admitted to
// the pool and, under automine, waited for until it is in a block. Shared by eth_sendTransaction,
// eth_sendRawTransaction and personal_sendTransaction.
import type { Common } from "@ethereumjs/common";
import type { TransactionSubmission } from "../../../generated/types.js";
import type { UnsignedTransaction } from "../../accounts/wallet.js";
import { BlockWriteError } from "../../chain/chain.js";
import { checkTransactionFields, decodeOwnTransaction, decodeSignedTransaction, invalidSignature, MalformedTransactionError, withSignerKey, type ChainTransaction } from "../../chain/transactions.js";
import { bytesToHex, hexToBytes } from "../../common/hex.js";
import { recoverSignerKey, SignatureRecoveryError, type RecoverableSignature } from "../../common/signatures.js";
import { BlockTimeExhaustedError, type InclusionOutcome, type Miner } from "../../mining/miner.js";
import { TransactionRejectedError, type TransactionPool } from "../../txpool/transactionPool.js";
import { blockNotWrittenError, invalidParamsError, invalidRawTransactionError, transactionNotMinedError, transactionRejectedError, type RpcError } from "../errors.js";

/** eth_sendTransaction defaults (spec 2.9). */
export const defaultSendGas = 90_000n;
export const defaultSendGasPrice = 0n;

export interface TransactionSendingDependencies {
  common: Common;
  pool: TransactionPool;
  miner: Miner;
  /**
   * Recovers a received transaction's signer (its 64-byte public key; SignatureRecoveryError when
   * it has none), perhaps on another thread (node/recoveryOffload.ts); on the main thread at once
   * when not given.
   */
  recoverSignerKey?: (signature: RecoverableSignature) => Promise<Uint8Array>;
}

export interface TransactionSending {
  /** The unsigned transaction a submission asks for; the nonce defaults to the pool's next one. */
  prepare(submission: TransactionSubmission): Promise<UnsignedTransaction>;
  /** Decodes a signed transaction and submits it; resolves to its hash (under automine once mined). */
  submitRaw(raw: Uint8Array): Promise<string>;
  /** As submitRaw, for a transaction the node has just signed with the key of `signer`. */
  submitOwn(raw: Uint8Array, signer: Uint8Array): Promise<string>;
}

export function createTransactionSending(deps: TransactionSendingDependencies): TransactionSending {
  const { common, pool, miner } = deps;
  const recoverSigner = deps.recoverSignerKey ?? ((signature: RecoverableSignature) => Promise.resolve(recoverSignerKey(signature)));

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

  /** Decodes a received transaction and recovers its sender. */
  async function decodeReceived(raw: Uint8Array): Promise<ChainTransaction> {
    const signed = checked(() => decodeSignedTransaction(raw, common));
    let signerKey: Uint8Array;
    try {
      signerKey = await recoverSigner(signed.signature);
    } catch (error) {
      if (error instanceof SignatureRecoveryError) throw refusal(invalidSignature());
      throw error;
    }
    return withSignerKey(signed, signerKey);
  }

  return {
    async prepare(submission) {
      if (submission.data !== undefined && submission.input !== undefined && submission.data.toLowerCase() !== submission.input.toLowerCase()) {
        throw invalidParamsError('invalid argument 0: "data" and "input" are both given and differ');
      }
      const from = hexToBytes(submission.from);
      const unsigned: UnsignedTransaction = {
        nonce: submission.nonce === undefined ? await pool.nextNonce(from) : BigInt(submission.nonce),
        gasPrice: submission.gasPrice === undefined ? defaultSendGasPrice : BigInt(submission.gasPrice),
        gasLimit: BigInt(submission.gas ?? submission.gasLimit ?? defaultSendGas),
        to: submission.to === undefined || submission.to === null ? undefined : hexToBytes(submission.to),
        value: submission.value === undefined ? 0n : BigInt(submission.value),
        data: hexToBytes(submission.input ?? submission.data ?? "0x"),
      };
      // What signing would refuse is refused as a received transaction would be.
      checked(() => checkTransactionFields(unsigned, common));
      return unsigned;
    },
    submitRaw: async (raw) => submit(await decodeReceived(raw)),
    submitOwn: (raw, signer) => submit(checked(() => decodeOwnTransaction(raw, signer, common))),
  };
}
