// Accounts whose keys the node holds: keys kept in memory only (the network's development accounts
// and personal_newAccountWithSeed), and key-store accounts whose encrypted files are opened with a
// passphrase, for a while (unlock) or for one transaction. A wallet that may not unlock (a node bound
// beyond loopback without --allow-insecure-unlock) keeps no key in memory at all: it lists its
// accounts, and signs only with a passphrase given for one transaction.
import { randomBytes } from "node:crypto";
import type { Common } from "@ethereumjs/common";
import { privateToAddress } from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import { createUnsignedTransaction, type UnsignedTransaction } from "../common/unsignedTransaction.js";
import { personalMessageHash, signDigest } from "./messageSigning.js";
import { decryptKey, encryptKey, KeystoreFormatError, lightScrypt, MemoryKeyStorage, WrongPassphraseError, type KeyStorage, type ScryptParameters } from "./keystore.js";

export type { UnsignedTransaction } from "../common/unsignedTransaction.js";
export { personalMessageHash } from "./messageSigning.js";

/** How long personal_newAccount, personal_importRawKey and a bare unlock keep a key (the reference's 30 minutes). */
export const defaultUnlockDurationMs = 30 * 60 * 1000;

/** The address is neither held in memory nor in the key store (message: the reference's wording). */
export class UnknownAccountError extends Error {
  constructor(readonly address: string) {
    super(`unknown account 0x${address}`);
    this.name = "UnknownAccountError";
  }
}

/** The account is known but its key is not in memory. */
export class AccountLockedError extends Error {
  constructor(readonly address: string) {
    super(`account 0x${address} is locked`);
    this.name = "AccountLockedError";
  }
}

/** personal_importRawKey of a key the key store already has (geth refuses it too). */
export class AccountExistsError extends Error {
  constructor(readonly address: string) {
    super(`account 0x${address} already exists`);
    this.name = "AccountExistsError";
  }
}

/**
 * Unlocking is forbidden: the wallet serves a port other machines reach, where an unlocked key
 * would sign for anyone (geth's wording).
 */
export class UnlockForbiddenError extends Error {
  constructor() {
    super("account unlock with HTTP access is forbidden");
    this.name = "UnlockForbiddenError";
  }
}

/** Not a secp256k1 private key (zero, or not below the curve order). */
export class InvalidPrivateKeyError extends Error {
  constructor() {
    super("invalid private key");
    this.name = "InvalidPrivateKeyError";
  }
}

/**
 * Wrong passphrases an account may get within a window before its key-store files refuse every
 * passphrase, right or wrong, for the rest of that window (against guessing over the RPC port).
 */
export const maxPassphraseFailures = 10;
export const passphraseWindowMs = 60_000;

/** An account got maxPassphraseFailures wrong passphrases within passphraseWindowMs. */
export class TooManyPassphraseAttemptsError extends Error {
  constructor(
    readonly address: string,
    readonly retryAfterMs: number,
  ) {
    super(`too many wrong passphrases for account 0x${address}; try again in ${Math.ceil(retryAfterMs / 1000)} s`);
    this.name = "TooManyPassphraseAttemptsError";
  }
}

/** An account's passphrase attempts in the current window. */
interface PassphraseAttempts {
  windowStartMs: number;
  /** Attempts that failed, or are still deriving the key (a success takes its own back). */
  counted: number;
  lockoutReported: boolean;
}

interface KeyInMemory {
  readonly privateKey: Uint8Array;
  /** Date.now() after which the key is dropped; Infinity for keys that never expire. */
  readonly expiresAtMs: number;
}

export interface WalletOptions {
  /** Where key-store files live; default: memory. */
  keys?: KeyStorage;
  /** scrypt cost of the files this wallet writes (any cost is read). */
  scrypt?: ScryptParameters;
  /** The clock unlock durations are measured on (tests move it). */
  now?: () => number;
  /** Told when an account reaches maxPassphraseFailures in a window (the node logs it). */
  onPassphraseLockout?: (address: string) => void;
  /**
   * false: no key is ever held in memory. Development accounts are listed but locked, new and
   * imported accounts are written locked, and unlock and addAccountFromSeed throw
   * UnlockForbiddenError. Default true.
   */
  unlockAllowed?: boolean;
}

