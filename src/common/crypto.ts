// Fast keccak-256 for the hot paths, in WebAssembly (hash-wasm): a keccak-256 of 64 bytes costs
// about 1.4 µs on this class of machine, against 3.2 µs through the keccak package's native addon
// (four calls across the addon boundary per hash) and 11 µs in @noble/hashes. Signatures are in
// signatures.ts.
import { keccak_256 } from "@noble/hashes/sha3.js";
import type * as HashWasm from "hash-wasm";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
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

/** keccak-256 of `first ‖ second`, without joining them first. */
export function keccak256OfTwo(first: Uint8Array, second: Uint8Array): Uint8Array {
  if (hasher === undefined) return keccak_256.create().update(first).update(second).digest();
  hasher.init();
  hasher.update(first);
  hasher.update(second);
  return hasher.digest("binary");
}
