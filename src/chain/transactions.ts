// Transactions as the chain keeps them: legacy (type 0) transactions, EIP-155 protected with the
// chain's id or unprotected (v = 27/28), as the reference network has; and, on a node started with
// --typed-transactions, EIP-2930 (type 1) and EIP-1559 (type 2) transactions with the chain's id.
// Which types a node takes from its clients is an option each decoding of a received transaction is
// given (two nodes in one process may differ); a transaction the node stored (in a block, or sent
// from an impersonated account) decodes whatever its type, so a chain made with the flag reads back
// without it. The sender is recovered once, after the transaction is decoded (or known, when the
// node signed it), and travels with it: the engine's own sender lookup answers it without recovering
// again. Decoding and recovery are two steps, so that a received transaction's recovery can run on
// another thread (node/recoveryOffload.ts).
//
// A block's base fee is its minimum gas price (execution/rules.ts): a type 2 transaction pays
// min(maxFeePerGas, minimum gas price + maxPriorityFeePerGas) per gas (effectiveGasPrice), the
// others their gasPrice. Their receipts keep the chain's receipt layout, without an EIP-2718 type
// prefix (chain/receipts.ts): the reference has no typed receipts, and a stored receipt then
// checks against its block's receipts root without its transaction's type.
import type { Common } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import {
  create1559FeeMarketTxFromBytesArray,
  createAccessList2930TxFromBytesArray,
  createLegacyTxFromBytesArray,
  type AccessList2930Tx,
  type FeeMarket1559Tx,
  type LegacyTx,
} from "@ethereumjs/tx";
import { Address, bytesToBigInt, equalsBytes } from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import { engineErrorMessage } from "../common/engineErrors.js";
import { bigIntToMinimalBytes } from "../common/hex.js";
import { recoverableSignature, recoverSignerKey, SignatureRecoveryError, type RecoverableSignature } from "../common/signatures.js";
import { createUnsignedTransaction, type UnsignedTransaction } from "../common/unsignedTransaction.js";
import { emptyBytes } from "./header.js";

/** The transaction types the chain holds: legacy (0), EIP-2930 (1) and EIP-1559 (2). */
export type ChainTx = LegacyTx | AccessList2930Tx | FeeMarket1559Tx;

/**
 * Which transaction types a node takes from its clients: legacy only (false, the reference
 * network's rule and the default) or EIP-2930 and EIP-1559 as well (--typed-transactions).
 */
export type TypedTransactionsAccepted = boolean;

export interface ChainTransaction {
  readonly tx: ChainTx;
  /** The signed RLP encoding, as received. */
  readonly raw: Uint8Array;
  readonly hash: Uint8Array;
  readonly sender: Uint8Array;
}

/** Why a raw transaction cannot be accepted at all (before any pool rule). */
export type MalformedTransactionReason = "undecodable" | "typed" | "chainId" | "signature" | "initCode" | "fees";

export class MalformedTransactionError extends Error {
  constructor(
    readonly reason: MalformedTransactionReason,
    message: string,
  ) {
    super(message);
  }
}

/** secp256k1 group order / 2: a larger s is a malleable signature (EIP-2). */
const halfCurveOrder = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** A signed transaction decoded and checked, whose sender is still to be recovered from `signature`. */
export interface SignedTransaction {
  /** Not frozen until its sender is known (withSignerKey). */
  readonly tx: ChainTx;
  readonly raw: Uint8Array;
  readonly hash: Uint8Array;
  readonly signature: RecoverableSignature;
}

/** Decodes and checks a signed raw transaction; recovers its sender. `typed`: whether types 1 and 2 are taken. */
export function decodeRawTransaction(raw: Uint8Array, common: Common, typed: TypedTransactionsAccepted = false): ChainTransaction {
  const signed = decodeSignedTransaction(raw, common, typed);
  let signerKey: Uint8Array;
  try {
    signerKey = recoverSignerKey(signed.signature);
  } catch (error) {
    if (error instanceof SignatureRecoveryError) throw invalidSignature();
    throw error;
  }
  return withSignerKey(signed, signerKey);
}

