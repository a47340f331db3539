// The one place where JSON-RPC error codes are chosen. Handlers and domain modules throw RpcError
// (or domain errors mapped here); anything else becomes -32603 "Internal error".
import { BlockWriteError, type StoredDataDamagedError } from "../chain/chain.js";
import { bytesToHex, toQuantity } from "../common/hex.js";
import { AccountExistsError, AccountLockedError, InvalidPrivateKeyError, TooManyPassphraseAttemptsError, UnknownAccountError, UnlockForbiddenError } from "../accounts/wallet.js";
import { KeyStoreAccessError, KeystoreFormatError, WrongPassphraseError } from "../accounts/keystore.js";
import { InvalidBlockRangeError, LogBlockRangeExceededError, LogResultLimitExceededError } from "../logs/index.js";
import { TimeOutOfRangeError } from "../mining/devChain.js";
import { BlockTimeExhaustedError, ExternalMiningOnlyError, TimestampNotAfterParentError } from "../mining/miner.js";
import { ReplayStateMissingError, StructLogTooLargeError } from "../tracing/index.js";
import { ExecutionTimeoutError } from "../execution/engine.js";

/** JSON-RPC 2.0 and implementation-defined error codes used by this node. */
export const RpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** EIP-1474 "method not supported": documented here but not implemented yet. */
  MethodNotImplemented: -32004,
  /** The reference node's code for a response over the size limit. */
  ResponseTooLarge: -32011,
  /** The reference node's code for an execution past its time limit (the same as above). */
  ExecutionTimeout: -32011,
  /** A transaction the pool or the chain refuses (reference: the pool's message verbatim). */
  TransactionRejected: -32010,
  /** An automined transaction that did not make it into a block. */
  TransactionNotMined: -32009,
  /** eth_call / eth_estimateGas whose execution reverts (reference). */
  ExecutionReverted: -32015,
  /** A call that cannot run as a transaction at all (geth's code for such calls). */
  CallNotExecutable: -32000,
  /** The reference's code for an unknown filter id. */
  FilterNotFound: -32000,
  /** No room for one more filter (the same server-error code). */
  TooManyFilters: -32000,
  /** The reference's code for a log query over its block or result limit. */
  LogQueryLimitExceeded: -32012,
  /** No block can follow the head: its timestamp is the largest a block can carry (openrpc EvmTimeExhausted). */
  BlockTimeExhausted: -32000,
  /** The store could not write a block (openrpc BlockNotWritten). */
  BlockNotWritten: -32000,
  /** A read met data the store does not hold whole (openrpc StoredDataDamaged). */
  StoredDataDamaged: -32000,
  /** The reference's code for tracing an unknown transaction with the callTracer. */
  TraceTransactionNotFound: -32001,
  /** The reference's code for every refused merged-mining submission (openrpc MergedMining*). */
  MergedMiningRefused: -33000,
  /** A dev method that would mine, on a node whose blocks come only from merged miners (openrpc ExternalMiningOnly). */
  ExternalMiningOnly: -32000,
  /** evm_revert, evm_reset or evm_increaseTime while peers are connected (openrpc HistoryRewriteWithPeers). */
  HistoryRewriteWithPeers: -32000,
} as const;
export type RpcErrorCode = (typeof RpcErrorCode)[keyof typeof RpcErrorCode];

/** The error member of a response. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** An error that travels to the client as it is. `data` only where the spec gives it. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }

  toErrorObject(): RpcErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/** Longest method name echoed back in an error message. */
const maxEchoedNameLength = 64;

function echoName(method: string): string {
  return method.length > maxEchoedNameLength ? `${method.slice(0, maxEchoedNameLength)}...` : method;
}

/** Unknown method, or a method of a disabled module: the same words, so modules cannot be probed. */
export function methodNotAvailableError(method: string): RpcError {
  return new RpcError(RpcErrorCode.MethodNotFound, `the method ${echoName(method)} does not exist/is not available`);
}

export function methodNotSupportedError(method: string, reason: string): RpcError {
  return new RpcError(RpcErrorCode.MethodNotFound, `the method ${method} is not supported: ${reason}`);
}

export function methodNotImplementedError(method: string): RpcError {
  return new RpcError(RpcErrorCode.MethodNotImplemented, `the method ${method} is not implemented yet in this node`);
}

