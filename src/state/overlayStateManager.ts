// State for executions whose changes are thrown away (eth_call, eth_estimateGas): the stored state
// at one root, read through the tries, with every change held in memory beside it and undone on
// revert. Nothing is ever written back, so there is no trie to update and no account to encode.
//
// The engine's MerkleStateManager keeps its cached accounts as RLP: every putAccount encodes one
// and every getAccount decodes one, and a small call puts the sender three times (gas, value
// debit, value credit). Here accounts stay objects, changes are undone from a journal of previous
// values, and reads of the stored state are kept per root (the state of a root never changes), so
// the next call at the same root finds them without walking the trie.
//
// The engine's view is the package's: getAccount answers a fresh object each time, storage values
// come without leading zeros (empty when unset), and a slot not written here is read from the
// storage trie under the account's storage root (empty once the account is gone or its storage
// cleared).
import type { AccountFields, StateManagerInterface } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import { CODEHASH_PREFIX } from "@ethereumjs/statemanager";
import { Account, type Address, concatBytes, createAccountFromRLP, equalsBytes, KECCAK256_NULL, KECCAK256_RLP, unprefixedHexToBytes } from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import { GenerationalCache } from "../common/generationalCache.js";
import { bytesToUnprefixedHex, hexOfRecentKey, hexOfStableBytes, withoutLeadingZeroBytes } from "../common/hex.js";
import { OriginalStorageValues } from "./originalStorageValues.js";
import type { StateTrie } from "./stateTrie.js";

/** Stored reads kept per root (at most; the oldest go first) before they are read again from the tries. */
const keptStoredAccounts = 10_000;
const keptStoredSlots = 50_000;
const keptStoredCodeBytes = 16 * 1024 * 1024;

const emptyValue = new Uint8Array(0);

/** Hex keys of addresses, storage roots and code hashes: their bytes are never changed in place. */
const hexKey = hexOfStableBytes;

function addressKey(address: Address): string {
  return hexKey(address.bytes);
}

function copyOf(account: Account): Account {
  return new Account(account.nonce, account.balance, account.storageRoot, account.codeHash);
}

/** Each kept account or slot counts one against its cache's bound. */
const countOne = () => 1;

/** What the state at one root holds, read through the tries and kept (the state of a root never changes). */
class StoredState {
  private readonly accounts = new GenerationalCache<Account | null>(keptStoredAccounts, countOne);
  private readonly slots = new GenerationalCache<Uint8Array>(keptStoredSlots, countOne);
  private readonly codes = new GenerationalCache<Uint8Array>(keptStoredCodeBytes, (_, code) => code.length);

  constructor(
    private readonly tries: StateTrie,
    readonly root: Uint8Array,
  ) {}

  /** The stored account (not to be changed: callers copy it), null when there is none. */
  async account(address: Address, addressHex: string): Promise<Account | null> {
    const known = this.accounts.get(addressHex);
    if (known !== undefined) return known;
    const encoded = await this.tries.getAt(this.root, address.bytes);
    const account = encoded === null ? null : createAccountFromRLP(encoded);
    this.accounts.set(addressHex, account);
    return account;
  }

  /** As account, without waiting (see StoredStateReads). */
  accountSync(addressHex: string): Account | null | undefined {
    const known = this.accounts.get(addressHex);
    if (known !== undefined) return known;
    const encoded = this.tries.getAtSync(this.root, unprefixedHexToBytes(addressHex));
    if (encoded === undefined) return undefined;
    const account = encoded === null ? null : createAccountFromRLP(encoded);
    this.accounts.set(addressHex, account);
    return account;
  }

  /** As slot, without waiting (see StoredStateReads). */
  slotSync(storageRoot: Uint8Array, slotHex: string): Uint8Array | undefined {
    if (equalsBytes(storageRoot, KECCAK256_RLP)) return emptyValue;
    const key = hexKey(storageRoot) + slotHex;
    const known = this.slots.get(key);
    if (known !== undefined) return known;
    const encoded = this.tries.getAtSync(storageRoot, unprefixedHexToBytes(slotHex));
    if (encoded === undefined) return undefined;
    const value = encoded === null ? emptyValue : (RLP.decode(encoded) as Uint8Array);
    this.slots.set(key, value);
    return value;
  }

  /** As code, without waiting (see StoredStateReads). */
  codeSync(codeHash: Uint8Array): Uint8Array | undefined {
    if (equalsBytes(codeHash, KECCAK256_NULL)) return emptyValue;
    const codeHashHex = hexKey(codeHash);
    const known = this.codes.get(codeHashHex);
    if (known !== undefined) return known;
    const nodes = this.tries.nodeStore();
    if (nodes === undefined) return undefined;
    const code = nodes.getNode(bytesToUnprefixedHex(concatBytes(CODEHASH_PREFIX, codeHash))) ?? emptyValue;
    this.codes.set(codeHashHex, code);
    return code;
  }

