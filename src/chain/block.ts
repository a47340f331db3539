// A block: its header, its transactions (with their recovered senders) and its uncle headers,
// and the body encoding the store keeps. The block size is that of RLP([header, transactions, uncles]).
import type { Common } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import { encodeRlpListOfEncoded, rlpByteStringPayload, rlpListItems } from "../common/rlp.js";
import { keccak256 } from "../common/crypto.js";
import { BlockHeader, emptyListHash, unclesHashOf, type HeaderFields } from "./header.js";
import { indexedTrieRoot } from "./indexedTrie.js";
import { recoverSignerKeyIfAny } from "../common/signatures.js";
import { decodeSignedTransaction, invalidSignature, restoreTransaction, withSignerKey, type ChainTransaction, type SignedTransaction, type TypedTransactionsAccepted } from "./transactions.js";

/** Bytes that are not a block in the wire form (wrong shape, a malformed header or transaction). */
export class MalformedBlockError extends Error {}

/**
 * A copy of `items` made by appending, from one place: always a packed array (see Block). V8 gives
 * packed and holey arrays different hidden classes, and which one an array is depends on how it
 * was made, even on whether the code making it was optimised (an optimised map() gives a holey
 * array, the same map() not yet optimised a packed one).
 */
function packedCopy<T>(items: readonly T[]): T[] {
  const copy: T[] = [];
  for (const item of items) copy.push(item);
  return copy;
}

export class Block {
  private encodedSize: number | undefined;
  readonly transactions: readonly ChainTransaction[];
  readonly uncles: readonly BlockHeader[];

  /**
   * The lists are copied (packedCopy): import, staging and execution read every block's lists,
   * and the blocks came with packed or holey ones depending on their source and on which of its
   * functions V8 had optimised yet; each late arrival of the other kind threw away the optimised
   * code of the functions reading them ("wrong map") and compiled it again.
   */
  constructor(
    readonly header: BlockHeader,
    transactions: readonly ChainTransaction[],
    uncles: readonly BlockHeader[] = [],
  ) {
    this.transactions = packedCopy(transactions);
    this.uncles = packedCopy(uncles);
  }

  get hash(): Uint8Array {
    return this.header.hash;
  }

  get number(): bigint {
    return this.header.number;
  }

  /** The block's difficulty plus its uncles' (the reference's cumulativeDifficulty). */
  get cumulativeDifficulty(): bigint {
    return this.uncles.reduce((sum, uncle) => sum + uncle.fields.difficulty, this.header.fields.difficulty);
  }

  /**
   * Bytes of RLP([header, [transactions], [uncles]]), as the reference node reports `size`. Signed
   * legacy transactions and headers are RLP lists already, so only the list prefixes are added.
   */
  get size(): number {
    if (this.encodedSize === undefined) {
      const transactions = lengthOfList(this.transactions.reduce((sum, transaction) => sum + transactionItemLength(transaction.raw), 0));
      const uncles = lengthOfList(this.uncles.reduce((sum, uncle) => sum + uncle.encoded.length, 0));
      this.encodedSize = lengthOfList(this.header.encoded.length + transactions + uncles);
    }
    return this.encodedSize;
  }

  /**
   * The wire and export form, RLP([header, [signed transaction...], [uncle header...]]) with the
   * full 19-field headers: what `decode` reads back.
   */
  encode(): Uint8Array {
    // Signed legacy transactions and headers are RLP lists already: only the list prefixes are added.
    return encodeRlpListOfEncoded([this.header.encoded, encodeRlpListOfEncoded(this.transactions.map(transactionItem)), encodeRlpListOfEncoded(this.uncles.map((uncle) => uncle.encoded))]);
  }

