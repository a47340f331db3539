// World state: Merkle-Patricia tries (accounts, storage, code) over the trie-node store. Any root a
// block ever committed to stays readable, so historical state is a state manager at that root.
import type { Common } from "@ethereumjs/common";
import { Caches } from "@ethereumjs/statemanager";
import { bytesToUnprefixedHex, hexOfStableBytes } from "../common/hex.js";
import { type Account, createAccountFromRLP, equalsBytes, KECCAK256_RLP, ValueEncoding } from "@ethereumjs/util";
import type { KeyValueStore, StoreOperation } from "../storage/keyValueStore.js";
import { TrieNodeStore, type TrieNodeBatch } from "../storage/trieNodeStore.js";
import { proveAccount, type AccountProof } from "./stateProof.js";
import { ChainStateManager } from "./chainStateManager.js";
import { OverlayStateManager } from "./overlayStateManager.js";
import { StateTrie } from "./stateTrie.js";
import { countTrieLeaves } from "./trieLeafCount.js";

/** Read views kept, most recent roots first (the head and the few blocks before it). */
const readViewCount = 8;

export class StateDatabase {
  private readonly nodes: TrieNodeStore;
  /** Read-only state managers by root (hex), with their own account/storage/code caches. */
  private readonly readViews = new Map<string, ChainStateManager>();
  /** Reads single accounts at any root (see readAccount). */
  private readonly accountReader: StateTrie;

  /** `nodeCacheBytes`: memory of the trie-node cache (default: the store's, see TrieNodeStore). */
  constructor(
    store: KeyValueStore,
    private readonly common: Common,
    nodeCacheBytes?: number,
  ) {
    this.nodes = new TrieNodeStore(store, nodeCacheBytes);
    this.accountReader = this.trieAt();
  }

  /**
   * The account at `address` in the state at `root` (undefined when it does not exist), without a
   * state manager: the transaction pool reads senders at every new head, and a state manager per
   * head would be made for one or two reads.
   */
  async readAccount(root: Uint8Array, address: Uint8Array): Promise<Account | undefined> {
    const encoded = await this.accountReader.getAt(root, address);
    return encoded === null ? undefined : createAccountFromRLP(encoded);
  }

  private trieAt(root?: Uint8Array): StateTrie {
    return new StateTrie({ db: this.nodes, root, common: this.common, useKeyHashing: true, valueEncoding: ValueEncoding.Bytes, useNodePruning: false });
  }

  /**
   * A state manager positioned at `root` to execute on: it caches accounts, storage and code
   * between blocks, and its changes stay in memory until `takeWrites`.
   */
  at(root: Uint8Array): ChainStateManager {
    return new ChainStateManager({ trie: this.trieAt(root), common: this.common, caches: new Caches() });
  }

  /**
   * State at `root` for executions whose changes are thrown away (calls, estimates): changes stay
   * in memory and are never written, and what it reads of the root is kept for the next call.
   */
  overlayAt(root: Uint8Array): OverlayStateManager {
    return new OverlayStateManager(this.accountReader, root, (candidate) => this.hasRoot(candidate));
  }

  /**
   * A shared, read-only view of the state at `root` (undefined when that root is not stored). The
   * state of a root never changes, so the view's caches stay right; never execute on it.
   */
  reader(root: Uint8Array): ChainStateManager | undefined {
    const key = bytesToUnprefixedHex(root);
    const known = this.readViews.get(key);
    if (known !== undefined) return known;
    if (!this.hasRoot(root)) return undefined;
    const view = this.at(root);
    this.readViews.set(key, view);
    if (this.readViews.size > readViewCount) this.readViews.delete(this.readViews.keys().next().value!);
    return view;
  }

  /** EIP-1186 proofs of `address` and its storage `slots` at `root` (undefined when that root is not stored). */
  async prove(root: Uint8Array, address: Uint8Array, slots: readonly Uint8Array[]): Promise<AccountProof | undefined> {
    if (!this.hasRoot(root)) return undefined;
    return proveAccount((trieRoot) => this.trieAt(trieRoot), root, address, slots);
  }

  /**
   * How many storage slots the account at `address` holds in the state at `root` (0 for no
   * account); `pause` is awaited every few hundred trie nodes (see countTrieLeaves).
   */
  async countStorageSlots(root: Uint8Array, address: Uint8Array, pause: () => Promise<void> | void): Promise<number> {
    const account = await this.readAccount(root, address);
    return account === undefined ? 0 : countTrieLeaves(this.nodes, account.storageRoot, pause);
  }

  /** Whether the trie root node of `root` is stored (the empty trie needs none). */
  hasRoot(root: Uint8Array): boolean {
    if (equalsBytes(root, KECCAK256_RLP)) return true;
    // Asked for each call and read with the same header's root: its hex made once (roots are never changed in place).
    const rootHex = hexOfStableBytes(root);
    return this.readViews.has(rootHex) || this.nodes.getNode(rootHex) !== undefined;
  }

  /** Adds the trie nodes written since the last call to a block's batch; see TrieNodeStore.takeWrites. */
  takeWrites(operations: StoreOperation[]): TrieNodeBatch {
    return this.nodes.takeWrites(operations);
  }

  writeFinished(batch: TrieNodeBatch): void {
    this.nodes.writeFinished(batch);
  }

  writeAbandoned(batch: TrieNodeBatch): void {
    this.nodes.writeAbandoned(batch);
  }
}