/**
 * Decodes and checks a transaction this node has just signed with the key of `signer`
 * (eth_sendTransaction, personal_sendTransaction): the same checks as a received one, without
 * recovering a sender the signature was made for.
 */
export function decodeOwnTransaction(raw: Uint8Array, signer: Uint8Array, common: Common, typed: TypedTransactionsAccepted = false): ChainTransaction {
  const { tx, hash } = decodeTransaction(raw, common, typed);
  return { tx: withKnownHashAndSender(tx, hash, signer), raw, hash, sender: signer };
}

/**
 * Decodes a signed raw transaction and checks everything but whether its signature has a signer
 * (recovery tells: decodeRawTransaction, or withSignerKey after a recovery elsewhere). Throws
 * MalformedTransactionError.
 */
export function decodeSignedTransaction(raw: Uint8Array, common: Common, typed: TypedTransactionsAccepted = false): SignedTransaction {
  const { tx, hash, fields, v, chainId } = decodeTransaction(raw, common, typed);
  let signature: RecoverableSignature;
  try {
    signature =
      tx.type === 0
        ? recoverableSignature(signingHash(fields, chainId), v, fields[7]!, fields[8]!, chainId)
        : // A typed transaction's signature carries the y parity (0 or 1) where legacy has v = 27/28.
          recoverableSignature(tx.getHashedMessageToSign(), v + 27n, fields[fields.length - 2]!, fields[fields.length - 1]!);
  } catch (error) {
    throw malformedTransaction(error);
  }
  return { tx, raw, hash, signature };
}

/** A signed transaction's fields, decoded and checked (not its signature's signer). */
interface DecodedTransaction {
  tx: ChainTx;
  hash: Uint8Array;
  /** The RLP list's items (a typed transaction's after its type byte). */
  fields: Uint8Array[];
  /** v of a legacy transaction, the y parity of a typed one. */
  v: bigint;
  /** The EIP-155 chain id of a legacy transaction (undefined when unprotected). */
  chainId: bigint | undefined;
}

/** The types taken with --typed-transactions, and the RLP items each has after its type byte. */
const typedFieldCounts: ReadonlyMap<number, number> = new Map([
  [1, 11],
  [2, 12],
]);

function typeName(type: number): string {
  return `0x${type.toString(16).padStart(2, "0")}`;
}

function decodeTransaction(raw: Uint8Array, common: Common, typed: TypedTransactionsAccepted): DecodedTransaction {
  if (raw.length === 0) throw new MalformedTransactionError("undecodable", "empty transaction");
  if (raw[0]! <= 0x7f) {
    if (!typed) {
      throw new MalformedTransactionError("typed", `typed transactions are not supported (type ${typeName(raw[0]!)}); send a legacy (type 0) transaction: --legacy in Foundry, type: 0 in ethers and viem, defaultTransactionType "0x0" in web3.js`);
    }
    return decodeTypedTransaction(raw, common);
  }
  let values: unknown;
  try {
    values = RLP.decode(raw);
  } catch (error) {
    throw new MalformedTransactionError("undecodable", engineErrorMessage(error));
  }
  if (!Array.isArray(values) || values.length !== 9 || !values.every((value) => value instanceof Uint8Array)) {
    throw new MalformedTransactionError("undecodable", "a legacy transaction is an RLP list of 9 byte strings");
  }
  const fields = values as Uint8Array[];
  const v = bytesToBigInt(fields[6]!);
  // Unprotected (v = 27/28), or EIP-155 protected with the chain's id (v = 35/36 + 2 * chainId).
  const chainId = v === 27n || v === 28n ? undefined : (v - 35n) / 2n;
  if (chainId !== undefined && (v < 35n || chainId !== common.chainId())) throw new MalformedTransactionError("chainId", `Invalid chainId: ${v < 35n ? v : chainId}`);
  if (bytesToBigInt(fields[8]!) > halfCurveOrder) throw new MalformedTransactionError("signature", "invalid transaction signature: s value too high");
  // The decoder and the transaction's own checks refuse every encoding but the canonical one, so
  // the received bytes are what tx.serialize() would give: their hash is the transaction's.
  const hash = keccak256(raw);
  try {
    const tx = createLegacyTxFromBytesArray(fields as Parameters<typeof createLegacyTxFromBytesArray>[0], { common, freeze: false });
    return { tx, hash, fields, v, chainId };
  } catch (error) {
    throw malformedTransaction(error);
  }
}

