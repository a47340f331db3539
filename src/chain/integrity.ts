// What the store must hold for every canonical block, read back and checked: the canonical index
// names a header that hashes to its key and carries that number; the body matches the header's
// transactions root and uncles hash; the receipts match its receipts root; each transaction's
// location points back at its block; the total difficulty adds up; each block's parent is the
// canonical block before it. The node checks the blocks near the head at every start (a damaged
// store is refused, naming the first bad block); `chain-node verify` checks them all.
import type { Common } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import { bytesToBigInt, equalsBytes } from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import { bytesToHex } from "../common/hex.js";
import type { KeyValueStore } from "../storage/keyValueStore.js";
import { storeKeys } from "../storage/keys.js";
import { Block } from "./block.js";
import { BlockHeader } from "./header.js";
import { indexedTrieRoot } from "./indexedTrie.js";
import { decodeBlockReceipts, encodeReceiptForTrie } from "./receipts.js";

/** Blocks from the head back that every start checks: a few milliseconds. */
export const startupCheckedBlocks = 256n;

/** A canonical block the store does not hold whole, and why. */
export interface BlockDamage {
  readonly number: bigint;
  readonly problem: string;
}

/** What the walk knows of the block above the one checked: its parent hash and total difficulty. */
interface ChildLink {
  readonly parentHash: Uint8Array;
  readonly parentTotalDifficulty: bigint | undefined;
}

export interface CanonicalWalkOptions {
  /** The head block's hash (the metadata's) and number. */
  readonly headHash: Uint8Array;
  readonly headNumber: bigint;
  /** The lowest block checked. */
  readonly lowest: bigint;
  /** Also recover each transaction's sender from its signature and compare it with the stored one (slow: `verify`). */
  readonly recoverSenders?: (block: Block) => string | undefined;
  /** Called after each block with its number. */
  readonly onBlock?: (number: bigint) => void;
}

/** Checks one canonical block read straight from the store; answers its problems and what its parent must match. */
function checkBlock(store: KeyValueStore, common: Common, number: bigint, hash: Uint8Array, child: ChildLink | undefined, options: CanonicalWalkOptions): { problems: string[]; link: ChildLink | undefined } {
  const problems: string[] = [];
  if (child !== undefined && !equalsBytes(child.parentHash, hash)) problems.push(`block ${number + 1n} names ${bytesToHex(child.parentHash)} as its parent, not the canonical ${bytesToHex(hash)}`);
  const encodedHeader = store.getSync(storeKeys.header(hash));
  if (encodedHeader === undefined) return { problems: [...problems, `its header ${bytesToHex(hash)} is missing`], link: undefined };
  let header: BlockHeader;
  try {
    header = BlockHeader.decode(encodedHeader);
  } catch {
    return { problems: [...problems, `its header ${bytesToHex(hash)} does not decode`], link: undefined };
  }
  if (!equalsBytes(header.hash, hash)) problems.push(`its header, stored under ${bytesToHex(hash)}, hashes to ${bytesToHex(header.hash)}`);
  if (header.number !== number) problems.push(`its header carries number ${header.number}`);
  const storedDifficulty = store.getSync(storeKeys.totalDifficulty(hash));
  const totalDifficulty = storedDifficulty === undefined ? undefined : bytesToBigInt(storedDifficulty);
  if (totalDifficulty === undefined) problems.push("its total difficulty is missing");
  const encodedBody = store.getSync(storeKeys.body(hash));
  let block: Block | undefined;
  try {
    block = encodedBody === undefined ? undefined : Block.decodeBody(header, encodedBody, common);
  } catch {
    problems.push("its body does not decode");
  }
  if (encodedBody === undefined) problems.push("its body is missing");
  if (block !== undefined) {
    if (!equalsBytes(indexedTrieRoot(block.transactions.map((transaction) => transaction.raw)), header.fields.transactionsRoot)) problems.push("its transactions do not match the header's transactions root");
    if (!equalsBytes(keccak256(RLP.encode(block.uncles.map((uncle) => uncle.encoded))), header.fields.unclesHash)) problems.push("its uncles do not match the header's uncles hash");
    const senderProblem = options.recoverSenders?.(block);
    if (senderProblem !== undefined) problems.push(senderProblem);
    block.transactions.forEach((transaction, index) => {
      const location = store.getSync(storeKeys.transactionLocation(transaction.hash));
      const [blockHash, position] = location === undefined ? [] : (RLP.decode(location) as Uint8Array[]);
      if (blockHash === undefined || !equalsBytes(blockHash, hash) || bytesToBigInt(position!) !== BigInt(index)) {
        problems.push(`the location of its transaction ${index} (${bytesToHex(transaction.hash)}) ${location === undefined ? "is missing" : "points elsewhere"}`);
      }
    });
    if (child?.parentTotalDifficulty !== undefined && totalDifficulty !== undefined && child.parentTotalDifficulty !== totalDifficulty) {
      problems.push(`its total difficulty ${totalDifficulty} is not that of block ${number + 1n} less its difficulty (${child.parentTotalDifficulty})`);
    }
  }
  const encodedReceipts = store.getSync(storeKeys.receipts(hash));
  if (encodedReceipts === undefined) problems.push("its receipts are missing");
  else {
    try {
      const receipts = decodeBlockReceipts(encodedReceipts);
      if (block !== undefined && receipts.length !== block.transactions.length) problems.push(`it has ${receipts.length} receipts for ${block.transactions.length} transactions`);
      else if (!equalsBytes(indexedTrieRoot(receipts.map(encodeReceiptForTrie)), header.fields.receiptsRoot)) problems.push("its receipts do not match the header's receipts root");
    } catch {
      problems.push("its receipts do not decode");
    }
  }
  const link = { parentHash: header.fields.parentHash, parentTotalDifficulty: totalDifficulty === undefined || block === undefined ? undefined : totalDifficulty - block.cumulativeDifficulty };
  return { problems, link };
}

/**
 * Walks the canonical chain from the head down to `lowest`, reading every block straight from the
 * store, and yields each damaged block with its problems (one entry per problem), in order from
 * the head down. Cheap enough for the node's start over a window of blocks: no execution, no
 * state, no signature unless asked.
 */
export function* findCanonicalDamage(store: KeyValueStore, common: Common, options: CanonicalWalkOptions): Generator<BlockDamage> {
  let child: ChildLink | undefined;
  for (let number = options.headNumber; number >= options.lowest; number--) {
    const hash = number === options.headNumber ? options.headHash : store.getSync(storeKeys.canonicalHash(number));
    if (hash === undefined) {
      yield { number, problem: "the canonical index has no entry for it" };
      child = undefined;
    } else {
      if (number === options.headNumber) {
        const indexed = store.getSync(storeKeys.canonicalHash(number));
        if (indexed === undefined || !equalsBytes(indexed, hash)) yield { number, problem: `the canonical index does not name the head ${bytesToHex(hash)}` };
      }
      const { problems, link } = checkBlock(store, common, number, hash, child, options);
      for (const problem of problems) yield { number, problem };
      child = link;
    }
    options.onBlock?.(number);
  }
}
