// What the sync state machines ask of a peer and of the local chain. The peer-to-peer layer fills
// SyncPeer with its request/response protocols (network brief 4: block-hash/1, skeleton/1,
// headers/1, bodies/1); tests fill it with scripted peers. Every answer is untrusted: the state
// machines check it before anything is imported, and say which peer sent what was wrong.
import type { Block } from "../chain/block.js";
import type { BlockHeader } from "../chain/header.js";
import type { SignedTransaction } from "../chain/transactions.js";
import type { ImportOutcome } from "../consensus/importResult.js";

export interface PeerBest {
  readonly number: bigint;
  readonly hash: Uint8Array;
  readonly totalDifficulty: bigint;
}

/**
 * A block's body as a peer sends it, decoded and shape-checked, its transactions' senders not yet
 * recovered: the long sync recovers them (all of a batch at once, perhaps on another thread) once
 * the body matches its header, and outside the time the peer has to answer.
 */
export interface BlockBody {
  readonly transactions: readonly SignedTransaction[];
  readonly uncles: readonly BlockHeader[];
}

/** One entry of a skeleton: the peer's canonical block at `number`. */
export interface SkeletonPoint {
  readonly number: bigint;
  readonly hash: Uint8Array;
}

export interface SyncPeer {
  readonly id: string;
  /** The best block its last status gave. */
  readonly best: PeerBest;
  /** Its canonical hash at `number`, or undefined when it has none. */
  blockHashAt(number: bigint): Promise<Uint8Array | undefined>;
  /** Its canonical blocks every `chunkSize` from `startNumber`, then its best (RSKj's skeleton). */
  skeleton(startNumber: bigint): Promise<readonly SkeletonPoint[]>;
  /** Up to `count` headers walking parent links from `startHash`, newest first. */
  headers(startHash: Uint8Array, count: number): Promise<readonly BlockHeader[]>;
  /** The bodies of these blocks, in order, senders not recovered; undefined for one it does not have. */
  bodies(hashes: readonly Uint8Array[]): Promise<readonly (BlockBody | undefined)[]>;
}

/** Why a peer's answer was refused: the reputation work scores these (network brief 7.2). */
export type PeerFault = "invalidHeader" | "invalidBody" | "invalidBlock" | "badAnswer" | "timeout";

/** The local side: what is stored, and the one import path. */
export interface SyncChain {
  readonly head: Block;
  readonly headTotalDifficulty: bigint;
  /** Whether a block with this hash is stored (canonical or not). */
  hasBlock(hash: Uint8Array): boolean;
  importBlock(block: Block): Promise<ImportOutcome>;
}
