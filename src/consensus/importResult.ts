// What importing a block came to (rskj: org/ethereum/core/ImportResult.java), and where the block
// came from. The importer answers these instead of throwing: a block refused is an expected
// outcome of untrusted input, and the caller (a file import, a peer, a merged miner) decides what
// follows from it.
import type { Block } from "../chain/block.js";

export type ImportStatus =
  /** Stored and now the head (it extended the head, or its branch became the heavier one). */
  | "IMPORTED_BEST"
  /** Stored on a side branch: valid, but its chain is not the heaviest. */
  | "IMPORTED_NOT_BEST"
  /** Already stored: nothing done. */
  | "EXIST"
  /** Its parent is not stored: nothing done (a syncing node fetches the parent first). */
  | "NO_PARENT"
  /** It breaks a rule: nothing stored changed. */
  | "INVALID_BLOCK";

/** Where a block came from; the importer's checks are the same for every source but the node's own miner. */
export type BlockSource = "miner" | "file" | "peer" | "mergedMiner";

export type ImportOutcome =
  | { readonly status: "IMPORTED_BEST" | "IMPORTED_NOT_BEST" | "EXIST" | "NO_PARENT"; readonly block: Block }
  | {
      readonly status: "INVALID_BLOCK";
      readonly block: Block;
      /** The rule the block broke, as its module names it (e.g. "parentGasLimit", "stateRoot"). */
      readonly rule: string;
      readonly reason: string;
    };
