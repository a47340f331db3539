// The fields of a transaction before it is signed: what the wallet signs and what the chain checks
// before signing (chain/ and accounts/ share it here, neither may import the other), and the
// package's transaction made from them. Legacy unless `type` says 1 (EIP-2930) or 2 (EIP-1559),
// which a node takes only with --typed-transactions (chain/transactions.ts).
import type { Common } from "@ethereumjs/common";
import { createAccessList2930Tx, createFeeMarket1559Tx, createLegacyTx, type AccessList2930Tx, type FeeMarket1559Tx, type LegacyTx } from "@ethereumjs/tx";
import { Address } from "@ethereumjs/util";

/** An EIP-2930 access list entry: an address and the storage slots (32 bytes each) it warms. */
export interface AccessListEntry {
  address: Uint8Array;
  storageKeys: Uint8Array[];
}

export interface UnsignedTransaction {
  /** 0 (legacy) when absent. */
  type?: 0 | 1 | 2;
  nonce: bigint;
  /** The price per gas of types 0 and 1 (unused by type 2). */
  gasPrice: bigint;
  gasLimit: bigint;
  /** undefined for a contract creation. */
  to: Uint8Array | undefined;
  value: bigint;
  data: Uint8Array;
  /** Types 1 and 2. */
  accessList?: AccessListEntry[];
  /** Type 2: the most it pays per gas, the base fee included. */
  maxFeePerGas?: bigint;
  /** Type 2: the most it pays per gas above the base fee. */
  maxPriorityFeePerGas?: bigint;
}

/** A stand-in or real signature to put on the transaction: v of legacy, the y parity (0/1) of a typed one. */
export interface SignatureFields {
  v: bigint;
  r: bigint;
  s: bigint;
}

/**
 * The package's transaction of `fields` (unsigned, or with `signature`), frozen unless `freeze` is
 * false. Throws the package's refusal of fields it cannot hold.
 */
export function createUnsignedTransaction(fields: UnsignedTransaction, common: Common, signature?: SignatureFields, freeze = true): LegacyTx | AccessList2930Tx | FeeMarket1559Tx {
  const shared = {
    nonce: fields.nonce,
    gasLimit: fields.gasLimit,
    to: fields.to === undefined ? undefined : new Address(fields.to),
    value: fields.value,
    data: fields.data,
    ...signature,
  };
  const options = { common, freeze };
  switch (fields.type ?? 0) {
    case 0:
      return createLegacyTx({ ...shared, gasPrice: fields.gasPrice }, options);
    case 1:
      return createAccessList2930Tx({ ...shared, chainId: common.chainId(), gasPrice: fields.gasPrice, accessList: fields.accessList?.map(({ address, storageKeys }) => [address, storageKeys]) ?? [] }, options);
    default:
      return createFeeMarket1559Tx(
        {
          ...shared,
          chainId: common.chainId(),
          maxFeePerGas: fields.maxFeePerGas ?? 0n,
          maxPriorityFeePerGas: fields.maxPriorityFeePerGas ?? 0n,
          accessList: fields.accessList?.map(({ address, storageKeys }) => [address, storageKeys]) ?? [],
        },
        options,
      );
  }
}