/**
 * A type 1 or 2 transaction (the node takes them): type byte || RLP list of its fields, the chain's
 * id first and the y parity, r and s last. Other types (0x03 blobs, 0x04 EIP-7702 authorisations)
 * are refused by name.
 */
function decodeTypedTransaction(raw: Uint8Array, common: Common): DecodedTransaction {
  const type = raw[0]!;
  const fieldCount = typedFieldCounts.get(type);
  if (fieldCount === undefined) {
    throw new MalformedTransactionError("typed", `transaction type ${typeName(type)} is not supported; this node takes legacy (0x00), EIP-2930 (0x01) and EIP-1559 (0x02) transactions`);
  }
  let values: unknown;
  try {
    values = RLP.decode(raw.subarray(1));
  } catch (error) {
    throw new MalformedTransactionError("undecodable", engineErrorMessage(error));
  }
  const accessListAt = fieldCount - 4;
  if (
    !Array.isArray(values) ||
    values.length !== fieldCount ||
    !values.every((value, index) => (index === accessListAt ? Array.isArray(value) : value instanceof Uint8Array))
  ) {
    throw new MalformedTransactionError("undecodable", `a type ${typeName(type)} transaction is the type byte and an RLP list of ${fieldCount} items`);
  }
  const fields = values as Uint8Array[];
  const chainId = bytesToBigInt(fields[0]!);
  if (chainId !== common.chainId()) throw new MalformedTransactionError("chainId", `Invalid chainId: ${chainId}`);
  if (bytesToBigInt(fields[fieldCount - 1]!) > halfCurveOrder) throw new MalformedTransactionError("signature", "invalid transaction signature: s value too high");
  if (type === 2) {
    const maxPriorityFeePerGas = bytesToBigInt(fields[2]!);
    const maxFeePerGas = bytesToBigInt(fields[3]!);
    if (maxPriorityFeePerGas > maxFeePerGas) {
      throw new MalformedTransactionError("fees", `transaction's maxPriorityFeePerGas (${maxPriorityFeePerGas}) is higher than its maxFeePerGas (${maxFeePerGas})`);
    }
  }
  let tx: ChainTx;
  try {
    const opts = { common, freeze: false };
    tx = type === 1 ? createAccessList2930TxFromBytesArray(values as never, opts) : create1559FeeMarketTxFromBytesArray(values as never, opts);
  } catch (error) {
    throw malformedTransaction(error);
  }
  // Only the canonical encoding: its hash is then the transaction's (keccak-256 of type || payload).
  if (!equalsBytes(tx.serialize(), raw)) throw new MalformedTransactionError("undecodable", `the type ${typeName(type)} transaction is not in its canonical encoding`);
  return { tx, hash: keccak256(raw), fields, v: bytesToBigInt(fields[fieldCount - 3]!), chainId };
}

/** The received transaction with its sender, from the public key its signature was recovered to. */
export function withSignerKey(signed: SignedTransaction, signerKey: Uint8Array): ChainTransaction {
  // As the package's publicToAddress, with the node's keccak-256.
  const sender = keccak256(signerKey).subarray(12);
  signed.tx.cache.senderPubKey = signerKey;
  return { tx: withKnownHashAndSender(signed.tx, signed.hash, sender), raw: signed.raw, hash: signed.hash, sender };
}

