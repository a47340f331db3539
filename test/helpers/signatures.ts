// Signatures for tests of signature recovery.
import { recoverSignerKey, type RecoverableSignature } from "../../src/common/signatures.js";

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
