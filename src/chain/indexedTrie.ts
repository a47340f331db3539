// Root of a trie keyed by RLP(index), as a block's transactions and receipts tries are, computed
// in one pass over the values instead of through a general trie: the shape follows from the keys,
// so each node is encoded and hashed exactly once. Same result as @ethereumjs/mpt (a test checks).
import { RLP, type Input } from "@ethereumjs/rlp";
import { KECCAK256_RLP } from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import { bytesToNibbles } from "../common/hex.js";

interface Entry {
  readonly nibbles: number[];
  readonly value: Uint8Array;
}

const emptyValue = new Uint8Array(0);

/** Hex-prefix encoding of a path (yellow paper appendix C): a flag nibble for leaf/odd, then the nibbles. */
function hexPrefix(nibbles: readonly number[], leaf: boolean): Uint8Array {
  const odd = nibbles.length % 2;
  const encoded = new Uint8Array(((nibbles.length - odd) >> 1) + 1);
  encoded[0] = ((leaf ? 2 : 0) + odd) << 4;
  let next = 0;
  if (odd === 1) encoded[0] |= nibbles[next++]!;
  for (let index = 1; next < nibbles.length; index++, next += 2) encoded[index] = (nibbles[next]! << 4) | nibbles[next + 1]!;
  return encoded;
}

/** How a parent refers to a node: the node itself when its encoding is under 32 bytes, else its hash. */
function reference(node: Input[]): Input {
  const encoded = RLP.encode(node);
  return encoded.length < 32 ? node : keccak256(encoded);
}

/** The node holding `entries`, whose keys agree on their first `depth` nibbles. */
function nodeFor(entries: readonly Entry[], depth: number): Input[] {
  if (entries.length === 1) return [hexPrefix(entries[0]!.nibbles.slice(depth), true), entries[0]!.value];
  const first = entries[0]!.nibbles;
  let shared = 0;
  while (depth + shared < first.length && entries.every((entry) => entry.nibbles[depth + shared] === first[depth + shared])) shared++;
  if (shared > 0) return [hexPrefix(first.slice(depth, depth + shared), false), reference(nodeFor(entries, depth + shared))];
  const children: Entry[][] = Array.from({ length: 16 }, () => []);
  let value: Uint8Array = emptyValue;
  for (const entry of entries) {
    if (entry.nibbles.length === depth) value = entry.value;
    else children[entry.nibbles[depth]!]!.push(entry);
  }
  return [...children.map((group) => (group.length === 0 ? emptyValue : reference(nodeFor(group, depth + 1)))), value];
}

export function indexedTrieRoot(values: readonly Uint8Array[]): Uint8Array {
  if (values.length === 0) return KECCAK256_RLP;
  const entries = values.map((value, index) => ({ nibbles: bytesToNibbles(RLP.encode(index)), value }));
  return keccak256(RLP.encode(nodeFor(entries, 0)));
}
