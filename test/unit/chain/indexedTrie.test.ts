import { expect } from "chai";
import { MerklePatriciaTrie } from "@ethereumjs/mpt";
import { RLP } from "@ethereumjs/rlp";
import { bytesToHex } from "@ethereumjs/util";
import { indexedTrieRoot } from "../../../src/chain/indexedTrie.js";

describe("chain/indexedTrie", () => {
  it("gives @ethereumjs/mpt's root for transaction/receipt tries of any size, with inline and hashed nodes", async () => {
    for (const count of [0, 1, 2, 3, 15, 16, 17, 127, 128, 129, 300]) {
      // Short values keep some nodes under 32 bytes (inlined in their parent), long ones force hashes.
      const values = Array.from({ length: count }, (_, index) => new Uint8Array(index % 4 === 0 ? 40 : 1 + (index % 3)).fill((index * 37) & 0xff));
      const trie = new MerklePatriciaTrie();
      for (const [index, value] of values.entries()) await trie.put(RLP.encode(index), value);
      expect(bytesToHex(indexedTrieRoot(values)), `${count} values`).to.equal(bytesToHex(trie.root()));
    }
  });
});
