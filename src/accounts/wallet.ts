// Accounts whose keys the node holds. Today: the network's development accounts, held unlocked;
// personal_ accounts with an encrypted keystore arrive with the developer-tooling work.
import type { Common } from "@ethereumjs/common";
import { createLegacyTx } from "@ethereumjs/tx";
import { Address } from "@ethereumjs/util";
import { keccak256, signRecoverable } from "../common/crypto.js";
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

  /** Locks a held account: it signs nothing until unlocked again. false when it is not held. */
  lock(address: Uint8Array): boolean {
    const account = this.accounts.get(bytesToUnprefixedHex(address));
    if (account === undefined) return false;
    account.unlocked = false;
    return true;
  }

  /**
   * Signs a personal message (personalMessageHash) with the key of an unlocked held account:
   * r || s || v, 65 bytes, v = 27 or 28. undefined for an account not held or locked.
   */
  signMessage(address: Uint8Array, message: Uint8Array): Uint8Array | undefined {
    const account = this.accounts.get(bytesToUnprefixedHex(address));
    if (account === undefined || !account.unlocked) return undefined;
    const recoverable = signRecoverable(personalMessageHash(message), account.privateKey);
    const signature = new Uint8Array(65);
    signature.set(recoverable.subarray(1), 0);
    signature[64] = 27 + recoverable[0]!;
    return signature;
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
