// The engine's state manager with one fix. @ethereumjs/statemanager 10.1.3 means to keep storage
// writes in its cache until the checkpoint is committed, but writes
// `cache.put(...) ?? writeToTrie(...)`, and put returns undefined: every SSTORE also updated the
// storage trie at once (hashing and encoding its nodes), a fifth of the CPU of a storage-heavy
// call. Here a write goes to the cache only; flush() writes it to the trie on commit, as intended.
import { MerkleStateManager } from "@ethereumjs/statemanager";
import { RLP } from "@ethereumjs/rlp";
import { type Address, unpadBytes } from "@ethereumjs/util";

export class ChainStateManager extends MerkleStateManager {
  override async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    const storageCache = this._caches?.storage;
    if (storageCache === undefined) return super.putStorage(address, key, value);
    if (key.length !== 32) throw new Error("Storage key must be 32 bytes long");
    if (value.length > 32) throw new Error("Storage value cannot be longer than 32 bytes");
    if ((await this.getAccount(address)) === undefined) throw new Error("putStorage() called on non-existing account");
    storageCache.put(address, key, RLP.encode(unpadBytes(value)));
  }
}
