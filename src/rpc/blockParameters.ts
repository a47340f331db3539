// Block parameters as JSON-RPC gives them (QUANTITY | TAG | hash | EIP-1898 map) -> the chain's
// block selectors (chain/blockSelection.ts), and the chain's "no such block" -> the reference's errors.
import type { BlockParameter, BlockNumberOrTag, EthGetBlockReceiptsBlockParam } from "../../generated/types.js";
import type { Block } from "../chain/block.js";
import { selectBlock, type BlockSelector, type BlockTag } from "../chain/blockSelection.js";
import type { Chain } from "../chain/chain.js";
import { hexToBytes } from "../common/hex.js";
import { blockHashNotFoundError, blockNotCanonicalError, blockNotFoundError } from "./errors.js";

function selectorOf(parameter: BlockNumberOrTag): BlockSelector {
  return parameter === "latest" || parameter === "earliest" || parameter === "pending" ? { tag: parameter as BlockTag } : { number: BigInt(parameter) };
}

const requiresCanonical = (flag: boolean | string | undefined) => flag === true || flag === "true";

/** A block selected by number or tag; undefined when there is none ("pending" reads as the head). */
export async function findBlockByNumberOrTag(chain: Chain, parameter: BlockNumberOrTag): Promise<Block | undefined> {
  const selection = await selectBlock(chain, selectorOf(parameter));
  return selection.found ? selection.block : undefined;
}

/** The block whose state a query reads; a block that does not exist is an error (-32600). */
export async function resolveStateBlock(chain: Chain, parameter: BlockParameter | undefined): Promise<Block> {
  if (parameter === undefined) return chain.head;
  const [selector, named] =
    typeof parameter === "string"
      ? [selectorOf(parameter), parameter]
      : "blockHash" in parameter
        ? [{ hash: hexToBytes(parameter.blockHash), requireCanonical: requiresCanonical(parameter.requireCanonical) }, parameter.blockHash]
        : [{ number: BigInt(parameter.blockNumber) }, parameter.blockNumber];
  const selection = await selectBlock(chain, selector);
  if (selection.found) return selection.block;
  if (selection.because === "hashNotFound") throw blockHashNotFoundError(named);
  if (selection.because === "notCanonical") throw blockNotCanonicalError(named);
  throw blockNotFoundError(named);
}

/** 0x and 64 hex digits: a block hash, where a number has at most 16 digits. */
const blockHashTextLength = 66;

/**
 * eth_getBlockReceipts' block: a number, a tag, a hash or a block selector; undefined for a block
 * that does not exist (the method answers null), the selector's canonical check as for state reads.
 */
export async function findBlockForReceipts(chain: Chain, parameter: EthGetBlockReceiptsBlockParam): Promise<Block | undefined> {
  let selector: BlockSelector;
  if (typeof parameter === "string") {
    selector = parameter.length === blockHashTextLength ? { hash: hexToBytes(parameter), requireCanonical: false } : selectorOf(parameter as BlockNumberOrTag);
  } else if ("blockNumber" in parameter) {
    selector = { number: BigInt(parameter.blockNumber) };
  } else {
    selector = { hash: hexToBytes(parameter.blockHash), requireCanonical: requiresCanonical(parameter.requireCanonical) };
  }
  const selection = await selectBlock(chain, selector);
  if (selection.found) return selection.block;
  // Only a selector by hash that requires the canonical chain is refused so; the rest answer null.
  if (selection.because === "notCanonical") throw blockNotCanonicalError((parameter as { blockHash: string }).blockHash);
  return undefined;
}
