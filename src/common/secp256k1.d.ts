// The part of the secp256k1 package's native binding (libsecp256k1) the node uses.
declare module "secp256k1/bindings.js" {
  /** 64-byte compact signature (r || s, low s) and its recovery id. */
  export function ecdsaSign(messageHash: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  /** The signer's public key: 65 bytes uncompressed (0x04 || x || y) unless `compressed`. Throws on a bad signature. */
  /** The same public key in the other form: 33 bytes compressed, or 65 uncompressed (0x04 || x || y). Throws on bytes that are no key. */
  export function publicKeyConvert(publicKey: Uint8Array, compressed: boolean): Uint8Array;
  /** Whether 32 bytes are a valid private key (not zero, below the group order). */
  export function privateKeyVerify(privateKey: Uint8Array): boolean;
  export function ecdsaRecover(signature: Uint8Array, recid: number, messageHash: Uint8Array, compressed: boolean): Uint8Array;
}