/** The address of a private key; InvalidPrivateKeyError for a value that is not one. */
function addressOf(privateKey: Uint8Array): string {
  try {
    return bytesToUnprefixedHex(privateToAddress(privateKey));
  } catch {
    throw new InvalidPrivateKeyError();
  }
}

export class Wallet {
  /** Accounts whose key exists only in memory, in the order they were added. */
  private readonly memoryOnly: string[] = [];
  private readonly keysInMemory = new Map<string, KeyInMemory>();
  /** Imports still deriving or writing: a second import of the same key meanwhile is refused. */
  private readonly importing = new Set<string>();
  /** Key-store addresses as of the last scan, for the synchronous addresses(). */
  private storeAddresses: string[] = [];
  private readonly keys: KeyStorage;
  private readonly scrypt: ScryptParameters;
  private readonly now: () => number;
  private readonly passphraseAttempts = new Map<string, PassphraseAttempts>();
  private readonly onPassphraseLockout: (address: string) => void;
  readonly unlockAllowed: boolean;

  constructor(
    private readonly common: Common,
    options: WalletOptions = {},
  ) {
    this.keys = options.keys ?? new MemoryKeyStorage();
    this.scrypt = options.scrypt ?? lightScrypt;
    this.now = options.now ?? Date.now;
    this.onPassphraseLockout = options.onPassphraseLockout ?? (() => undefined);
    this.unlockAllowed = options.unlockAllowed ?? true;
  }

  /** Where the key store is: a directory, or "memory". */
  get keyStoreLocation(): string {
    return this.keys.location;
  }

  /**
   * Adds an account whose key is keccak-256 of `seed` (the reference's regtest accounts): unlocked,
   * or listed and locked where unlocking is forbidden (it has no key-store file to unlock it from).
   */
  addSeededAccount(seed: string, address: string): void {
    if (!this.memoryOnly.includes(address)) this.memoryOnly.push(address);
    if (this.unlockAllowed) this.keysInMemory.set(address, { privateKey: keccak256(new TextEncoder().encode(seed)), expiresAtMs: Infinity });
  }

  /**
   * personal_newAccountWithSeed: key = keccak-256 of the UTF-8 seed, in memory only, never expires.
   * UnlockForbiddenError where unlocking is forbidden: an account made locked, without a file, could
   * never be used.
   */
  addAccountFromSeed(seed: string): Uint8Array {
    if (!this.unlockAllowed) throw new UnlockForbiddenError();
    const privateKey = keccak256(new TextEncoder().encode(seed));
    const address = addressOf(privateKey);
    if (!this.memoryOnly.includes(address)) this.memoryOnly.push(address);
    this.keysInMemory.set(address, { privateKey, expiresAtMs: Infinity });
    return Buffer.from(address, "hex");
  }

  /** Held accounts as last seen: in-memory ones in the order they were added, then key-store ones. */
  addresses(): Uint8Array[] {
    const ordered = new Set([...this.memoryOnly, ...this.storeAddresses]);
    return [...ordered].map((address) => new Uint8Array(Buffer.from(address, "hex")));
  }

  /** addresses() after rescanning the key store (files copied in by hand show up). */
  async listAccounts(): Promise<Uint8Array[]> {
    this.storeAddresses = await this.keys.addresses();
    return this.addresses();
  }

  /** The key of an account while it is unlocked; an expired unlock is dropped here. */
  private liveKey(address: string): Uint8Array | undefined {
    const held = this.keysInMemory.get(address);
    if (held === undefined) return undefined;
    if (this.now() >= held.expiresAtMs) {
      this.keysInMemory.delete(address);
      return undefined;
    }
    return held.privateKey;
  }

  isUnlocked(address: Uint8Array): boolean {
    return this.liveKey(bytesToUnprefixedHex(address)) !== undefined;
  }

  /** The accounts whose keys are in memory now, in the order of addresses(). */
  unlockedAddresses(): Uint8Array[] {
    return this.addresses().filter((address) => this.isUnlocked(address));
  }

