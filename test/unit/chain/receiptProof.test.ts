import { expect } from "chai";
import { verifyMerkleProof } from "@ethereumjs/mpt";
import { RLP } from "@ethereumjs/rlp";
import { bytesToHex } from "@ethereumjs/util";
import { keccak256 } from "../../../src/common/crypto.js";
import { indexedTrieRoot } from "../../../src/chain/indexedTrie.js";
import { ReceiptsRootMismatchError, receiptTrieNodes } from "../../../src/chain/receiptProof.js";
import { encodeReceiptForTrie, type ChainReceipt } from "../../../src/chain/receipts.js";

function receipt(index: number): ChainReceipt {
  return { success: index % 3 !== 0, gasUsed: 21_000n, cumulativeGasUsed: 21_000n * BigInt(index + 1), logsBloom: new Uint8Array(256), logs: [], contractAddress: undefined };
}

describe("chain/receiptProof", () => {
  it("gives the path to each receipt, root first, that proves it against the receipts root", async () => {
    for (const count of [1, 2, 17, 130]) {
      const receipts = Array.from({ length: count }, (_, index) => receipt(index));
      const root = indexedTrieRoot(receipts.map(encodeReceiptForTrie));
      for (const index of new Set([0, 1, count - 1].filter((value) => value < count))) {
        const nodes = await receiptTrieNodes(receipts, index, root);
        expect(bytesToHex(keccak256(nodes[0]!))).to.equal(bytesToHex(root));
        const proven = await verifyMerkleProof(RLP.encode(index), nodes, { root });
        expect(bytesToHex(proven!), `${index} of ${count}`).to.equal(bytesToHex(encodeReceiptForTrie(receipts[index]!)));
      }
    }
  });

  it("refuses receipts that do not rebuild the header's root, and an index outside the block", async () => {
    const receipts = [receipt(0), receipt(1)];
    let error: unknown;
    await receiptTrieNodes(receipts, 0, new Uint8Array(32)).catch((caught: unknown) => (error = caught));
    expect(error).to.be.instanceOf(ReceiptsRootMismatchError);
    error = undefined;
    await receiptTrieNodes(receipts, 2, indexedTrieRoot(receipts.map(encodeReceiptForTrie))).catch((caught: unknown) => (error = caught));
    expect(error).to.be.instanceOf(RangeError);
  });
});