export function invalidRequestError(reason: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidRequest, `invalid request: ${reason}`);
}

export function invalidParamsError(message: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, message);
}

export function responseTooLargeError(limitBytes: number): RpcError {
  return new RpcError(RpcErrorCode.ResponseTooLarge, `Response size limit of ${limitBytes} bytes exceeded`);
}

export const internalError = new RpcError(RpcErrorCode.InternalError, "Internal error");

/**
 * Runs `operation` and throws what it throws as `toRpc` maps it: the domain modules' errors become
 * their JSON-RPC errors, anything else passes through.
 */
export async function withErrorsMapped<T>(operation: () => Promise<T>, toRpc: (error: unknown) => unknown): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw toRpc(error);
  }
}

// --- chain errors (reference wording, facts 11.1) ---

/** A block that does not exist, named as the caller named it. */
export function blockNotFoundError(blockName: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidRequest, `Block ${blockName} not found`);
}

export function blockHashNotFoundError(blockHash: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidRequest, `Block with hash ${blockHash} not found`);
}

export function blockNotCanonicalError(blockHash: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidRequest, `Block with hash ${blockHash} is not canonical and it is required`);
}

export function stateNotFoundError(blockHash: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidRequest, `State not found for block with hash ${blockHash}`);
}

export function transactionRejectedError(reason: string): RpcError {
  return new RpcError(RpcErrorCode.TransactionRejected, reason);
}

export function invalidRawTransactionError(reason: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, `Invalid input: ${reason}`);
}

export function senderAccountNotFoundError(address: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, `Could not find account for address: ${address}`);
}

export function transactionNotMinedError(reason: string): RpcError {
  return new RpcError(RpcErrorCode.TransactionNotMined, `Unknown error when sending transaction: ${reason}`);
}

// --- calls and gas estimation ---

/** Reference wording: the reason when the payload is Error(string) (or a Panic), a generic text otherwise. */
export function executionRevertedError(reason: string | undefined, payload: string): RpcError {
  const message = `VM Exception while processing transaction: ${reason === undefined ? "transaction reverted" : `revert ${reason}`}`;
  return new RpcError(RpcErrorCode.ExecutionReverted, message, payload === "0x" ? undefined : payload);
}

export function invalidBlockNumberError(blockNumber: bigint): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, `Invalid block number ${blockNumber}`);
}

export function callGasCapExceededError(gas: bigint, cap: bigint): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, `invalid argument 0: gas ${gas} exceeds the call gas cap of ${cap}`);
}

export function movePrecompileNotSupportedError(): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, "invalid argument 2: movePrecompileToAddress is not supported");
}

export const executionTimeoutError = new RpcError(RpcErrorCode.ExecutionTimeout, "Execution has got timeout out.");

/** A call the engine refuses to run as a transaction (funds, intrinsic gas), in its words. */
export function callNotExecutableError(reason: string): RpcError {
  return new RpcError(RpcErrorCode.CallNotExecutable, reason);
}

export function gasEstimationFailedError(reason: string): RpcError {
  return new RpcError(RpcErrorCode.TransactionRejected, reason);
}

// --- pool, signing, proofs, raw data ---

/** eth_sign from an account the node does not hold, or holds locked (openrpc AccountNotFound). */
export function accountNotFoundError(): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, "Account not found");
}

// --- logs and filters ---

/** One filter more than the node keeps installed. */
export function tooManyFiltersError(message: string): RpcError {
  return new RpcError(RpcErrorCode.TooManyFilters, message);
}

/** An unknown, expired or uninstalled filter id (reference wording). */
export function filterNotFoundError(): RpcError {
  return new RpcError(RpcErrorCode.FilterNotFound, "filter not found");
}

/** eth_subscribe or eth_unsubscribe on a connection without notifications (HTTP), in geth's words and code. */
export const notificationsNotSupportedError = new RpcError(RpcErrorCode.MethodNotFound, "notifications not supported");

/** One subscription more than a connection may hold (openrpc TooManySubscriptions). */
export function tooManySubscriptionsError(message: string): RpcError {
  return new RpcError(RpcErrorCode.TooManyFilters, message);
}

