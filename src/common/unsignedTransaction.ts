// The fields of a legacy transaction before it is signed: what the wallet signs and what the chain
// checks before signing (chain/ and accounts/ share it here, neither may import the other).

export interface UnsignedTransaction {
  nonce: bigint;
  gasPrice: bigint;
  gasLimit: bigint;
  /** undefined for a contract creation. */
  to: Uint8Array | undefined;
  value: bigint;
  data: Uint8Array;
}