  /** The value of `slot` in the storage trie with root `storageRoot`, without leading zeros. */
  async slot(storageRoot: Uint8Array, slot: Uint8Array, slotHex: string): Promise<Uint8Array> {
    if (equalsBytes(storageRoot, KECCAK256_RLP)) return emptyValue;
    const key = hexKey(storageRoot) + slotHex;
    const known = this.slots.get(key);
    if (known !== undefined) return known;
    const encoded = await this.tries.getAt(storageRoot, slot);
    const value = encoded === null ? emptyValue : (RLP.decode(encoded) as Uint8Array);
    this.slots.set(key, value);
    return value;
  }

  async code(codeHash: Uint8Array, codeHashHex: string): Promise<Uint8Array> {
    const known = this.codes.get(codeHashHex);
    if (known !== undefined) return known;
    const code = (await this.tries.database().get(concatBytes(CODEHASH_PREFIX, codeHash))) ?? emptyValue;
    this.codes.set(codeHashHex, code);
    return code;
  }
}

/**
 * The stored state at one root, read without waiting (execution/synchronousCalls.ts): the same
 * reads as the overlay's, from the same kept values, through the tries' synchronous walk. Each
 * answers undefined when it cannot read that way (the tries are not on a TrieNodeStore); a node
 * missing from the store throws. Nothing answered is to be changed.
 */
export interface StoredStateReads {
  readonly root: Uint8Array;
  /** The stored account at `addressHex` (unprefixed hex of its 20 bytes), null when there is none. */
  account(addressHex: string): Account | null | undefined;
  /** A slot's value without leading zeros (empty when unset). `slotHex`: unprefixed hex of the 32-byte slot. */
  slot(storageRoot: Uint8Array, slotHex: string): Uint8Array | undefined;
  /** The code stored under `codeHash` (empty when none). */
  code(codeHash: Uint8Array): Uint8Array | undefined;
}

/** One change, with what it replaced: reverting puts the previous value back. */
type JournalEntry =
  /** An account written or deleted (previous: the overlay's entry before, undefined when none). */
  | { kind: "account"; addressHex: string; previous: Account | null | undefined }
  /** A slot written (previous: the overlay's value before, undefined when none). */
  | { kind: "slot"; slots: Map<string, Uint8Array>; slotHex: string; previous: Uint8Array | undefined }
  /** An account's written slots replaced (first write, deleted account, cleared storage): the map before. */
  | { kind: "storage"; addressHex: string; previous: Map<string, Uint8Array> | undefined };

export class OverlayStateManager implements StateManagerInterface {
  /** Changed accounts: the account, or null for a deleted one. */
  private readonly accounts = new Map<string, Account | null>();
  /** Written slots by account: the value without leading zeros. */
  private readonly storages = new Map<string, Map<string, Uint8Array>>();
  /** Code put by this execution, by its hash (content-addressed, so never undone). */
  private readonly codes = new Map<string, Uint8Array>();
  private readonly journal: JournalEntry[] = [];
  /** Journal length at each open checkpoint. */
  private readonly checkpoints: number[] = [];
  private stored: StoredState;

  readonly originalStorageCache: OriginalStorageValues;

  constructor(
    private readonly tries: StateTrie,
    root: Uint8Array,
    private readonly hasStoredRoot: (root: Uint8Array) => boolean,
  ) {
    this.stored = new StoredState(tries, root);
    this.originalStorageCache = new OriginalStorageValues((address, key) => this.getStorage(address, key));
  }

  async getAccount(address: Address): Promise<Account | undefined> {
    const addressHex = addressKey(address);
    const account = await this.currentAccount(address, addressHex);
    return account === null ? undefined : copyOf(account);
  }

  private async currentAccount(address: Address, addressHex: string): Promise<Account | null> {
    const changed = this.accounts.get(addressHex);
    return changed !== undefined ? changed : this.stored.account(address, addressHex);
  }

  async putAccount(address: Address, account?: Account): Promise<void> {
    this.setAccount(addressKey(address), account === undefined ? null : copyOf(account));
  }

  private setAccount(addressHex: string, account: Account | null): void {
    this.journal.push({ kind: "account", addressHex, previous: this.accounts.get(addressHex) });
    this.accounts.set(addressHex, account);
  }

  async deleteAccount(address: Address): Promise<void> {
    const addressHex = addressKey(address);
    this.setAccount(addressHex, null);
    this.dropStorage(addressHex);
  }

  async modifyAccountFields(address: Address, fields: AccountFields): Promise<void> {
    const account = (await this.getAccount(address)) ?? new Account();
    if (fields.nonce !== undefined) account.nonce = fields.nonce;
    if (fields.balance !== undefined) account.balance = fields.balance;
    if (fields.storageRoot !== undefined) account.storageRoot = fields.storageRoot;
    if (fields.codeHash !== undefined) account.codeHash = fields.codeHash;
    await this.putAccount(address, account);
  }

  async putCode(address: Address, code: Uint8Array): Promise<void> {
    const codeHash = keccak256(code);
    this.codes.set(bytesToUnprefixedHex(codeHash), code);
    await this.modifyAccountFields(address, { codeHash });
  }

