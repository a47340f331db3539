// secp256k1 signatures on libsecp256k1, from the prebuilt binary the secp256k1 npm package ships (no
// install script runs): a recovery costs about 55-90 µs on this class of machine natively, against
// 3.6 ms in JavaScript. The binding is loaded directly, so a machine where it cannot load fails
// with that error instead of silently running the package's slow JavaScript fallback. It loads on
// the first signature, not at start: making its context builds libsecp256k1's tables, some 10 ms
// that a start to the first answer does not need (issue 39). This module loads nothing else: the
// sender-recovery thread (node/recoveryWorker.ts) imports it alone.
import { createRequire } from "node:module";
import type * as NativeSecp256k1 from "secp256k1/bindings.js";

const require = createRequire(import.meta.url);
let loaded: typeof NativeSecp256k1 | undefined;

/** The binding, loaded on first use. */
function secp256k1(): typeof NativeSecp256k1 {
  return (loaded ??= require("secp256k1/bindings.js") as typeof NativeSecp256k1);
}

/** What recovering a signer's public key takes: the hash signed, r || s, and the recovery id. */
export interface RecoverableSignature {
  /** 32 bytes. */
  readonly messageHash: Uint8Array;
  /** r || s, 32 bytes each. */
  readonly rs: Uint8Array;
  readonly recovery: 0 | 1;
}

function leftPadded32(bytes: Uint8Array): Uint8Array {
  if (bytes.length === 32) return bytes;
  if (bytes.length > 32) throw new Error("signature value longer than 32 bytes");
  const padded = new Uint8Array(32);
  padded.set(bytes, 32 - bytes.length);
  return padded;
}

/**
 * A transaction signature in the form recovery takes, with the engine's `ecrecover` contract: v is
 * 27/28, or 35 + 2 * chainId + recovery under EIP-155. Throws on a v of neither form or an r or s
 * longer than 32 bytes.
 */
export function recoverableSignature(messageHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): RecoverableSignature {
  const recovery = chainId === undefined ? v - 27n : v - (2n * chainId + 35n);
  if (recovery !== 0n && recovery !== 1n) throw new Error("invalid signature v value");
  const rs = new Uint8Array(64);
  rs.set(leftPadded32(r), 0);
  rs.set(leftPadded32(s), 32);
  return { messageHash, rs, recovery: recovery === 0n ? 0 : 1 };
}

/** A signature libsecp256k1 cannot parse, or one with no signer. */
export class SignatureRecoveryError extends Error {}

/** The signer's 64-byte public key (x || y). Throws SignatureRecoveryError when the signature has no signer. */
export function recoverSignerKey(signature: RecoverableSignature): Uint8Array {
  const binding = secp256k1(); // outside the try: a binding that cannot load is no bad signature
  let publicKey: Uint8Array;
  try {
    publicKey = binding.ecdsaRecover(signature.rs, signature.recovery, signature.messageHash, false);
  } catch (error) {
    throw new SignatureRecoveryError((error as Error).message);
  }
  return publicKey.subarray(1);
}

/** The signer's 64-byte public key, or undefined when the signature has no signer. */
export function recoverSignerKeyIfAny(signature: RecoverableSignature): Uint8Array | undefined {
  try {
    return recoverSignerKey(signature);
  } catch (error) {
    if (error instanceof SignatureRecoveryError) return undefined;
    throw error;
  }
}

/** Recovers many signers at once, perhaps on another thread (node/batchChecks.ts). */
export interface SignatureBatchRecovery {
  /** Each signature's signer key, in order; undefined for one that has no signer. */
  recoverAll(signatures: readonly RecoverableSignature[]): Promise<(Uint8Array | undefined)[]>;
}

/**
 * Recovers the signers of received transactions, perhaps on another thread
 * (node/recoveryOffload.ts); recoverSignerKey on the calling thread is the plain way.
 */
export interface SenderRecovery {
  /** The signer's 64-byte public key, answered in the order asked; rejects as recoverSignerKey throws. */
  recover(signature: RecoverableSignature): Promise<Uint8Array>;
  /**
   * Starts recovering the signature of a send that comes later (one further down a JSON-RPC
   * batch); undefined when it cannot start now (the send's own recovery then does the work).
   */
  recoverAhead(signature: RecoverableSignature): RecoveryAhead | undefined;
}

/** A recovery started ahead of its send: read once with `key`, or let go with `release`. */
export interface RecoveryAhead {
  /** The signer's key, recovered here if the other thread has not done so; throws as recoverSignerKey. */
  key(): Uint8Array;
  /** Lets the recovery go unread: its send did not come. */
  release(): void;
}

/** The signer's 64-byte public key (x || y) from a transaction signature (the engine's `ecrecover`). */
export function recoverPublicKey(messageHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array {
  return recoverSignerKey(recoverableSignature(messageHash, v, r, s, chainId));
}

/** An RFC 6979 signature in the engine's "recovered" layout: recovery id || r || s (65 bytes, low s). */
export function signRecoverable(messageHash: Uint8Array, privateKey: Uint8Array): Uint8Array {
  const { signature, recid } = secp256k1().ecdsaSign(messageHash, privateKey);
  const recovered = new Uint8Array(65);
  recovered[0] = recid;
  recovered.set(signature, 1);
  return recovered;
}

/** The 64-byte public key (x || y) of a compressed or uncompressed secp256k1 public key: the reference's node id. Throws on bytes that are no key. */
export function uncompressedPublicKey(publicKey: Uint8Array): Uint8Array {
  return secp256k1().publicKeyConvert(publicKey, false).subarray(1);
}

/** Whether 32 bytes are a valid secp256k1 private key. */
export function isPrivateKey(bytes: Uint8Array): boolean {
  return bytes.length === 32 && secp256k1().privateKeyVerify(bytes);
}
