// The branch from the parent block's coinbase (always transaction 0, so always the left child) to
// its header's merkle root, in the format a block header stores (RSKIP92): the sibling hashes
// bottom-up, 32 bytes each in internal byte order, concatenated. Builders from a full txid list
// serve the submissions that send a whole block or all its txids.
// The reference stores each sibling the other way round, in display order (Rskip92MerkleProofBuilder
// reverses what pools send and what it takes from a partial merkle tree; Rskip92MerkleProofValidator
// reverses each back before hashing). This node follows the network brief (8.2) and stores them as
// hashed: the same proofs pass, but the field's bytes differ from a reference node's.
import { sha256d } from "./parentChain.js";

const hashSize = 32;
/** RSKIP180: at most 30 levels, far more than any parent block has. */
export const maxMerkleProofSize = 960;

/** The hash of two merkle nodes: SHA-256d over their 64 bytes, both in internal order. */
export function combineMerkleNodes(left: Uint8Array, right: Uint8Array): Uint8Array {
  const both = new Uint8Array(2 * hashSize);
  both.set(left, 0);
  both.set(right, hashSize);
  return sha256d(both);
}

export type MerkleBranchFold =
  | { kind: "root"; root: Uint8Array }
  /** Two nodes at `level` (0 = the coinbase's) that the reference takes for a 64-byte transaction. */
  | { kind: "nodesFormTransaction"; level: number };

/**
 * Folds the coinbase txid up the branch. The caller has checked the length (a multiple of 32).
 * Each step first applies the reference's refusal of nodes that read as a transaction
 * (`isSixtyFourByteTransaction`), before hashing them, as MerkleTreeUtils.combineLeftRight does.
 */
export function foldMerkleBranch(coinbaseTxid: Uint8Array, proof: Uint8Array): MerkleBranchFold {
  let node = coinbaseTxid;
  for (let level = 0; level * hashSize < proof.length; level++) {
    const sibling = proof.subarray(level * hashSize, (level + 1) * hashSize);
    if (isSixtyFourByteTransaction(node, sibling)) return { kind: "nodesFormTransaction", level };
    node = combineMerkleNodes(node, sibling);
  }
  return { kind: "root", root: node };
}

/** Bitcoin's merkle root of txids (internal order): an odd level repeats its last node. */
export function merkleRootOfTxids(txids: readonly Uint8Array[]): Uint8Array {
  if (txids.length === 0) throw new RangeError("a parent block has at least its coinbase");
  let level = [...txids];
  while (level.length > 1) level = nextMerkleLevel(level);
  return level[0]!;
}

/** The branch of transaction 0 (the coinbase) in the stored format: empty for a one-transaction block. */
export function merkleBranchOfCoinbase(txids: readonly Uint8Array[]): Uint8Array {
  if (txids.length === 0) throw new RangeError("a parent block has at least its coinbase");
  const siblings: Uint8Array[] = [];
  let level = [...txids];
  while (level.length > 1) {
    siblings.push(level[1]!);
    level = nextMerkleLevel(level);
  }
  const proof = new Uint8Array(siblings.length * hashSize);
  siblings.forEach((sibling, index) => proof.set(sibling, index * hashSize));
  return proof;
}

function nextMerkleLevel(level: Uint8Array[]): Uint8Array[] {
  if (level.length % 2 === 1) level.push(level[level.length - 1]!);
  const next: Uint8Array[] = [];
  for (let index = 0; index < level.length; index += 2) next.push(combineMerkleNodes(level[index]!, level[index + 1]!));
  return next;
}

const maxSatoshis = 21_000_000n * 100_000_000n;
const coinbaseOutpointIndex = 0xffffffff;

/**
 * The reference's guard against the leaf-node weakness of Bitcoin's merkle tree (a 64-byte
 * transaction hashes like two inner nodes; bitslog.wordpress.com 2018/06/09), exactly as rskj
 * co/rsk/peg/utils/MerkleTreeUtils.checkNotAValid64ByteTransaction decides it. The 64 bytes it
 * reads are left ‖ right, each hash in bitcoinj's Sha256Hash.getBytes order, i.e. DISPLAY order:
 * each 32-byte half reversed from what is hashed. They "parse as a transaction" when all hold:
 *   byte 4 (input count) = 1;
 *   u32le at 37 (the input's outpoint index) ≤ 1,000,000 or = 0xffffffff;
 *   byte 41 (input script length) s_in in 0..4;
 *   byte 46 + s_in (output count) = 1;
 *   i64le at 47 + s_in (output value) in 1 .. 21,000,000 BTC in satoshis;
 *   byte 55 + s_in (output script length) s_out in 0..4, and s_in + s_out = 4
 * (version, outpoint hash, scripts, sequence and lock time are not read). Nothing else is checked.
 */
export function isSixtyFourByteTransaction(left: Uint8Array, right: Uint8Array): boolean {
  const bytes = new Uint8Array(2 * hashSize);
  bytes.set(left, 0);
  bytes.set(right, hashSize);
  bytes.subarray(0, hashSize).reverse();
  bytes.subarray(hashSize).reverse();
  const view = new DataView(bytes.buffer);
  if (bytes[4] !== 1) return false;
  const outpointIndex = view.getUint32(37, true);
  if (outpointIndex > 1_000_000 && outpointIndex !== coinbaseOutpointIndex) return false;
  const inputScriptLength = bytes[41]!;
  if (inputScriptLength > 4) return false;
  if (bytes[46 + inputScriptLength] !== 1) return false;
  const value = view.getBigInt64(47 + inputScriptLength, true);
  if (value < 1n || value > maxSatoshis) return false;
  const outputScriptLength = bytes[55 + inputScriptLength]!;
  return outputScriptLength <= 4 && inputScriptLength + outputScriptLength === 4;
}
