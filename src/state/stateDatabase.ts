// World state: Merkle-Patricia tries (accounts, storage, code) over the trie-node store. Any root a
// block ever committed to stays readable, so historical state is a state manager at that root.
import type { Common } from "@ethereumjs/common";
import { MerklePatriciaTrie } from "@ethereumjs/mpt";
import { MerkleStateManager } from "@ethereumjs/statemanager";
import { ValueEncoding } from "@ethereumjs/util";
import type { KeyValueStore, StoreOperation } from "../storage/keyValueStore.js";
import { TrieNodeStore } from "../storage/trieNodeStore.js";

export class StateDatabase {
  private readonly nodes: TrieNodeStore;

  constructor(
    store: KeyValueStore,
    private readonly common: Common,
  ) {
    this.nodes = new TrieNodeStore(store);
  }

  /** A state manager positioned at `root`: read it, or execute on it (changes stay in memory until `takeWrites`). */
  at(root: Uint8Array): MerkleStateManager {
    const trie = new MerklePatriciaTrie({ db: this.nodes, root, useKeyHashing: true, valueEncoding: ValueEncoding.Bytes, useNodePruning: false });
    return new MerkleStateManager({ trie, common: this.common });
  }

  /** Whether the trie root node of `root` is stored. */
  async hasRoot(root: Uint8Array): Promise<boolean> {
    const trie = new MerklePatriciaTrie({ db: this.nodes, useKeyHashing: true, valueEncoding: ValueEncoding.Bytes, useNodePruning: false });
    return trie.checkRoot(root);
  }

  /** Adds the trie nodes written since the last call to a block's batch. */
  takeWrites(operations: StoreOperation[]): void {
    this.nodes.takeWrites(operations);
  }

  writeFinished(): void {
    this.nodes.writeFinished();
  }
}
