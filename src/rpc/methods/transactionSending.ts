// The path every transaction a client sends takes: a submission object turned into an unsigned
// transaction with eth_sendTransaction's defaults, and a signed transaction taken in through the
// pool's intake (txpool/transactionIntake.ts: decoding, sender recovery, admission, the path a
// transaction from a peer takes too), then, under automine, waited for until it is in a block, and
// answered for once it would survive a crash. Shared by eth_sendTransaction,
// eth_sendRawTransaction and personal_sendTransaction; the intake's refusals become JSON-RPC errors here.
//
// A JSON-RPC batch runs one request at a time (rpc/dispatch.ts), so the raw sends further down a
// batch wait for the ones before them: recoverAhead hands the intake those whose parameter is DATA,
// to recover their senders meanwhile. The wait for a block stays here, not in the intake: a peer's
// transaction waits for no block, and txpool/ does not know the miner.
import type { Common } from "@ethereumjs/common";
import { rpcMethodTable } from "../../../generated/methodTable.js";
import type { TransactionSubmission } from "../../../generated/types.js";
import type { UnsignedTransaction } from "../../accounts/wallet.js";
import { BlockWriteError, type Chain } from "../../chain/chain.js";
import { checkTransactionFields, MalformedTransactionError, type ChainTransaction } from "../../chain/transactions.js";
import { bytesToHex, hexToBytes, toQuantity } from "../../common/hex.js";
import type { SenderRecovery } from "../../common/signatures.js";
import { BlockTimeExhaustedError, type InclusionOutcome, type Miner } from "../../mining/miner.js";
import { createTransactionIntake, type TransactionIntake } from "../../txpool/transactionIntake.js";
import { TransactionRejectedError, type TransactionPool } from "../../txpool/transactionPool.js";
import { blockNotWrittenError, invalidParamsError, invalidRawTransactionError, transactionNotMinedError, transactionRejectedError, type RpcError } from "../errors.js";

/**
 * eth_sendRawTransaction's own check of its parameter (DATA): the dispatcher has not run it on the
 * sends seen ahead of their turn, and the intake takes only well-formed hex.
 */
const isRawTransactionParam = rpcMethodTable.get("eth_sendRawTransaction")!.paramValidators[0]!;

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
   * on the main thread at once when not given. For the intake createTransactionSending makes when
   * it is given none.
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

/**
 * `intake` is the node's (ChainServices.intake), which transactions from elsewhere take too; left
 * out, one over `deps`' pool and recovery.
 */
export function createTransactionSending(deps: TransactionSendingDependencies, intake: TransactionIntake = createTransactionIntake(deps)): TransactionSending {
  const { common, chain, pool, miner, typedTransactions } = deps;

  /** Admits a decoded transaction and, under automine, waits until it is in a block. */
  async function submit(transaction: ChainTransaction): Promise<string> {
    try {
      await intake.admit(transaction);
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
    async submitRaw(raw) {
      let transaction: ChainTransaction;
      try {
        transaction = await intake.receive(raw);
      } catch (error) {
        if (error instanceof MalformedTransactionError) throw refusal(error);
        throw error;
      }
      return submit(transaction);
    },
    // Those not DATA are refused when their turn comes, by the dispatcher's check.
    recoverAhead: (raws) => intake.recoverAhead(raws.filter((raw) => isRawTransactionParam(raw))),
    submitOwn: (raw, signer) => submit(checked(() => intake.own(raw, signer))),
    submitImpersonated: (unsigned, sender) => submit(checked(() => intake.impersonated(unsigned, sender))),
  };
}