  /**
   * A block from outside (a file, a peer): every transaction's sender is recovered from its
   * signature, never taken on trust. Typed transactions (EIP-2718 byte strings) only where `typed`
   * accepts them (--typed-transactions), as for a send. Throws MalformedBlockError naming what
   * does not decode.
   */
  static decode(encoded: Uint8Array, common: Common, typed: TypedTransactionsAccepted = false): Block {
    let items: unknown;
    try {
      items = RLP.decode(encoded);
    } catch (error) {
      throw new MalformedBlockError(`not RLP: ${(error as Error).message}`);
    }
    if (!Array.isArray(items) || items.length !== 3 || !Array.isArray(items[0]) || !Array.isArray(items[1]) || !Array.isArray(items[2])) {
      throw new MalformedBlockError("a block is an RLP list of a header, a list of transactions and a list of uncle headers");
    }
    const [headerItems, transactionItems, uncleItems] = items as [unknown[], unknown[], unknown[]];
    return new Block(decodeHeaderItems(headerItems, "header"), decodeWireTransactions(transactionItems, common, typed), decodeWireUncles(uncleItems));
  }

  /** The wire body, RLP([[signed transaction...], [uncle header...]]): what a bodies answer holds for the block. */
  encodeWireBody(): Uint8Array {
    return encodeRlpListOfEncoded([encodeRlpListOfEncoded(this.transactions.map(transactionItem)), encodeRlpListOfEncoded(this.uncles.map((uncle) => uncle.encoded))]);
  }

  /** Stored body: RLP([[raw transaction...], [sender...], [uncle header...]]). */
  encodeBody(): Uint8Array {
    return RLP.encode([this.transactions.map((transaction) => transaction.raw), this.transactions.map((transaction) => transaction.sender), this.uncles.map((uncle) => uncle.encoded)]);
  }

  /**
   * The wire body (encodeWireBody) made from a stored body's bytes without decoding its
   * transactions: serving a peer's bodies request reads no transaction into an object. A legacy
   * transaction's raw form is its RLP list, a typed one's goes as a byte string (kept as stored).
   * The body must be the one `header` commits to (its uncles hash, its transactions root): bytes
   * that decode but are another block's, or damaged, throw MalformedBlockError rather than go to a
   * peer.
   */
  static wireBodyFromStored(encodedBody: Uint8Array, header: Pick<HeaderFields, "unclesHash" | "transactionsRoot">): Uint8Array {
    const [raws, , uncles] = rlpListItems(encodedBody);
    if (raws === undefined || uncles === undefined) throw new MalformedBlockError("a stored body is [transactions, senders, uncles]");
    const items = rlpListItems(raws);
    const rawTransactions = items.map(rlpByteStringPayload);
    // The uncles hash is keccak-256 of this very list (unclesHashOf); most blocks have none.
    const uncleList = encodeRlpListOfEncoded(rlpListItems(uncles).map(rlpByteStringPayload));
    const unclesHash = uncleList.length === 1 ? emptyListHash : keccak256(uncleList);
    if (Buffer.compare(unclesHash, header.unclesHash) !== 0) throw new MalformedBlockError(unclesMismatch);
    if (Buffer.compare(indexedTrieRoot(rawTransactions), header.transactionsRoot) !== 0) throw new MalformedBlockError(transactionsMismatch);
    const transactionItems = rawTransactions.map((raw, index) => (isLegacyEncoding(raw) ? raw : items[index]!));
    return encodeRlpListOfEncoded([encodeRlpListOfEncoded(transactionItems), uncleList]);
  }

  /** What of the body does not match the header, or undefined (bodyMismatchOf): for a stored block read back before it is served. */
  bodyMismatch(): string | undefined {
    return bodyMismatchOf(this.header, this);
  }

  static decodeBody(header: BlockHeader, encodedBody: Uint8Array, common: Common): Block {
    const [raws, senders, uncles] = RLP.decode(encodedBody) as [Uint8Array[], Uint8Array[], Uint8Array[]];
    const transactions = raws.map((raw, index) => restoreTransaction(raw, senders[index]!, common));
    return new Block(header, transactions, uncles.map((uncle) => BlockHeader.decode(uncle)));
  }
}

const unclesMismatch = "its uncles do not match the header's uncles hash";
const transactionsMismatch = "its transactions do not match the header's transactions root";

/**
 * What of a body does not match `header`, or undefined: the uncles hash, then the transactions
 * root (as chain/integrity.ts names them). For a peer's body in a long sync (sync/longSync.ts) and
 * a stored block read back before it is served (Block.bodyMismatch); the importer's rules check
 * the same on a block from outside.
 */
