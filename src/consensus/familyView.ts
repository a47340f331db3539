// What the uncle rules read of the chain around a new block: its parent's line back a few
// generations, with the uncles each of those blocks included, and for choosing uncles the stored
// blocks at a height on every branch. The importer and the miner read the store (asynchronously)
// and hand over this view, so the rules themselves stay pure and synchronous.
import type { BlockHeader } from "../chain/header.js";

/** A stored block as the uncle rules see it: its header and the uncles it included (a Block fits). */
export interface FamilyMember {
  readonly header: BlockHeader;
  readonly uncles: readonly BlockHeader[];
}

export interface FamilyView {
  /**
   * The new block's parent, then the parent's parent and so on, down to number
   * (block number − uncle generation limit), or to genesis when the chain is shorter.
   */
  readonly ancestors: readonly FamilyMember[];
}

/** The view the miner chooses uncles from: also every stored header at a height, on any branch. */
export interface StoredFamilyView extends FamilyView {
  headersAt(number: bigint): readonly BlockHeader[];
}

/** The lowest block number among the ancestors whose family a block at `blockNumber` may draw on. */
export function oldestFamilyNumber(blockNumber: bigint, generationLimit: number): bigint {
  const oldest = blockNumber - BigInt(generationLimit);
  return oldest > 0n ? oldest : 0n;
}

/**
 * Reads the ancestors of a block at `blockNumber` on `parentHash`, newest first, as far back as the
 * uncle rules look (rskj: co/rsk/core/bc/FamilyUtils.java getAncestors); stops early at a block
 * the store does not have.
 */
export async function collectAncestors(
  blockNumber: bigint,
  parentHash: Uint8Array,
  generationLimit: number,
  readBlock: (hash: Uint8Array) => Promise<FamilyMember | undefined>,
): Promise<FamilyMember[]> {
  const oldest = oldestFamilyNumber(blockNumber, generationLimit);
  const ancestors: FamilyMember[] = [];
  let next = await readBlock(parentHash);
  while (next !== undefined && next.header.number >= oldest) {
    ancestors.push(next);
    // Genesis has a zero parent hash: no block to read below it.
    if (next.header.number === 0n) break;
    next = await readBlock(next.header.fields.parentHash);
  }
  return ancestors;
}