/** The refusal of a transaction whose signature has no signer (recovery failed). */
export function invalidSignature(): MalformedTransactionError {
  return new MalformedTransactionError("signature", "invalid transaction signature");
}

/**
 * Checks fields the node is about to sign (eth_sendTransaction, personal_sendTransaction) as a
 * received transaction's are checked: a nonce of 2^64 - 1 or more, gas limit times gas price past
 * 2^256 - 1, init code over the limit, a priority fee above the fee cap. Throws
 * MalformedTransactionError.
 */
export function checkTransactionFields(fields: UnsignedTransaction, common: Common): void {
  if (fields.type === 2 && (fields.maxPriorityFeePerGas ?? 0n) > (fields.maxFeePerGas ?? 0n)) {
    throw new MalformedTransactionError("fees", `transaction's maxPriorityFeePerGas (${fields.maxPriorityFeePerGas}) is higher than its maxFeePerGas (${fields.maxFeePerGas})`);
  }
  try {
    createUnsignedTransaction(fields, common);
  } catch (error) {
    throw malformedTransaction(error);
  }
}

/**
 * What the transaction pays per gas in a block whose minimum gas price (its base fee) is
 * `minimumGasPrice`: min(maxFeePerGas, base fee + maxPriorityFeePerGas) for type 2, gasPrice for
 * the others. The sender pays gas used times this, the receipt's effectiveGasPrice says it, and the
 * block's paidFees counts it.
 */
export function effectiveGasPrice(tx: ChainTx, minimumGasPrice: bigint): bigint {
  if (tx.type !== 2) return tx.gasPrice;
  const withPriority = minimumGasPrice + tx.maxPriorityFeePerGas;
  return withPriority < tx.maxFeePerGas ? withPriority : tx.maxFeePerGas;
}

/** The most the transaction may pay per gas: gasPrice, or a type 2 transaction's maxFeePerGas (what its sender must hold for). */
export function maxGasPrice(tx: ChainTx): bigint {
  return tx.type === 2 ? tx.maxFeePerGas : tx.gasPrice;
}

/** The engine's refusal of a transaction's fields or signature, in the node's words. */
function malformedTransaction(error: unknown): MalformedTransactionError {
  const message = engineErrorMessage(error);
  if (/signature|recover|invalid [rsv]/i.test(message)) return invalidSignature();
  if (/initcode size/i.test(message)) return new MalformedTransactionError("initCode", "transaction's init code size is invalid");
  return new MalformedTransactionError("undecodable", message);
}

/**
 * The hash a legacy transaction's signer signed, from its decoded fields: RLP of the first six,
 * followed under EIP-155 by the chain id and two empty strings. The package's
 * getMessageToVerifySignature gives the same from the parsed transaction, turning each integer
 * back into bytes first.
 */
function signingHash(fields: readonly Uint8Array[], chainId: bigint | undefined): Uint8Array {
  const unsigned = fields.slice(0, 6);
  if (chainId !== undefined) unsigned.push(bigIntToMinimalBytes(chainId), emptyBytes, emptyBytes);
  return keccak256(RLP.encode(unsigned));
}

/**
 * Rebuilds a stored transaction whose sender is already known (no signature recovery), whatever
 * its type: the node stored it, so it took it (a chain made with --typed-transactions reads back
 * without the flag).
 */