  async getCode(address: Address): Promise<Uint8Array> {
    const account = await this.currentAccount(address, addressKey(address));
    if (account === null || equalsBytes(account.codeHash, KECCAK256_NULL)) return emptyValue;
    const codeHashHex = hexKey(account.codeHash);
    return this.codes.get(codeHashHex) ?? this.stored.code(account.codeHash, codeHashHex);
  }

  async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length;
  }

  async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    if (key.length !== 32) throw new Error("Storage key must be 32 bytes long");
    const addressHex = addressKey(address);
    const slotHex = hexOfRecentKey(key);
    const changed = this.storages.get(addressHex)?.get(slotHex);
    if (changed !== undefined) return changed;
    const account = await this.currentAccount(address, addressHex);
    if (account === null) return emptyValue;
    return this.stored.slot(account.storageRoot, key, slotHex);
  }

  async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    if (key.length !== 32) throw new Error("Storage key must be 32 bytes long");
    if (value.length > 32) throw new Error("Storage value cannot be longer than 32 bytes");
    const addressHex = addressKey(address);
    if ((await this.currentAccount(address, addressHex)) === null) throw new Error("putStorage() called on non-existing account");
    let written = this.storages.get(addressHex);
    if (written === undefined) {
      written = new Map();
      this.journal.push({ kind: "storage", addressHex, previous: undefined });
      this.storages.set(addressHex, written);
    }
    const slotHex = hexOfRecentKey(key);
    this.journal.push({ kind: "slot", slots: written, slotHex, previous: written.get(slotHex) });
    written.set(slotHex, withoutLeadingZeroBytes(value));
  }

  async clearStorage(address: Address): Promise<void> {
    const addressHex = addressKey(address);
    const account = (await this.getAccount(address)) ?? new Account();
    account.storageRoot = KECCAK256_RLP;
    this.setAccount(addressHex, account);
    this.dropStorage(addressHex);
  }

  /** Forgets the slots written to the account (its stored ones are out of reach: see getStorage). */
  private dropStorage(addressHex: string): void {
    this.journal.push({ kind: "storage", addressHex, previous: this.storages.get(addressHex) });
    this.storages.set(addressHex, new Map());
  }

  async checkpoint(): Promise<void> {
    this.checkpoints.push(this.journal.length);
  }

  async commit(): Promise<void> {
    this.checkpoints.pop();
    // Outside every checkpoint nothing can be reverted any more.
    if (this.checkpoints.length === 0) this.journal.length = 0;
  }

  async revert(): Promise<void> {
    const mark = this.checkpoints.pop() ?? 0;
    for (let index = this.journal.length - 1; index >= mark; index--) {
      const entry = this.journal[index]!;
      switch (entry.kind) {
        case "account":
          if (entry.previous === undefined) this.accounts.delete(entry.addressHex);
          else this.accounts.set(entry.addressHex, entry.previous);
          break;
        case "slot":
          if (entry.previous === undefined) entry.slots.delete(entry.slotHex);
          else entry.slots.set(entry.slotHex, entry.previous);
          break;
        case "storage":
          if (entry.previous === undefined) this.storages.delete(entry.addressHex);
          else this.storages.set(entry.addressHex, entry.previous);
          break;
      }
    }
    this.journal.length = mark;
  }

  /**
   * The stored state this overlay reads, without waiting (see StoredStateReads): what is read
   * through it is kept for the overlay too, and the other way round. Changes made through the
   * overlay are not in it.
   */
  storedReads(): StoredStateReads {
    const stored = this.stored;
    return {
      root: stored.root,
      account: (addressHex) => stored.accountSync(addressHex),
      slot: (storageRoot, slotHex) => stored.slotSync(storageRoot, slotHex),
      code: (codeHash) => stored.codeSync(codeHash),
    };
  }

  async getStateRoot(): Promise<Uint8Array> {
    if (this.accounts.size === 0 && this.storages.size === 0) return this.stored.root;
    throw new Error("the state root of changes held in memory is not computed");
  }

  /** Moves to the stored state at `root`, dropping every change. */
  async setStateRoot(root: Uint8Array): Promise<void> {
    if (!this.hasStoredRoot(root)) throw new Error(`state root ${bytesToUnprefixedHex(root)} is not stored`);
    this.clearChanges();
    if (!equalsBytes(root, this.stored.root)) this.stored = new StoredState(this.tries, root);
  }

  async hasStateRoot(root: Uint8Array): Promise<boolean> {
    return this.hasStoredRoot(root);
  }

  /** Nothing here is a cache of something written elsewhere: the changes are the state. */
  clearCaches(): void {}

  shallowCopy(): OverlayStateManager {
    return new OverlayStateManager(this.tries, this.stored.root, this.hasStoredRoot);
  }

  private clearChanges(): void {
    this.accounts.clear();
    this.storages.clear();
    this.codes.clear();
    this.journal.length = 0;
    this.checkpoints.length = 0;
    this.originalStorageCache.clear();
  }
}