/** Log query errors of the logs module -> their JSON-RPC errors; anything else passes through. */
export function logQueryErrorToRpc(error: unknown): unknown {
  if (error instanceof LogBlockRangeExceededError || error instanceof LogResultLimitExceededError) {
    return new RpcError(RpcErrorCode.LogQueryLimitExceeded, error.message);
  }
  if (error instanceof InvalidBlockRangeError) {
    return invalidParamsError(`invalid argument 0: fromBlock ${toQuantity(error.from)} is after toBlock ${toQuantity(error.to)}`);
  }
  return error;
}

// --- dev methods ---

/** evm_mine with a timestamp not after the parent's (openrpc EvmTimestampTooLow). */
export function timestampTooLowError(timestamp: bigint, parentTimestamp: bigint): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, `timestamp ${timestamp} is not greater than the parent block's timestamp ${parentTimestamp}`);
}

/** A time argument that would take the clock past what a block can carry. */
export function timeOutOfRangeError(argument: number, reason: string): RpcError {
  return invalidParamsError(`invalid argument ${argument}: ${reason}`);
}

/**
 * A block the store could not write (disk full, LevelDB failed): the store takes no more writes
 * until the node restarts, so every later block fails the same way.
 */
export function blockNotWrittenError(error: BlockWriteError): RpcError {
  return new RpcError(RpcErrorCode.BlockNotWritten, `${error.message}; the node writes no more blocks until it is restarted (its chain is intact up to the head)`);
}

/** Dev-method errors of the mining module -> their JSON-RPC errors (argument: the time's position); anything else passes through. */
export function devChainErrorToRpc(error: unknown, argument: number): unknown {
  if (error instanceof TimestampNotAfterParentError) return timestampTooLowError(error.timestamp, error.parentTimestamp);
  if (error instanceof TimeOutOfRangeError) return timeOutOfRangeError(argument, error.message);
  if (error instanceof BlockTimeExhaustedError) return new RpcError(RpcErrorCode.BlockTimeExhausted, error.message);
  if (error instanceof BlockWriteError) return blockNotWrittenError(error);
  if (error instanceof ExternalMiningOnlyError) return new RpcError(RpcErrorCode.ExternalMiningOnly, error.message);
  return error;
}

/** A dev method that rewrites the chain or its time, refused while peers share it. */
export function historyRewriteWithPeersError(method: string, peers: number): RpcError {
  return new RpcError(RpcErrorCode.HistoryRewriteWithPeers, `${method} is refused while peers are connected (${peers}): it would rewrite blocks or time they hold too; stop the peer-to-peer network (run without --p2p) to use it`);
}

// --- merged mining (the reference's MnrModuleImpl / MinerServerImpl wording) ---

export const mergedMiningRateLimitedError = new RpcError(RpcErrorCode.MergedMiningRefused, "Cannot publish block, block submission rate limit exceeded");

export const mergedMiningEmptyMerkleHashesError = new RpcError(RpcErrorCode.MergedMiningRefused, "The list of merkle hashes can't be empty");

/** `hashForMergedMining`: what follows the coinbase's last tag, or undefined when there is no tag (or too few bytes after it). */
export function mergedMiningWorkNotFoundError(hashForMergedMining: Uint8Array | undefined): RpcError {
  const named = hashForMergedMining === undefined ? "(none: the coinbase has no RSKBLOCK: tag followed by 32 bytes)" : bytesToHex(hashForMergedMining);
  return new RpcError(RpcErrorCode.MergedMiningRefused, `Cannot publish block, could not find hash ${named} in the cache`);
}

/** The reference's message, with the rule the proof broke after it. Short hashes are their first 6 hex digits, as the reference prints them. */
export function mergedMiningInvalidBlockError(blockHash: Uint8Array, hashForMergedMining: Uint8Array, blockNumber: bigint, reason: string): RpcError {
  const short = (hash: Uint8Array) => bytesToHex(hash).slice(2, 8);
  return new RpcError(RpcErrorCode.MergedMiningRefused, `Invalid block supplied by miner: ${short(blockHash)} ${short(hashForMergedMining)} at height ${blockNumber}: ${reason}`);
}

/** Any method whose read met damaged data: what is damaged, and what to do (never served as data). */
export function storedDataDamagedError(error: StoredDataDamagedError): RpcError {
  return new RpcError(RpcErrorCode.StoredDataDamaged, `${error.message}; stop the node and run chain-node verify on its data dir`);
}