  /** Drops the key from memory: it signs nothing until unlocked again. true when it was unlocked. */
  lock(address: Uint8Array): boolean {
    const hex = bytesToUnprefixedHex(address);
    const wasUnlocked = this.liveKey(hex) !== undefined;
    this.keysInMemory.delete(hex);
    return wasUnlocked;
  }

  /** personal_newAccount: a random key, written encrypted to the key store, unlocked for 30 minutes where unlocking is allowed. */
  async newAccount(passphrase: string): Promise<Uint8Array> {
    for (;;) {
      const privateKey = new Uint8Array(randomBytes(32));
      let address: string;
      try {
        address = addressOf(privateKey);
      } catch {
        continue; // zero or above the curve order: about 1 in 2^128
      }
      await this.storeKey(address, privateKey, passphrase);
      return Buffer.from(address, "hex");
    }
  }

  /** personal_importRawKey: the key written encrypted to the key store, unlocked for 30 minutes where unlocking is allowed. */
  async importRawKey(privateKey: Uint8Array, passphrase: string): Promise<Uint8Array> {
    const address = addressOf(privateKey);
    if (this.importing.has(address)) throw new AccountExistsError(address);
    this.importing.add(address);
    try {
      if ((await this.keys.addresses()).includes(address)) throw new AccountExistsError(address);
      await this.storeKey(address, privateKey, passphrase);
    } finally {
      this.importing.delete(address);
    }
    return Buffer.from(address, "hex");
  }

  private async storeKey(address: string, privateKey: Uint8Array, passphrase: string): Promise<void> {
    const file = await encryptKey(privateKey, Buffer.from(address, "hex"), passphrase, this.scrypt);
    await this.keys.write(file);
    if (!this.storeAddresses.includes(address)) this.storeAddresses.push(address);
    if (this.unlockAllowed) this.keysInMemory.set(address, { privateKey, expiresAtMs: this.now() + defaultUnlockDurationMs });
  }

  /**
   * Opens the account's key-store file with the passphrase and keeps the key for `durationMs`.
   * false when the key store has no file for the address; WrongPassphraseError leaves it as it was.
   * UnlockForbiddenError, before the passphrase is tried, where unlocking is forbidden.
   */
  async unlock(address: Uint8Array, passphrase: string, durationMs: number = defaultUnlockDurationMs): Promise<boolean> {
    if (!this.unlockAllowed) throw new UnlockForbiddenError();
    const hex = bytesToUnprefixedHex(address);
    const files = await this.keys.filesFor(hex);
    if (files.length === 0) return false;
    const privateKey = await this.decryptAny(hex, files, passphrase);
    this.keysInMemory.set(hex, { privateKey, expiresAtMs: this.now() + durationMs });
    return true;
  }

  /**
   * The key from the first of the address's files the passphrase opens; TooManyPassphraseAttemptsError
   * (without trying) while the account is locked out by wrong passphrases.
   */
  private async decryptAny(address: string, files: unknown[], passphrase: string): Promise<Uint8Array> {
    const attempts = this.countAttempt(address);
    let privateKey: Uint8Array;
    try {
      privateKey = await this.decryptWithoutLimit(address, files, passphrase);
    } catch (error) {
      // Only a wrong passphrase counts (not a broken file); the lockout is reported once a window.
      if (!(error instanceof WrongPassphraseError)) attempts.counted--;
      else if (attempts.counted >= maxPassphraseFailures && !attempts.lockoutReported) {
        attempts.lockoutReported = true;
        this.onPassphraseLockout(address);
      }
      throw error;
    }
    attempts.counted--;
    return privateKey;
  }

  /** Counts an attempt on the account's files in the current window, or refuses it past the limit. */
  private countAttempt(address: string): PassphraseAttempts {
    const now = this.now();
    for (const [held, attempts] of this.passphraseAttempts) if (now - attempts.windowStartMs >= passphraseWindowMs) this.passphraseAttempts.delete(held);
    let attempts = this.passphraseAttempts.get(address);
    if (attempts === undefined) {
      attempts = { windowStartMs: now, counted: 0, lockoutReported: false };
      this.passphraseAttempts.set(address, attempts);
    }
    if (attempts.counted >= maxPassphraseFailures) throw new TooManyPassphraseAttemptsError(address, attempts.windowStartMs + passphraseWindowMs - now);
    attempts.counted++;
    return attempts;
  }

