// What the store must hold for every canonical block, read back and checked. Every start checks
// the blocks near the head for what a crash or lost writes would leave: the canonical index names
// a header that hashes to its key and carries that number, whose parent is the canonical block
// before it, with its total difficulty, a body and as many receipts as transactions (damaged bytes
// are what LevelDB's checksums, checked before opening, find). `chain-node verify` checks every
// block thoroughly as well: the body against the header's transactions root and uncles hash, the
// receipts against its receipts root, each transaction's location pointing back at its block, each
// sender against its signature, and the total difficulties adding up.
import { RLP } from "@ethereumjs/rlp";
import { bytesToBigInt, equalsBytes } from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import { bytesToHex } from "../common/hex.js";
import { rlpListItems, rlpListLength } from "../common/rlp.js";
import type { KeyValueStore } from "../storage/keyValueStore.js";
import { storeKeys } from "../storage/keys.js";
import { BlockHeader, blockHashOfHeaderItems, splitStoredHeader, unclesHashOf } from "./header.js";
import { indexedTrieRoot } from "./indexedTrie.js";
import { decodeBlockReceipts, encodeReceiptForTrie } from "./receipts.js";

/**
 * What every start checks from the head back: this many blocks (some 30 µs each for small blocks:
 * five reads and a hash), or fewer once their bodies and receipts add up to startupCheckedBytes
 * (reading large values from LevelDB costs some 17 µs per 10 KB here), so that the check takes a
 * few tens of milliseconds at most whatever the blocks hold.
 */
export const startupCheckedBlocks = 256n;
export const startupCheckedBytes = 8 * 1024 * 1024;

/** Positions in the header's RLP list (chain/header.ts). */
const headerParentHashField = 0;
const headerNumberField = 8;

/** A canonical block the store does not hold whole, and why. */
export interface BlockDamage {
  readonly number: bigint;
  readonly problem: string;
}

export interface CanonicalWalkOptions {
  /** The head block's hash (the metadata's) and number. */
  readonly headHash: Uint8Array;
  readonly headNumber: bigint;
  /** The lowest block checked. */
  readonly lowest: bigint;
  /** Stop below the block at which this many bytes of bodies and receipts have been read (the head's are always read). */
  readonly byteBudget?: number;
  /**
   * Check each block's contents too (`verify`): roots, uncles, transaction locations, total
   * difficulties, and the senders with this recovery (answers the problem, if any).
   */
  readonly thorough?: { readonly recoverSenders: (raws: readonly Uint8Array[], senders: readonly Uint8Array[]) => string | undefined };
  /** Called after each block with its number. */
  readonly onBlock?: (number: bigint) => void;
}

/** What the walk knows of the block above the one checked: its parent hash and total difficulty. */
interface ChildLink {
  readonly parentHash: Uint8Array;
  readonly parentTotalDifficulty: bigint | undefined;
}

/**
 * A block's stored body, RLP([[raw transaction...], [sender...], [uncle header...]]), split into
 * its three lists, each still encoded: a start counts their items without decoding any.
 */
interface StoredBody {
  readonly transactions: Uint8Array;
  readonly senders: Uint8Array;
  readonly uncles: Uint8Array;
  readonly transactionCount: number;
}

function splitStoredBody(encoded: Uint8Array): StoredBody {
  const parts = rlpListItems(encoded);
  if (parts.length !== 3) throw new Error("malformed body");
  const [transactions, senders, uncles] = parts as [Uint8Array, Uint8Array, Uint8Array];
  const transactionCount = rlpListLength(transactions);
  if (transactionCount !== rlpListLength(senders)) throw new Error("malformed body");
  rlpListLength(uncles);
  return { transactions, senders, uncles, transactionCount };
}

/** An item's payload: a raw transaction's or a sender's bytes as stored. */
const payloadOf = (item: Uint8Array) => RLP.decode(item) as Uint8Array;

/** The contents' checks of `verify`: answers the problems found and the parent's total difficulty. */
function checkContents(store: KeyValueStore, hash: Uint8Array, header: BlockHeader, body: StoredBody, receipts: Uint8Array, totalDifficulty: bigint | undefined, thorough: NonNullable<CanonicalWalkOptions["thorough"]>) {
  const problems: string[] = [];
  const raws = rlpListItems(body.transactions).map(payloadOf);
  if (!equalsBytes(indexedTrieRoot(raws), header.fields.transactionsRoot)) problems.push("its transactions do not match the header's transactions root");
  let uncles: BlockHeader[] = [];
  try {
    // Each uncle is stored as its header's encoding (a byte string of the body's third list).
    uncles = rlpListItems(body.uncles).map((uncle) => BlockHeader.decode(payloadOf(uncle)));
    if (!equalsBytes(unclesHashOf(uncles), header.fields.unclesHash)) problems.push("its uncles do not match the header's uncles hash");
  } catch {
    problems.push("its uncles do not decode");
  }
  const senderProblem = thorough.recoverSenders(raws, rlpListItems(body.senders).map(payloadOf));
  if (senderProblem !== undefined) problems.push(senderProblem);
  raws.forEach((raw, index) => {
    const transactionHash = keccak256(raw);
    const location = store.getSync(storeKeys.transactionLocation(transactionHash));
    const [blockHash, position] = location === undefined ? [] : (RLP.decode(location) as Uint8Array[]);
    if (blockHash === undefined || !equalsBytes(blockHash, hash) || bytesToBigInt(position!) !== BigInt(index)) {
      problems.push(`the location of its transaction ${index} (${bytesToHex(transactionHash)}) ${location === undefined ? "is missing" : "points elsewhere"}`);
    }
  });
  try {
    if (!equalsBytes(indexedTrieRoot(decodeBlockReceipts(receipts).map(encodeReceiptForTrie)), header.fields.receiptsRoot)) problems.push("its receipts do not match the header's receipts root");
  } catch {
    problems.push("its receipts do not decode");
  }
  const cumulativeDifficulty = uncles.reduce((sum, uncle) => sum + uncle.fields.difficulty, header.fields.difficulty);
  return { problems, parentTotalDifficulty: totalDifficulty === undefined ? undefined : totalDifficulty - cumulativeDifficulty };
}

