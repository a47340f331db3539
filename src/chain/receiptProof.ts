// The receipt-trie nodes that prove one receipt of a block: from the root (whose hash is the
// header's receiptsRoot) down to the receipt's leaf, root first, keyed by RLP(transaction index).
// Blocks store receipts, not their trie, so the trie is rebuilt on demand; the one-pass root of
// indexedTrie.ts has no nodes to hand out. The rebuilt root must be the header's.
import { createMerkleProof, createMPT } from "@ethereumjs/mpt";
import { RLP } from "@ethereumjs/rlp";
import { equalsBytes } from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import { bytesToHex } from "../common/hex.js";
import { encodeReceiptForTrie, type ChainReceipt } from "./receipts.js";

/** The rebuilt receipts trie disagrees with the header: the stored receipts are not the block's. */
export class ReceiptsRootMismatchError extends Error {}

/** Serialized receipt-trie nodes on the path to receipt `index`, root first. */
export async function receiptTrieNodes(receipts: readonly ChainReceipt[], index: number, receiptsRoot: Uint8Array): Promise<Uint8Array[]> {
  if (index < 0 || index >= receipts.length) throw new RangeError(`receipt index ${index} outside 0..${receipts.length - 1}`);
  const trie = await createMPT({ useKeyHashingFunction: keccak256 });
  for (const [position, receipt] of receipts.entries()) await trie.put(RLP.encode(position), encodeReceiptForTrie(receipt));
  if (!equalsBytes(trie.root(), receiptsRoot)) {
    throw new ReceiptsRootMismatchError(`rebuilt receipts root ${bytesToHex(trie.root())} differs from the header's ${bytesToHex(receiptsRoot)}`);
  }
  return createMerkleProof(trie, RLP.encode(index));
}
