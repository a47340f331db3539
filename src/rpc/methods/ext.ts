// ext_: raw chain data as the reference node's extension serves it: RLP headers and receipts, and
// the receipt-trie nodes that prove a receipt against its block's receiptsRoot.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { Block } from "../../chain/block.js";
import type { Chain } from "../../chain/chain.js";
import { receiptTrieNodes } from "../../chain/receiptProof.js";
import { encodeReceiptForTrie } from "../../chain/receipts.js";
import { bytesToHex, hexToBytes, toQuantity } from "../../common/hex.js";
import { equalsBytes } from "@ethereumjs/util";
import { findBlockByNumberOrTag } from "../blockParameters.js";
import type { RpcCallContext } from "../dispatch.js";
import { protocolVersion } from "./eth.js";

export interface ExtDependencies {
  chain: Chain;
}

/** Length of a 32-byte hash as DATA ("0x" + 64 digits); a Uint64 number has at most 16 digits. */
const hashTextLength = 66;

function rawHeader(block: Block | undefined): string | null {
  return block === undefined ? null : bytesToHex(block.header.encodedForHash);
}

export function createExtHandlers(deps: ExtDependencies): NamespaceHandlers<"ext", RpcCallContext> {
  const { chain } = deps;
  return {
    ext_protocolVersion: () => toQuantity(protocolVersion),

    ext_getRawBlockHeaderByHash: async ([blockHash]) => rawHeader(await chain.getBlockByHash(hexToBytes(blockHash))),
    ext_getRawBlockHeaderByNumber: async ([block]) => {
      if (block.length === hashTextLength) return rawHeader(await chain.getBlockByHash(hexToBytes(block)));
      return rawHeader(await findBlockByNumberOrTag(chain, block));
    },

    ext_getRawTransactionReceiptByHash: async ([transactionHash]) => {
      const location = await chain.getTransactionLocation(hexToBytes(transactionHash));
      if (location === undefined) return null;
      const receipt = (await chain.getReceipts(location.blockHash))?.[location.index];
      return receipt === undefined ? null : bytesToHex(encodeReceiptForTrie(receipt));
    },
    ext_getTransactionReceiptNodesByHash: async ([blockHash, transactionHash]) => {
      const block = await chain.getBlockByHash(hexToBytes(blockHash));
      const wanted = hexToBytes(transactionHash);
      const index = block?.transactions.findIndex((transaction) => equalsBytes(transaction.hash, wanted)) ?? -1;
      if (block === undefined || index === -1) return null;
      const receipts = await chain.getReceipts(block.hash);
      if (receipts === undefined) return null;
      return (await receiptTrieNodes(receipts, index, block.header.fields.receiptsRoot)).map(bytesToHex);
    },
  };
}
