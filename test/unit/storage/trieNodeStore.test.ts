// The trie-node store's cache is bounded by memory: nodes beyond it are read back from the store,
// with the same bytes.
import { expect } from "chai";
import { keccak256 } from "../../../src/common/crypto.js";
import { bytesEntryCost } from "../../../src/common/generationalCache.js";
import { bytesToUnprefixedHex } from "../../../src/common/hex.js";
import { createMemoryStore, type StoreOperation } from "../../../src/storage/keyValueStore.js";
import { TrieNodeStore } from "../../../src/storage/trieNodeStore.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

describe("storage/trieNodeStore", () => {
  it("keeps its cache within the given memory and still answers every written node", async () => {
    const next = seededRandom(17);
    const store = createMemoryStore();
    const cacheBytes = 256 * 1024;
    const nodes = new TrieNodeStore(store, cacheBytes);
    const written = new Map<string, Uint8Array>();
    // The cache may go past its budget by one entry: at most a 64-character key and 539 bytes.
    const largestEntry = bytesEntryCost("0".repeat(64), new Uint8Array(539));
    for (let block = 0; block < 40; block++) {
      for (let index = 0; index < 100; index++) {
        // A node's key is its hash: one key, one value.
        const value = randomBytes(next, 40 + (next() % 500));
        const key = keccak256(value);
        written.set(bytesToUnprefixedHex(key), value);
        await nodes.put(bytesToUnprefixedHex(key), value);
      }
      const operations: StoreOperation[] = [];
      const batch = nodes.takeWrites(operations);
      await store.write(operations);
      nodes.writeFinished(batch);
      expect(nodes.cacheCost).to.be.at.most(cacheBytes + largestEntry);
    }
    for (const [key, value] of written) expect(Buffer.compare(nodes.getNode(key)!, value), key).to.equal(0);
    expect(nodes.cacheCost).to.be.at.most(cacheBytes + largestEntry);
  });
});