  private async decryptWithoutLimit(address: string, files: unknown[], passphrase: string): Promise<Uint8Array> {
    let failure: Error | undefined;
    for (const file of files) {
      try {
        const privateKey = await decryptKey(file, passphrase);
        if (addressOf(privateKey) !== address) throw new KeystoreFormatError("the key does not belong to the file's address");
        return privateKey;
      } catch (error) {
        if (!(error instanceof WrongPassphraseError || error instanceof KeystoreFormatError || error instanceof InvalidPrivateKeyError)) throw error;
        // A wrong passphrase on any file wins over a broken file: it is what the caller can fix.
        if (!(failure instanceof WrongPassphraseError)) failure = error instanceof InvalidPrivateKeyError ? new KeystoreFormatError("the key is not a valid private key") : error;
      }
    }
    throw failure ?? new WrongPassphraseError();
  }

  /** personal_dumpRawKey: the key of an unlocked account; AccountLockedError or UnknownAccountError otherwise. */
  async exportKey(address: Uint8Array): Promise<Uint8Array> {
    const hex = bytesToUnprefixedHex(address);
    const privateKey = this.liveKey(hex);
    if (privateKey !== undefined) return privateKey;
    if (this.memoryOnly.includes(hex) || (await this.keys.addresses()).includes(hex)) throw new AccountLockedError(hex);
    throw new UnknownAccountError(hex);
  }

  /** Signs a personal message (personalMessageHash) as signHash does. */
  signMessage(address: Uint8Array, message: Uint8Array): Uint8Array | undefined {
    return this.signHash(address, personalMessageHash(message));
  }

  /**
   * Signs a 32-byte digest with the key of an unlocked held account: r || s || v, v = 27 or 28.
   * undefined for an account not held or locked.
   */
  signHash(address: Uint8Array, digest: Uint8Array): Uint8Array | undefined {
    const privateKey = this.liveKey(bytesToUnprefixedHex(address));
    return privateKey === undefined ? undefined : signDigest(digest, privateKey);
  }

  /**
   * personal_sign with a passphrase: the key-store file opened for this signature only, as
   * signTransactionWithPassphrase does (the lock state does not change; it works where unlocking is
   * forbidden). UnknownAccountError without a key-store file.
   */
  async signHashWithPassphrase(address: Uint8Array, passphrase: string, digest: Uint8Array): Promise<Uint8Array> {
    const hex = bytesToUnprefixedHex(address);
    const files = await this.keys.filesFor(hex);
    if (files.length === 0) throw new UnknownAccountError(hex);
    return signDigest(digest, await this.decryptAny(hex, files, passphrase));
  }

  /** Signs with the key of an unlocked held account (EIP-155, the chain's id); undefined otherwise. */
  signTransaction(from: Uint8Array, transaction: UnsignedTransaction): Uint8Array | undefined {
    const privateKey = this.liveKey(bytesToUnprefixedHex(from));
    return privateKey === undefined ? undefined : this.sign(privateKey, transaction);
  }

  /**
   * personal_sendTransaction's signing: the key-store file opened with the passphrase for this
   * transaction only (the lock state does not change). UnknownAccountError without a key-store file.
   * The transaction is prepared after the slow key derivation, so its nonce is as fresh as can be.
   */
  async signTransactionWithPassphrase(from: Uint8Array, passphrase: string, prepare: () => Promise<UnsignedTransaction>): Promise<Uint8Array> {
    const hex = bytesToUnprefixedHex(from);
    const files = await this.keys.filesFor(hex);
    if (files.length === 0) throw new UnknownAccountError(hex);
    const privateKey = await this.decryptAny(hex, files, passphrase);
    return this.sign(privateKey, await prepare());
  }

  /** Signs a legacy transaction (EIP-155), or a typed one (the node's --typed-transactions) with its y parity. */
  private sign(privateKey: Uint8Array, transaction: UnsignedTransaction): Uint8Array {
    return createUnsignedTransaction(transaction, this.common).sign(privateKey).serialize();
  }
}