export function restoreTransaction(raw: Uint8Array, sender: Uint8Array, common: Common): ChainTransaction {
  const opts = { common, freeze: false };
  let tx: ChainTx;
  if (raw[0]! > 0x7f) tx = createLegacyTxFromBytesArray(RLP.decode(raw) as Parameters<typeof createLegacyTxFromBytesArray>[0], opts);
  else if (raw[0] === 1) tx = createAccessList2930TxFromBytesArray(RLP.decode(raw.subarray(1)) as never, opts);
  else if (raw[0] === 2) tx = create1559FeeMarketTxFromBytesArray(RLP.decode(raw.subarray(1)) as never, opts);
  else throw new MalformedTransactionError("typed", `the stored transaction has type ${typeName(raw[0]!)}, which the chain does not hold`);
  const hash = keccak256(raw);
  return { tx: withKnownHashAndSender(tx, hash, sender), raw, hash, sender };
}

/**
 * Makes the engine's sender lookup answer `sender` (it would recover the public key again unless
 * cached, and hash it with the package's JavaScript keccak on every execution), gives the
 * transaction its hash (keccak-256 of its canonical bytes), then freezes it as the package would:
 * a frozen transaction answers hash() from that cache.
 */
function withKnownHashAndSender<T extends ChainTx>(tx: T, hash: Uint8Array, sender: Uint8Array): T {
  const address = new Address(sender);
  tx.getSenderAddress = () => address;
  tx.cache.hash = hash;
  Object.freeze(tx);
  return tx;
}

// --- impersonated senders (anvil_impersonateAccount, hardhat_impersonateAccount) ---
//
// A dev node sends from an impersonated address without its key. The transaction still needs bytes
// and a hash that stay the same wherever they are read (receipts, blocks, a restart), and two
// impersonated senders with the same fields must not share a hash. So it carries a stand-in
// signature that names its sender: v as EIP-155 asks (y parity 0 on a typed transaction),
// r = 2^160 + the sender's address, s = 1. No
// key signs that, and recovery does not give the sender: the sender is only ever taken from the
// mark where the node itself stored the transaction (its blocks keep senders; the pool's journal
// marks such entries, txpool/poolJournal.ts). A received transaction is always recovered.

const impersonationMark = 1n << 160n;

/** The transaction `sender` sends without a signature, with the stand-in signature above. */
export function impersonatedTransaction(fields: UnsignedTransaction, sender: Uint8Array, common: Common): ChainTransaction {
  let tx: ChainTx;
  try {
    const v = (fields.type ?? 0) === 0 ? common.chainId() * 2n + 35n : 0n;
    tx = createUnsignedTransaction(fields, common, { v, r: impersonationMark + bytesToBigInt(sender), s: 1n }, false);
  } catch (error) {
    throw malformedTransaction(error);
  }
  const raw = tx.serialize();
  const hash = keccak256(raw);
  return { tx: withKnownHashAndSender(tx, hash, sender), raw, hash, sender };
}

/** The sender an impersonated transaction's stand-in signature names, or undefined when it carries none. */
export function impersonatedSenderOf(raw: Uint8Array): Uint8Array | undefined {
  if (raw.length === 0) return undefined;
  const typed = raw[0]! <= 0x7f;
  let fields: unknown;
  try {
    fields = RLP.decode(typed ? raw.subarray(1) : raw);
  } catch {
    return undefined;
  }
  const count = typed ? typedFieldCounts.get(raw[0]!) : 9;
  if (!Array.isArray(fields) || fields.length !== count) return undefined;
  const r = fields[count - 2] as unknown;
  const s = fields[count - 1] as unknown;
  if (!(r instanceof Uint8Array) || !(s instanceof Uint8Array)) return undefined;
  if (bytesToBigInt(s) !== 1n || bytesToBigInt(r) >> 160n !== 1n) return undefined;
  return r.subarray(1);
}

/** A transaction the node stored with its sender known from its stand-in signature (the pool's journal). */
export function restoreImpersonatedTransaction(raw: Uint8Array, common: Common): ChainTransaction {
  const sender = impersonatedSenderOf(raw);
  if (sender === undefined) throw new MalformedTransactionError("signature", "the stored transaction carries no impersonated sender");
  return restoreTransaction(raw, sender, common);
}
