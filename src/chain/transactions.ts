// Transactions as the chain keeps them: only legacy (type 0) transactions, EIP-155 protected with
// the chain's id or unprotected (v = 27/28). The sender is recovered once, after the transaction is
// decoded (or known, when the node signed it), and travels with it: the engine's own sender lookup
// answers it without recovering again. Decoding and recovery are two steps, so that a received
// transaction's recovery can run on another thread (node/recoveryOffload.ts).
import type { Common } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import { createLegacyTx, createLegacyTxFromBytesArray, type LegacyTx } from "@ethereumjs/tx";
import { Address, bytesToBigInt } from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import { engineErrorMessage } from "../common/engineErrors.js";
import { bigIntToMinimalBytes } from "../common/hex.js";
import { recoverableSignature, recoverSignerKey, SignatureRecoveryError, type RecoverableSignature } from "../common/signatures.js";
import type { UnsignedTransaction } from "../common/unsignedTransaction.js";
import { emptyBytes } from "./header.js";

export interface ChainTransaction {
  readonly tx: LegacyTx;
  /** The signed RLP encoding, as received. */
  readonly raw: Uint8Array;
  readonly hash: Uint8Array;
  readonly sender: Uint8Array;
}

/** Why a raw transaction cannot be accepted at all (before any pool rule). */
export type MalformedTransactionReason = "undecodable" | "typed" | "chainId" | "signature" | "initCode";

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
  readonly tx: LegacyTx;
  readonly raw: Uint8Array;
  readonly hash: Uint8Array;
  readonly signature: RecoverableSignature;
}

/** Decodes and checks a signed raw transaction; recovers its sender. */
export function decodeRawTransaction(raw: Uint8Array, common: Common): ChainTransaction {
  const signed = decodeSignedTransaction(raw, common);
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
export function decodeOwnTransaction(raw: Uint8Array, signer: Uint8Array, common: Common): ChainTransaction {
  const { tx, hash } = decodeTransaction(raw, common);
  return { tx: withKnownHashAndSender(tx, hash, signer), raw, hash, sender: signer };
}

/**
 * Decodes a signed raw transaction and checks everything but whether its signature has a signer
 * (recovery tells: decodeRawTransaction, or withSignerKey after a recovery elsewhere). Throws
 * MalformedTransactionError.
 */
export function decodeSignedTransaction(raw: Uint8Array, common: Common): SignedTransaction {
  const { tx, hash, fields, v, chainId } = decodeTransaction(raw, common);
  let signature: RecoverableSignature;
  try {
    signature = recoverableSignature(signingHash(fields, chainId), v, fields[7]!, fields[8]!, chainId);
  } catch (error) {
    throw malformedTransaction(error);
  }
  return { tx, raw, hash, signature };
}

/** A signed transaction's fields, decoded and checked (not its signature's signer). */
interface DecodedTransaction {
  tx: LegacyTx;
  hash: Uint8Array;
  fields: Uint8Array[];
  v: bigint;
  chainId: bigint | undefined;
}

function decodeTransaction(raw: Uint8Array, common: Common): DecodedTransaction {
  if (raw.length === 0) throw new MalformedTransactionError("undecodable", "empty transaction");
  if (raw[0]! <= 0x7f) {
    throw new MalformedTransactionError("typed", `typed transactions are not supported (type 0x${raw[0]!.toString(16).padStart(2, "0")}); send a legacy (type 0) transaction: --legacy in Foundry, type: 0 in ethers and viem, defaultTransactionType "0x0" in web3.js`);
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
 * 2^256 - 1, init code over the limit. Throws MalformedTransactionError.
 */
export function checkTransactionFields(fields: UnsignedTransaction, common: Common): void {
  try {
    createLegacyTx({ ...fields, to: fields.to === undefined ? undefined : new Address(fields.to) }, { common });
  } catch (error) {
    throw malformedTransaction(error);
  }
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

/** Rebuilds a stored transaction whose sender is already known (no signature recovery). */
export function restoreTransaction(raw: Uint8Array, sender: Uint8Array, common: Common): ChainTransaction {
  const fields = RLP.decode(raw) as Uint8Array[];
  const tx = createLegacyTxFromBytesArray(fields as Parameters<typeof createLegacyTxFromBytesArray>[0], { common, freeze: false });
  const hash = keccak256(raw);
  return { tx: withKnownHashAndSender(tx, hash, sender), raw, hash, sender };
}

/**
 * Makes the engine's sender lookup answer `sender` (it would recover the public key again unless
 * cached, and hash it with the package's JavaScript keccak on every execution), gives the
 * transaction its hash (keccak-256 of its canonical bytes), then freezes it as the package would:
 * a frozen transaction answers hash() from that cache.
 */
function withKnownHashAndSender(tx: LegacyTx, hash: Uint8Array, sender: Uint8Array): LegacyTx {
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
// signature that names its sender: v as EIP-155 asks, r = 2^160 + the sender's address, s = 1. No
// key signs that, and recovery does not give the sender: the sender is only ever taken from the
// mark where the node itself stored the transaction (its blocks keep senders; the pool's journal
// marks such entries, txpool/poolJournal.ts). A received transaction is always recovered.

const impersonationMark = 1n << 160n;

/** The transaction `sender` sends without a signature, with the stand-in signature above. */
export function impersonatedTransaction(fields: UnsignedTransaction, sender: Uint8Array, common: Common): ChainTransaction {
  let tx: LegacyTx;
  try {
    tx = createLegacyTx(
      { ...fields, to: fields.to === undefined ? undefined : new Address(fields.to), v: common.chainId() * 2n + 35n, r: impersonationMark + bytesToBigInt(sender), s: 1n },
      { common, freeze: false },
    );
  } catch (error) {
    throw malformedTransaction(error);
  }
  const raw = tx.serialize();
  const hash = keccak256(raw);
  return { tx: withKnownHashAndSender(tx, hash, sender), raw, hash, sender };
}

/** The sender an impersonated transaction's stand-in signature names, or undefined when it carries none. */
export function impersonatedSenderOf(raw: Uint8Array): Uint8Array | undefined {
  let fields: unknown;
  try {
    fields = RLP.decode(raw);
  } catch {
    return undefined;
  }
  if (!Array.isArray(fields) || fields.length !== 9 || !fields.every((field) => field instanceof Uint8Array)) return undefined;
  const r = bytesToBigInt(fields[7] as Uint8Array);
  if (bytesToBigInt(fields[8] as Uint8Array) !== 1n || r >> 160n !== 1n) return undefined;
  return (fields[7] as Uint8Array).subarray(1);
}

/** A transaction the node stored with its sender known from its stand-in signature (the pool's journal). */
export function restoreImpersonatedTransaction(raw: Uint8Array, common: Common): ChainTransaction {
  const sender = impersonatedSenderOf(raw);
  if (sender === undefined) throw new MalformedTransactionError("signature", "the stored transaction carries no impersonated sender");
  return restoreTransaction(raw, sender, common);
}
