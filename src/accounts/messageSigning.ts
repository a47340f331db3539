// What the node's accounts sign besides transactions: EIP-191 personal messages and EIP-712 typed
// data (typedData.ts) both come down to a 32-byte digest signed as r || s || v.
import { keccak256 } from "../common/crypto.js";
import { signRecoverable } from "../common/signatures.js";

/**
 * The EIP-191 personal-message hash: keccak-256("\x19Ethereum Signed Message:\n" + decimal byte
 * length + message). The spec names the chain in the prefix; "Ethereum" is what wallets and
 * libraries (ethers' verifyMessage) check, so that is what is signed.
 */
export function personalMessageHash(message: Uint8Array): Uint8Array {
  const prefix = new TextEncoder().encode(`\x19Ethereum Signed Message:\n${message.length}`);
  const prefixed = new Uint8Array(prefix.length + message.length);
  prefixed.set(prefix, 0);
  prefixed.set(message, prefix.length);
  return keccak256(prefixed);
}

/** r || s || v, 65 bytes, v = 27 or 28: the form eth_sign, personal_sign and eth_signTypedData_v4 answer. */
export function signDigest(digest: Uint8Array, privateKey: Uint8Array): Uint8Array {
  const recoverable = signRecoverable(digest, privateKey);
  const signature = new Uint8Array(65);
  signature.set(recoverable.subarray(1), 0);
  signature[64] = 27 + recoverable[0]!;
  return signature;
}
