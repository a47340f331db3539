// Counts the keys of a trie (the slots of a contract's storage) by walking its nodes, reading each
// once and decoding only its RLP: the package's dump builds a hex key and value per slot on the
// way. The walk stops to await `pause` every few hundred nodes, so a caller can enforce a deadline
// and let the event loop turn: a contract with 100,000 slots has some 130,000 nodes.
import { equalsBytes, KECCAK256_RLP } from "@ethereumjs/util";
import { decodeRlp, type RlpDecoded } from "../common/rlp.js";

/** Reads a trie node by its hash. */
export interface TrieNodeSource {
  getNode(hash: Uint8Array): Uint8Array | undefined;
}

/** A trie node is missing from the store: the trie cannot be counted. */
export class TrieNodeMissingError extends Error {}

/** Nodes walked between two awaits of `pause`. */
const nodesPerPause = 512;

/** The number of keys under `root`; `pause` is awaited every few hundred nodes (it may throw to stop). */
export async function countTrieLeaves(source: TrieNodeSource, root: Uint8Array, pause: () => Promise<void> | void): Promise<number> {
  if (equalsBytes(root, KECCAK256_RLP)) return 0;
  let leaves = 0;
  let walked = 0;
  // References still to walk: a 32-byte hash, or a node embedded in its parent (decoded already).
  const toWalk: RlpDecoded[] = [root];
  while (toWalk.length > 0) {
    let node = toWalk.pop()!;
    if (node instanceof Uint8Array) {
      if (node.length === 0) continue;
      const encoded = source.getNode(node);
      if (encoded === undefined) throw new TrieNodeMissingError(`trie node ${Buffer.from(node).toString("hex")} is not stored`);
      node = decodeRlp(encoded) as RlpDecoded;
      if (++walked % nodesPerPause === 0) await pause();
    }
    if (!Array.isArray(node)) continue;
    if (node.length === 17) {
      // A branch: sixteen children and a value (a key that ends here).
      for (let child = 0; child < 16; child++) {
        const reference = node[child]!;
        if (Array.isArray(reference) || reference.length > 0) toWalk.push(reference);
      }
      const value = node[16]!;
      if (value instanceof Uint8Array && value.length > 0) leaves++;
    } else if (node.length === 2) {
      // A leaf or an extension: the first nibble of the compact path says which (2 and 3: leaf).
      const path = node[0] as Uint8Array;
      if (path[0]! >> 4 >= 2) leaves++;
      else toWalk.push(node[1]!);
    }
  }
  return leaves;
}
