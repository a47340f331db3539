// Accounts whose keys the node holds. Today: the network's development accounts, held unlocked;
// personal_ accounts with an encrypted keystore arrive with the developer-tooling work.
import type { Common } from "@ethereumjs/common";
import { createLegacyTx } from "@ethereumjs/tx";
import { Address } from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import { bytesToUnprefixedHex } from "../common/hex.js";

export interface UnsignedTransaction {
  nonce: bigint;
  gasPrice: bigint;
  gasLimit: bigint;
  /** undefined for a contract creation. */
  to: Uint8Array | undefined;
  value: bigint;
  data: Uint8Array;
}

interface HeldAccount {
  readonly address: Uint8Array;
  readonly privateKey: Uint8Array;
  unlocked: boolean;
}

export class Wallet {
  private readonly accounts = new Map<string, HeldAccount>();

  constructor(private readonly common: Common) {}

  /** Adds an account whose key is keccak-256 of `seed`, unlocked (the reference's regtest accounts). */
  addSeededAccount(seed: string, address: string): void {
    const privateKey = keccak256(new TextEncoder().encode(seed));
    this.accounts.set(address, { address: Buffer.from(address, "hex"), privateKey, unlocked: true });
  }

  /** Held accounts, in the order they were added. */
  addresses(): Uint8Array[] {
    return [...this.accounts.values()].map((account) => account.address);
  }

  isUnlocked(address: Uint8Array): boolean {
    return this.accounts.get(bytesToUnprefixedHex(address))?.unlocked === true;
  }

  /** Signs with the key of an unlocked held account (EIP-155, the chain's id); undefined otherwise. */
  signTransaction(from: Uint8Array, transaction: UnsignedTransaction): Uint8Array | undefined {
    const account = this.accounts.get(bytesToUnprefixedHex(from));
    if (account === undefined || !account.unlocked) return undefined;
    const unsigned = createLegacyTx(
      {
        nonce: transaction.nonce,
        gasPrice: transaction.gasPrice,
        gasLimit: transaction.gasLimit,
        to: transaction.to === undefined ? undefined : new Address(transaction.to),
        value: transaction.value,
        data: transaction.data,
      },
      { common: this.common },
    );
    return unsigned.sign(account.privateKey).serialize();
  }
}