export function bodyMismatchOf(header: BlockHeader, body: { readonly transactions: readonly { readonly raw: Uint8Array }[]; readonly uncles: readonly BlockHeader[] }): string | undefined {
  if (Buffer.compare(unclesHashOf(body.uncles), header.fields.unclesHash) !== 0) return unclesMismatch;
  if (Buffer.compare(indexedTrieRoot(body.transactions.map((transaction) => transaction.raw)), header.fields.transactionsRoot) !== 0) return transactionsMismatch;
  return undefined;
}

/**
 * The transactions of a block's wire body from their decoded RLP items (a block from outside, or a
 * peer's answer to a bodies request): senders recovered, as Block.decode. Throws MalformedBlockError.
 */
export function decodeWireTransactions(items: readonly unknown[], common: Common, typed: TypedTransactionsAccepted = false): ChainTransaction[] {
  const signed = decodeWireSignedTransactions(items, common, typed);
  return withSigners(
    signed,
    signed.map((transaction) => recoverSignerKeyIfAny(transaction.signature)),
  );
}

/**
 * The transactions of a block's wire body decoded and checked, senders not yet recovered (a caller
 * recovering many at once elsewhere: sync/networkPeer.ts). Throws MalformedBlockError.
 */
export function decodeWireSignedTransactions(items: readonly unknown[], common: Common, typed: TypedTransactionsAccepted = false): SignedTransaction[] {
  return items.map((item, index) => {
    try {
      // A legacy transaction is an RLP list; a typed one a byte string holding type ‖ payload.
      return decodeSignedTransaction(Array.isArray(item) ? RLP.encode(item as Uint8Array[]) : (item as Uint8Array), common, typed);
    } catch (error) {
      throw new MalformedBlockError(`transaction ${index}: ${(error as Error).message}`);
    }
  });
}

/** A block's transactions with their signers' keys (undefined: none); MalformedBlockError names the first without one. */
export function withSigners(signed: readonly SignedTransaction[], signerKeys: readonly (Uint8Array | undefined)[]): ChainTransaction[] {
  return signed.map((transaction, index) => {
    const key = signerKeys[index];
    if (key === undefined) throw new MalformedBlockError(`transaction ${index}: ${invalidSignature().message}`);
    return withSignerKey(transaction, key);
  });
}

/** The uncle headers of a block's wire body from their decoded RLP items. Throws MalformedBlockError. */
export function decodeWireUncles(items: readonly unknown[]): BlockHeader[] {
  return items.map((item, index) => decodeHeaderItems(item, `uncle ${index}`));
}

/** A transaction as a block's list holds it: a legacy one is an RLP list already, a typed one (type ‖ payload) an RLP byte string. */
function transactionItem(transaction: ChainTransaction): Uint8Array {
  return isLegacyEncoding(transaction.raw) ? transaction.raw : RLP.encode(transaction.raw);
}

function transactionItemLength(raw: Uint8Array): number {
  if (isLegacyEncoding(raw)) return raw.length;
  return raw.length < 56 ? 1 + raw.length : lengthOfList(raw.length);
}

const isLegacyEncoding = (raw: Uint8Array) => raw[0]! >= 0xc0;

/** Length of an RLP list whose items take `payloadLength` bytes. */
function lengthOfList(payloadLength: number): number {
  if (payloadLength < 56) return 1 + payloadLength;
  let lengthBytes = 0;
  for (let rest = payloadLength; rest > 0; rest = Math.floor(rest / 256)) lengthBytes++;
  return 1 + lengthBytes + payloadLength;
}

function decodeHeaderItems(items: unknown, what: string): BlockHeader {
  if (!Array.isArray(items)) throw new MalformedBlockError(`the ${what} is not an RLP list`);
  try {
    return BlockHeader.decode(RLP.encode(items as Uint8Array[]));
  } catch (error) {
    throw new MalformedBlockError(`the ${what}: ${(error as Error).message}`);
  }
}