/** Checks one canonical block read straight from the store; answers its problems and what its parent must match. */
function checkBlock(store: KeyValueStore, number: bigint, hash: Uint8Array, child: ChildLink | undefined, options: CanonicalWalkOptions): { problems: string[]; link: ChildLink | undefined; bytesRead?: number } {
  const problems: string[] = [];
  if (child !== undefined && !equalsBytes(child.parentHash, hash)) problems.push(`block ${number + 1n} names ${bytesToHex(child.parentHash)} as its parent, not the canonical ${bytesToHex(hash)}`);
  const encodedHeader = store.getSync(storeKeys.header(hash));
  if (encodedHeader === undefined) return { problems: [...problems, `its header ${bytesToHex(hash)} is missing`], link: undefined };
  // The stored bytes themselves must hash to the key.
  let fields: Uint8Array[];
  try {
    const items = splitStoredHeader(encodedHeader);
    const storedHash = blockHashOfHeaderItems(items);
    if (!equalsBytes(storedHash, hash)) problems.push(`its header, stored under ${bytesToHex(hash)}, hashes to ${bytesToHex(storedHash)}`);
    fields = items.map(payloadOf);
  } catch {
    return { problems: [...problems, `its header ${bytesToHex(hash)} does not decode`], link: undefined };
  }
  const headerNumber = bytesToBigInt(fields[headerNumberField]!);
  if (headerNumber !== number) problems.push(`its header carries number ${headerNumber}`);
  const storedDifficulty = store.getSync(storeKeys.totalDifficulty(hash));
  const totalDifficulty = storedDifficulty === undefined ? undefined : bytesToBigInt(storedDifficulty);
  if (totalDifficulty === undefined) problems.push("its total difficulty is missing");
  const encodedBody = store.getSync(storeKeys.body(hash));
  let body: StoredBody | undefined;
  try {
    body = encodedBody === undefined ? undefined : splitStoredBody(encodedBody);
  } catch {
    problems.push("its body does not decode");
  }
  if (encodedBody === undefined) problems.push("its body is missing");
  const receipts = store.getSync(storeKeys.receipts(hash));
  if (receipts === undefined) problems.push("its receipts are missing");
  else if (body !== undefined) {
    let count: number | undefined;
    try {
      count = rlpListLength(receipts);
    } catch {
      count = undefined;
    }
    if (count === undefined) problems.push("its receipts do not decode");
    else if (count !== body.transactionCount) problems.push(`it has ${count} receipts for ${body.transactionCount} transactions`);
  }
  let parentTotalDifficulty: bigint | undefined;
  if (options.thorough !== undefined && body !== undefined && receipts !== undefined) {
    const contents = checkContents(store, hash, BlockHeader.decode(encodedHeader), body, receipts, totalDifficulty, options.thorough);
    problems.push(...contents.problems);
    if (child?.parentTotalDifficulty !== undefined && totalDifficulty !== undefined && child.parentTotalDifficulty !== totalDifficulty) {
      problems.push(`its total difficulty ${totalDifficulty} is not that of block ${number + 1n} less that block's difficulty (${child.parentTotalDifficulty})`);
    }
    parentTotalDifficulty = contents.parentTotalDifficulty;
  }
  return { problems, link: { parentHash: fields[headerParentHashField]!, parentTotalDifficulty }, bytesRead: (encodedBody?.length ?? 0) + (receipts?.length ?? 0) };
}

/**
 * Walks the canonical chain from the head down to `lowest`, reading every block straight from the
 * store, and yields each damaged block with its problems (one entry per problem), from the head
 * down.
 */
export function* findCanonicalDamage(store: KeyValueStore, options: CanonicalWalkOptions): Generator<BlockDamage> {
  let child: ChildLink | undefined;
  let bytesRead = 0;
  for (let number = options.headNumber; number >= options.lowest && bytesRead < (options.byteBudget ?? Infinity); number--) {
    const hash = number === options.headNumber ? options.headHash : store.getSync(storeKeys.canonicalHash(number));
    if (hash === undefined) {
      yield { number, problem: "the canonical index has no entry for it" };
      child = undefined;
    } else {
      if (number === options.headNumber) {
        const indexed = store.getSync(storeKeys.canonicalHash(number));
        if (indexed === undefined || !equalsBytes(indexed, hash)) yield { number, problem: `the canonical index does not name the head ${bytesToHex(hash)}` };
      }
      const checked = checkBlock(store, number, hash, child, options);
      for (const problem of checked.problems) yield { number, problem };
      child = checked.link;
      bytesRead += checked.bytesRead ?? 0;
    }
    options.onBlock?.(number);
  }
}
