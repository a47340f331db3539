// The parent-chain proof of work every block carries (reference: co/rsk/validators/ProofOfWorkRule,
// with RSKIP92, RSKIP98 and RSKIP180 active; facts 1.5, network brief 8.3). The three merged-mining
// fields come from outside (a pool, a peer): every malformed one is a refusal naming the rule it
// breaks, never an exception. The rules run in the reference's order, so both name the same one.
import { coinbaseTxidFromCompressed, decodeCompressedCoinbase, lastIndexOfBytes, mergedMiningTag } from "./compressedCoinbase.js";
import { difficultyToParentTarget, hashToDisplayHex, isHashWithinTarget, parentHeaderSize, sha256d } from "./parentChain.js";
import { foldMerkleBranch, maxMerkleProofSize } from "./parentMerkleBranch.js";

export interface MergedMiningProof {
  /** The block's hashForMergedMining (32 bytes), which the coinbase must commit to. */
  hashForMergedMining: Uint8Array;
  /** The block's difficulty: the parent header's hash must be at most 2^256 / max(difficulty, 3). */
  difficulty: bigint;
  /** mergedMiningHeader: the 80-byte parent-chain header. */
  parentHeader: Uint8Array;
  /** mergedMiningMerkleProof: the coinbase's merkle branch (parentMerkleBranch.ts). */
  merkleProof: Uint8Array;
  /** mergedMiningCoinbaseTransaction: the compressed coinbase (compressedCoinbase.ts). */
  compressedCoinbase: Uint8Array;
}

/** Checks many proofs at once, perhaps on another thread (node/batchChecks.ts). */
export interface MergedMiningProofBatchCheck {
  /** checkMergedMiningProof of each proof, in order. */
  checkAll(proofs: readonly MergedMiningProof[]): Promise<MergedMiningProofCheck[]>;
}

/** Which rule a proof broke: stable names for logs and tests; the reason carries the figures. */
export type MergedMiningRule =
  | "merkleProofTooLong"
  | "merkleProofNotWholeHashes"
  | "coinbaseStateMissing"
  | "parentHeaderSize"
  | "parentHashAboveTarget"
  | "tagMissing"
  | "tagNotInFirstBlock"
  | "tagNotLast"
  | "tooManyBytesAfterHash"
  | "coinbaseTooShort"
  | "merkleNodesFormTransaction"
  | "merkleRootMismatch";

export type MergedMiningProofCheck =
  | { ok: true; parentHeaderHash: Uint8Array; coinbaseTxid: Uint8Array }
  | MergedMiningRefusal;

export interface MergedMiningRefusal {
  ok: false;
  rule: MergedMiningRule;
  /** One line for "Invalid block supplied by miner: ..." and the INVALID_BLOCK log line. */
  reason: string;
}

const hashSize = 32;
/** The reference's MAX_BYTES_AFTER_MERGED_MINING_HASH. */
export const maxBytesAfterMergedMiningHash = 128;

function refuse(rule: MergedMiningRule, reason: string): MergedMiningRefusal {
  return { ok: false, rule, reason };
}

export function checkMergedMiningProof(proof: MergedMiningProof): MergedMiningProofCheck {
  const { hashForMergedMining, difficulty, parentHeader, merkleProof, compressedCoinbase } = proof;
  if (merkleProof.length > maxMerkleProofSize) {
    return refuse("merkleProofTooLong", `merkle proof of ${merkleProof.length} bytes, more than ${maxMerkleProofSize}`);
  }
  if (merkleProof.length % hashSize !== 0) {
    return refuse("merkleProofNotWholeHashes", `merkle proof of ${merkleProof.length} bytes, not a multiple of 32`);
  }
  const coinbase = decodeCompressedCoinbase(compressedCoinbase);
  if (coinbase === undefined) {
    return refuse("coinbaseStateMissing", `compressed coinbase of ${compressedCoinbase.length} bytes, shorter than its 40-byte SHA-256 state`);
  }
  if (parentHeader.length !== parentHeaderSize) {
    return refuse("parentHeaderSize", `parent-chain header of ${parentHeader.length} bytes, not 80`);
  }
  const parentHeaderHash = sha256d(parentHeader);
  const target = difficultyToParentTarget(difficulty);
  if (!isHashWithinTarget(parentHeaderHash, target)) {
    return refuse("parentHashAboveTarget", `parent-chain header hash ${hashToDisplayHex(parentHeaderHash)} above the target ${target.toString(16).padStart(64, "0")}`);
  }

  const tail = coinbase.tail;
  const commitment = new Uint8Array(mergedMiningTag.length + hashForMergedMining.length);
  commitment.set(mergedMiningTag);
  commitment.set(hashForMergedMining, mergedMiningTag.length);
  const commitmentPosition = lastIndexOfBytes(tail, commitment);
  if (commitmentPosition < 0) {
    return refuse("tagMissing", "coinbase does not contain RSKBLOCK: followed by the block's hash for merged mining");
  }
  // With the tag further in, the same coinbase could also be sent with one more 64-byte block in the
  // state: two encodings, two block hashes, one proof (the reference's malleability note).
  if (commitmentPosition >= 64) {
    return refuse("tagNotInFirstBlock", `RSKBLOCK: tag at byte ${commitmentPosition} of the coinbase tail, not within its first 64`);
  }
  const lastTagPosition = lastIndexOfBytes(tail, mergedMiningTag);
  if (lastTagPosition !== commitmentPosition) {
    return refuse("tagNotLast", `another RSKBLOCK: tag at byte ${lastTagPosition} of the coinbase tail, after the block's at ${commitmentPosition}`);
  }
  const bytesAfterHash = tail.length - commitmentPosition - mergedMiningTag.length - hashSize;
  if (bytesAfterHash > maxBytesAfterMergedMiningHash) {
    return refuse("tooManyBytesAfterHash", `${bytesAfterHash} coinbase bytes after the hash for merged mining, more than ${maxBytesAfterMergedMiningHash}`);
  }
  // The reference adds the tail length to the state's count as Java longs: a count of 2^63 or more
  // reads as negative, and a sum past 2^63 - 1 wraps to negative; both are refused here.
  const coinbaseLength = BigInt.asIntN(64, coinbase.byteCountBefore + BigInt(tail.length));
  if (coinbaseLength <= 64n) {
    return refuse("coinbaseTooShort", `coinbase of ${coinbaseLength} bytes, not more than 64`);
  }

  const coinbaseTxid = coinbaseTxidFromCompressed(coinbase);
  const fold = foldMerkleBranch(coinbaseTxid, merkleProof);
  if (fold.kind === "nodesFormTransaction") {
    return refuse("merkleNodesFormTransaction", `merkle nodes at level ${fold.level} read as a 64-byte transaction`);
  }
  const merkleRoot = parentHeader.subarray(36, 68);
  if (!equalBytes(fold.root, merkleRoot)) {
    return refuse("merkleRootMismatch", `coinbase ${hashToDisplayHex(coinbaseTxid)} and merkle proof lead to root ${hashToDisplayHex(fold.root)}, not the header's ${hashToDisplayHex(merkleRoot)}`);
  }
  return { ok: true, parentHeaderHash, coinbaseTxid };
}

function equalBytes(left: Uint8Array, right: Uint8Array): boolean {
  return left.length === right.length && left.every((byte, index) => byte === right[index]);
}
