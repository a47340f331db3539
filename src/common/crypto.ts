// Fast cryptography for the hot paths: signature recovery and signing on libsecp256k1 from the
// prebuilt binary the secp256k1 npm package ships (no install script runs), and keccak-256 in
// WebAssembly (hash-wasm). On this class of machine a recovery costs about 80 µs natively against
// 3.6 ms in JavaScript; a keccak-256 of 64 bytes about 1.4 µs in WebAssembly, against 3.2 µs
// through the keccak package's native addon (four calls across the addon boundary per hash) and
// 11 µs in @noble/hashes. The secp256k1 binding is loaded directly, so a machine where it cannot
// load fails at start-up instead of silently running the package's slow JavaScript fallback.
import { keccak_256 } from "@noble/hashes/sha3.js";
import type * as HashWasm from "hash-wasm";
import { createRequire } from "node:module";
import type * as NativeSecp256k1 from "secp256k1/bindings.js";

const require = createRequire(import.meta.url);
const secp256k1 = require("secp256k1/bindings.js") as typeof NativeSecp256k1;
// Keccak alone: the package's index carries the WebAssembly of every algorithm it has (a slower
// start-up for one hash).
const { createKeccak } = require("hash-wasm/dist/keccak.umd.min.js") as Pick<typeof HashWasm, "createKeccak">;

/**
 * One hasher for every hash: `init` resets it completely, and a hash runs start to end without
 * yielding. The WebAssembly module compiles in the background while the node starts (some 35 ms
 * here); the few hashes before it is ready use @noble/hashes, which gives the same digests. A
 * machine where it cannot compile stops with that error (an unhandled rejection), as for secp256k1.
 */
let hasher: Awaited<ReturnType<typeof createKeccak>> | undefined;
/** Settles once the WebAssembly hasher is in use. */
export const fastKeccakReady: Promise<void> = createKeccak(256).then((created) => {
  hasher = created;
});

/** keccak-256 (the original Keccak padding, not SHA3-256). */
export function keccak256(data: Uint8Array): Uint8Array {
  if (hasher === undefined) return keccak_256(data);
  hasher.init();
  hasher.update(data);
  return hasher.digest("binary");
}

function leftPadded32(bytes: Uint8Array): Uint8Array {
  if (bytes.length === 32) return bytes;
  if (bytes.length > 32) throw new Error("signature value longer than 32 bytes");
  const padded = new Uint8Array(32);
  padded.set(bytes, 32 - bytes.length);
  return padded;
}

/**
 * The signer's 64-byte public key (x || y) from a transaction signature, with the engine's
 * `ecrecover` contract: v is 27/28, or 35 + 2 * chainId + recovery under EIP-155.
 */
export function recoverPublicKey(messageHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array {
  const recovery = chainId === undefined ? v - 27n : v - (2n * chainId + 35n);
  if (recovery !== 0n && recovery !== 1n) throw new Error("invalid signature v value");
  const signature = new Uint8Array(64);
  signature.set(leftPadded32(r), 0);
  signature.set(leftPadded32(s), 32);
  return secp256k1.ecdsaRecover(signature, Number(recovery), messageHash, false).subarray(1);
}

/** An RFC 6979 signature in the engine's "recovered" layout: recovery id || r || s (65 bytes, low s). */
export function signRecoverable(messageHash: Uint8Array, privateKey: Uint8Array): Uint8Array {
  const { signature, recid } = secp256k1.ecdsaSign(messageHash, privateKey);
  const recovered = new Uint8Array(65);
  recovered[0] = recid;
  recovered.set(signature, 1);
  return recovered;
}
