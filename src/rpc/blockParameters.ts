// Block parameters (QUANTITY | TAG | MAP) -> blocks of the chain, with the reference's errors.
import type { BlockParameter, BlockNumberOrTag, EthGetBlockReceiptsBlockParam } from "../../generated/types.js";
import type { Block } from "../chain/block.js";
import type { Chain } from "../chain/chain.js";
import { hexToBytes } from "../common/hex.js";
import { blockHashNotFoundError, blockNotCanonicalError, blockNotFoundError } from "./errors.js";

/** A block selected by number or tag; "pending" reads as the head (its state is the head's plus the pool's). */
export async function findBlockByNumberOrTag(chain: Chain, parameter: BlockNumberOrTag): Promise<Block | undefined> {
  switch (parameter) {
    case "latest":
    case "pending":
      return chain.head;
    case "earliest":
      return chain.genesis;
    default:
      return chain.getBlockByNumber(BigInt(parameter));
  }
}

/** The block whose state a query reads; a block that does not exist is an error (-32600). */
export async function resolveStateBlock(chain: Chain, parameter: BlockParameter | undefined): Promise<Block> {
  if (parameter === undefined) return chain.head;
  if (typeof parameter === "string") {
    const block = await findBlockByNumberOrTag(chain, parameter);
    if (block === undefined) throw blockNotFoundError(parameter);
    return block;
  }
  if ("blockHash" in parameter) {
    const block = await chain.getBlockByHash(hexToBytes(parameter.blockHash));
    if (block === undefined) throw blockHashNotFoundError(parameter.blockHash);
    const requireCanonical = parameter.requireCanonical === true || parameter.requireCanonical === "true";
    if (requireCanonical && !(await chain.isCanonical(block))) throw blockNotCanonicalError(parameter.blockHash);
    return block;
  }
  const block = await chain.getBlockByNumber(BigInt(parameter.blockNumber));
  if (block === undefined) throw blockNotFoundError(parameter.blockNumber);
  return block;
}

/** 0x and 64 hex digits: a block hash, where a number has at most 16 digits. */
const blockHashTextLength = 66;

/**
 * eth_getBlockReceipts' block: a number, a tag, a hash or a block selector; undefined for a block
 * that does not exist (the method answers null), the selector's canonical check as for state reads.
 */
export async function findBlockForReceipts(chain: Chain, parameter: EthGetBlockReceiptsBlockParam): Promise<Block | undefined> {
  if (typeof parameter === "string") {
    if (parameter.length === blockHashTextLength) return chain.getBlockByHash(hexToBytes(parameter));
    return findBlockByNumberOrTag(chain, parameter as BlockNumberOrTag);
  }
  if ("blockNumber" in parameter) return chain.getBlockByNumber(BigInt(parameter.blockNumber));
  const block = await chain.getBlockByHash(hexToBytes(parameter.blockHash));
  const requireCanonical = parameter.requireCanonical === true || parameter.requireCanonical === "true";
  if (block !== undefined && requireCanonical && !(await chain.isCanonical(block))) throw blockNotCanonicalError(parameter.blockHash);
  return block;
}
