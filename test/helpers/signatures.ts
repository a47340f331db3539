// Signatures for tests of signature recovery.
import { keccak256 } from "../../src/common/crypto.js";
import { recoverSignerKey, signRecoverable, type RecoverableSignature } from "../../src/common/signatures.js";
import { randomBytes, seededRandom } from "./seededRandom.js";

/** `count` signatures of random hashes by random keys, the same for the same seed. */
export function randomSignatures(count: number, seed: number): RecoverableSignature[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const messageHash = randomBytes(next, 32);
    const signed = signRecoverable(messageHash, keccak256(randomBytes(next, 32)));
    return { messageHash, rs: signed.subarray(1), recovery: signed[0] === 0 ? 0 : 1 };
  });
}

/** `signature` with the smallest r that is no point's x coordinate on the curve: it has no signer. */
export function withoutSigner(signature: RecoverableSignature): RecoverableSignature {
  for (let x = 1; ; x++) {
    const rs = new Uint8Array(signature.rs);
    rs.fill(0, 0, 32);
    rs[31] = x;
    const candidate = { ...signature, rs };
    try {
      recoverSignerKey(candidate);
    } catch {
      return candidate;
    }
  }
}