// --- personal accounts ---

/**
 * Codes of the personal_ errors as openrpc.json declares them (WrongPassphrase, PersonalUnknownAccount,
 * PersonalAccountLocked, PersonalAccountExists, KeyFileInvalid): geth's server-error range.
 */
export const PersonalErrorCode = {
  WrongPassphrase: -32000,
  UnknownAccount: -32001,
  AccountLocked: -32002,
  AccountExists: -32000,
  KeyFileInvalid: -32000,
  UnlockForbidden: -32000,
  KeyExportForbidden: -32000,
  TooManyPassphraseAttempts: -32000,
  KeyStoreUnavailable: -32000,
} as const;

/**
 * personal_unlockAccount or personal_newAccountWithSeed on a non-loopback bind without
 * --allow-insecure-unlock (geth's wording).
 */
export const unlockForbiddenError = new RpcError(PersonalErrorCode.UnlockForbidden, "account unlock with HTTP access is forbidden");

/** personal_dumpRawKey on a non-loopback bind, with --allow-insecure-unlock or without. */
export const keyExportForbiddenError = new RpcError(PersonalErrorCode.KeyExportForbidden, "private key export is forbidden on a node bound beyond loopback");

/**
 * Wallet and key-store errors -> their JSON-RPC errors; anything else passes through. Messages name
 * addresses and file faults, never a passphrase or a key.
 */
export function walletErrorToRpc(error: unknown): unknown {
  if (error instanceof WrongPassphraseError) return new RpcError(PersonalErrorCode.WrongPassphrase, "could not decrypt key with given passphrase");
  if (error instanceof UnknownAccountError) return new RpcError(PersonalErrorCode.UnknownAccount, `unknown account 0x${error.address}`);
  if (error instanceof AccountLockedError) return new RpcError(PersonalErrorCode.AccountLocked, `account 0x${error.address} is locked`);
  if (error instanceof AccountExistsError) return new RpcError(PersonalErrorCode.AccountExists, `account 0x${error.address} already exists`);
  if (error instanceof KeystoreFormatError) return new RpcError(PersonalErrorCode.KeyFileInvalid, error.message);
  if (error instanceof UnlockForbiddenError) return unlockForbiddenError;
  if (error instanceof TooManyPassphraseAttemptsError) return new RpcError(PersonalErrorCode.TooManyPassphraseAttempts, error.message);
  if (error instanceof KeyStoreAccessError) return new RpcError(PersonalErrorCode.KeyStoreUnavailable, error.message);
  if (error instanceof InvalidPrivateKeyError) return invalidParamsError("invalid argument 0: invalid private key");
  return error;
}

// --- tracing ---

/** debug_traceTransaction with the callTracer for a transaction not in the main chain. */
export function traceTransactionNotFoundError(transactionHash: string): RpcError {
  return new RpcError(RpcErrorCode.TraceTransactionNotFound, `transaction ${transactionHash} not found`);
}

export function traceFilterCountTooBigError(maxTraces: number): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, `Count value too big. Maximum ${maxTraces} traces allowed.`);
}

export function traceFilterAfterTooBigError(maxTraces: number): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, `After value too big. Maximum ${maxTraces} traces allowed.`);
}

export function traceFilterBlockRangeError(): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, "fromBlock cannot be greater than toBlock");
}

/** Tracing errors of the tracing module -> their JSON-RPC errors; anything else passes through. */
export function tracingErrorToRpc(error: unknown): unknown {
  if (error instanceof ReplayStateMissingError) return stateNotFoundError(bytesToHex(error.blockHash));
  if (error instanceof ExecutionTimeoutError) return executionTimeoutError;
  if (error instanceof StructLogTooLargeError) {
    // In a batch the response limit bounds a trace; alone, the trace answer limit (a bound on memory).
    const message = error.flag === "--rpc-response-limit" ? responseTooLargeError(error.limitBytes).message : `Trace answer size limit of ${error.limitBytes} bytes exceeded (${error.flag})`;
    return new RpcError(RpcErrorCode.ResponseTooLarge, message, "trace with a step limit (limit), with disableStack, or without enableMemory for a smaller answer");
  }
  return error;
}
