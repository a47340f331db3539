// Which block a request means: a tag ("latest", "earliest", "pending"), a number, or a hash that
// may have to be on the canonical chain (EIP-1898). The chain answers the block, or says why there
// is none; rpc/ turns those answers into the reference's errors.
import type { Block } from "./block.js";
import type { Chain } from "./chain.js";

export type BlockTag = "latest" | "earliest" | "pending";

export type BlockSelector =
  | { readonly tag: BlockTag }
  | { readonly number: bigint }
  | { readonly hash: Uint8Array; readonly requireCanonical: boolean };

/** Why no block answers a selector. */
export type BlockSelectionRefusal = "numberNotFound" | "hashNotFound" | "notCanonical";

export type BlockSelection = { readonly found: true; readonly block: Block } | { readonly found: false; readonly because: BlockSelectionRefusal };

/**
 * The block a selector names on `chain`. "pending" reads as the head: the pending block's state
 * is the head's plus the pool's, which the pending state (mining/) serves.
 */
export async function selectBlock(chain: Chain, selector: BlockSelector): Promise<BlockSelection> {
  if ("tag" in selector) return { found: true, block: selector.tag === "earliest" ? chain.genesis : chain.head };
  if ("number" in selector) {
    const block = await chain.getBlockByNumber(selector.number);
    return block === undefined ? { found: false, because: "numberNotFound" } : { found: true, block };
  }
  const block = await chain.getBlockByHash(selector.hash);
  if (block === undefined) return { found: false, because: "hashNotFound" };
  if (selector.requireCanonical && !(await chain.isCanonical(block))) return { found: false, because: "notCanonical" };
  return { found: true, block };
}
