// The block header in the reference node's format: its fields, its RLP encoding, its hash (keccak-256
// of the RLP) and the hash the parent chain's miners commit to (`hashForMergedMining`).
import { RLP } from "@ethereumjs/rlp";
import { bytesToBigInt } from "@ethereumjs/util";
import { keccak256, keccak256OfTwo } from "../common/crypto.js";
import { bigIntToMinimalBytes } from "../common/hex.js";
import {
  appendBytesToRlpList,
  appendToRlpList,
  encodeRlpListOfEncoded,
  forEachRlpListItem,
  rlpByteStringPayload,
  rlpBytesLength,
  rlpListItems,
  rlpListPayloadStart,
  rlpListPrefix,
  rlpPrefixLength,
  writeRlpPrefix,
} from "../common/rlp.js";

export interface HeaderFields {
  parentHash: Uint8Array;
  unclesHash: Uint8Array;
  coinbase: Uint8Array;
  stateRoot: Uint8Array;
  transactionsRoot: Uint8Array;
  receiptsRoot: Uint8Array;
  logsBloom: Uint8Array;
  difficulty: bigint;
  number: bigint;
  gasLimit: bigint;
  gasUsed: bigint;
  timestamp: bigint;
  extraData: Uint8Array;
  /** Fees paid by the block's transactions, in wei. */
  paidFees: bigint;
  /** Lowest gas price a transaction of this block may pay. */
  minimumGasPrice: bigint;
  uncleCount: number;
  /** Merged mining: the parent-chain header carrying the proof of work (empty when not merge-mined). */
  mergedMiningHeader: Uint8Array;
  mergedMiningMerkleProof: Uint8Array;
  mergedMiningCoinbaseTransaction: Uint8Array;
}

export const emptyBytes = new Uint8Array(0);
export const zeroHash = new Uint8Array(32);
/** The bloom with no bit set, shared by blocks, receipts and log records without logs: never written into. */
export const emptyBloom = new Uint8Array(256);
/** keccak-256 of RLP([]): the uncles hash of a block without uncles. */
export const emptyListHash = keccak256(RLP.encode([]));
/**
 * The uncles hash of a block: keccak-256 of the RLP list whose items are the uncles' full header
 * encodings as they are (the reference's BlockHeader.getUnclesEncoded), not wrapped as byte strings.
 */
export function unclesHashOf(uncles: readonly BlockHeader[]): Uint8Array {
  return keccak256(RLP.encode(uncles.map((uncle) => RLP.decode(uncle.encoded))));
}

/** Root of an empty Merkle-Patricia trie: keccak-256 of RLP(""). */
export const emptyTrieRoot = keccak256(RLP.encode(emptyBytes));

type RlpFields = Uint8Array[];

function fieldsWithoutMergedMining(header: HeaderFields): RlpFields {
  return [
    header.parentHash,
    header.unclesHash,
    header.coinbase,
    header.stateRoot,
    header.transactionsRoot,
    header.receiptsRoot,
    header.logsBloom,
    bigIntToMinimalBytes(header.difficulty),
    bigIntToMinimalBytes(header.number),
    bigIntToMinimalBytes(header.gasLimit),
    bigIntToMinimalBytes(header.gasUsed),
    bigIntToMinimalBytes(header.timestamp),
    header.extraData,
    bigIntToMinimalBytes(header.paidFees),
    bigIntToMinimalBytes(header.minimumGasPrice),
    bigIntToMinimalBytes(BigInt(header.uncleCount)),
  ];
}

/** Positions in the header's RLP list. */
const headerFieldCount = 19;
const baseFieldCount = 16;
/** RLP of the empty string: an unset merged-mining field. */
const emptyStringItem = 0x80;

/**
 * The block hash of a header as stored (its full encoding), without decoding its fields: the
 * integrity checks hash thousands of stored headers. Throws on bytes that are not a header's list.
 */
export function blockHashOfStoredHeader(encoded: Uint8Array): Uint8Array {
  return blockHashOfHeaderItems(splitStoredHeader(encoded));
}

/** A stored header's 19 fields, each still RLP-encoded; throws on bytes that are not a header's list. */
export function splitStoredHeader(encoded: Uint8Array): Uint8Array[] {
  const items = rlpListItems(encoded);
  if (items.length !== headerFieldCount) throw new Error("malformed block header");
  return items;
}

/** The block hash of a header split by splitStoredHeader. */
export function blockHashOfHeaderItems(items: readonly Uint8Array[]): Uint8Array {
  const merged = items.slice(baseFieldCount).some((item) => item.length !== 1 || item[0] !== emptyStringItem);
  return keccak256(encodeRlpListOfEncoded(items.slice(0, merged ? baseFieldCount + 1 : baseFieldCount)));
}

/** What serving a stored header needs of it (summarizeStoredHeader). */
export interface StoredHeaderSummary {
  /** The block hash of the bytes: the key they are stored under, unless they are damaged. */
  readonly hash: Uint8Array;
  readonly parentHash: Uint8Array;
  readonly number: bigint;
  readonly unclesHash: Uint8Array;
  readonly transactionsRoot: Uint8Array;
}

/** Positions of the fields summarizeStoredHeader reads in the header's RLP list. */
const parentHashField = 0;
const unclesHashField = 1;
const transactionsRootField = 4;
const numberField = 8;

/**
 * A stored header's block hash and the fields a peer's requests are served by, in one pass over
 * its bytes, nothing decoded that is not read: the hashed items (blockHashOfHeaderItems) are
 * hashed where they lie in the encoding. A headers answer reads thousands. Throws on bytes that
 * are not a list of 19 byte strings (as BlockHeader.decode).
 */
export function summarizeStoredHeader(encoded: Uint8Array): StoredHeaderSummary {
  // Where each item starts, then where the last ends.
  const bounds: number[] = [];
  let end = 0;
  forEachRlpListItem(encoded, (start, itemEnd) => {
    if (encoded[start]! >= 0xc0) throw new Error("malformed block header");
    bounds.push(start);
    end = itemEnd;
  });
  if (bounds.length !== headerFieldCount) throw new Error("malformed block header");
  bounds.push(end);
  const payload = (index: number) => rlpByteStringPayload(encoded.subarray(bounds[index]!, bounds[index + 1]!));
  let merged = false;
  for (let index = baseFieldCount; index < headerFieldCount; index++) if (bounds[index + 1]! - bounds[index]! !== 1 || encoded[bounds[index]!] !== emptyStringItem) merged = true;
  const hashedEnd = bounds[merged ? baseFieldCount + 1 : baseFieldCount]!;
  const number = payload(numberField);
  return {
    hash: keccak256OfTwo(rlpListPrefix(hashedEnd - bounds[0]!), encoded.subarray(bounds[0]!, hashedEnd)),
    parentHash: payload(parentHashField),
    number: number.length <= 6 ? BigInt(number.reduce((value, byte) => value * 256 + byte, 0)) : bytesToBigInt(number),
    unclesHash: payload(unclesHashField),
    transactionsRoot: payload(transactionsRootField),
  };
}

/** Whether any of the three merged-mining fields is set (the reference's hasMiningFields). */
function hasMergedMiningFields(fields: Readonly<HeaderFields>): boolean {
  return fields.mergedMiningHeader.length > 0 || fields.mergedMiningMerkleProof.length > 0 || fields.mergedMiningCoinbaseTransaction.length > 0;
}

/**
 * `fields` with the three merged-mining fields of `merged`, written out member by member in the
 * order every header's fields have: a spread of the two made an object of another shape for every
 * mined block, which made the miner's header slower to build than its hash.
 */
function withMergedMiningFields(fields: Readonly<HeaderFields>, merged: Pick<HeaderFields, "mergedMiningHeader" | "mergedMiningMerkleProof" | "mergedMiningCoinbaseTransaction">): HeaderFields {
  return {
    parentHash: fields.parentHash,
    unclesHash: fields.unclesHash,
    coinbase: fields.coinbase,
    stateRoot: fields.stateRoot,
    transactionsRoot: fields.transactionsRoot,
    receiptsRoot: fields.receiptsRoot,
    logsBloom: fields.logsBloom,
    difficulty: fields.difficulty,
    number: fields.number,
    gasLimit: fields.gasLimit,
    gasUsed: fields.gasUsed,
    timestamp: fields.timestamp,
    extraData: fields.extraData,
    paidFees: fields.paidFees,
    minimumGasPrice: fields.minimumGasPrice,
    uncleCount: fields.uncleCount,
    mergedMiningHeader: merged.mergedMiningHeader,
    mergedMiningMerkleProof: merged.mergedMiningMerkleProof,
    mergedMiningCoinbaseTransaction: merged.mergedMiningCoinbaseTransaction,
  };
}

/**
 * A header with its encodings and hashes computed once. Immutable. The store and the wire keep the
 * full encoding (19 fields); the block hash is the reference's (RSKIP92): keccak-256 of the 16 base
 * fields followed by the parent-chain header when any merged-mining field is set, of the 16 base
 * fields alone when none is. The merkle proof and the coinbase are not hashed: they are the bulk
 * of the header, and the parent-chain header already commits to them.
 */
export class BlockHeader {
  readonly hash: Uint8Array;
  private forHashEncoding: Uint8Array | undefined;
  /** Where encodedForHash lies in the full encoding's items (the miner's header), until it is made. */
  private forHashItems: { prefix: Uint8Array; start: number; end: number } | undefined;
  private mergedMiningHash: Uint8Array | undefined;
  private fullEncoding: Uint8Array | undefined;

  constructor(
    readonly fields: Readonly<HeaderFields>,
    /** Encodings and hashes already known (withMergedMining), else computed from the fields. */
    known?: { encoded: Uint8Array; forHashItems: { prefix: Uint8Array; start: number; end: number }; hash: Uint8Array; mergedMiningHash: Uint8Array },
  ) {
    if (known !== undefined) {
      ({ encoded: this.fullEncoding, forHashItems: this.forHashItems, hash: this.hash, mergedMiningHash: this.mergedMiningHash } = known);
      return;
    }
    const base = fieldsWithoutMergedMining(fields);
    if (hasMergedMiningFields(fields)) {
      this.forHashEncoding = RLP.encode([...base, fields.mergedMiningHeader]);
      this.hash = keccak256(this.forHashEncoding);
    } else {
      // Without merged-mining fields the block hash is the hash for merged mining.
      this.forHashEncoding = RLP.encode(base);
      this.hash = this.mergedMiningHash = keccak256(this.forHashEncoding);
    }
  }

  /**
   * What the block hash is keccak-256 of (ext_getRawBlockHeaderBy* answer it). The miner's header
   * hashes it from its parts in the full encoding, and joins them only when this is read.
   */
  get encodedForHash(): Uint8Array {
    if (this.forHashEncoding === undefined) {
      const { prefix, start, end } = this.forHashItems!;
      const encoding = new Uint8Array(prefix.length + end - start);
      encoding.set(prefix);
      encoding.set(this.fullEncoding!.subarray(start, end), prefix.length);
      this.forHashEncoding = encoding;
      this.forHashItems = undefined;
    }
    return this.forHashEncoding;
  }

  /**
   * The full encoding (19 fields), which the store and the wire keep. Made when first read: the
   * miner's header before its proof of work is only hashed.
   */
  get encoded(): Uint8Array {
    if (this.fullEncoding === undefined) {
      const { mergedMiningHeader, mergedMiningMerkleProof, mergedMiningCoinbaseTransaction } = this.fields;
      const rest = hasMergedMiningFields(this.fields) ? [mergedMiningMerkleProof, mergedMiningCoinbaseTransaction] : [mergedMiningHeader, mergedMiningMerkleProof, mergedMiningCoinbaseTransaction];
      this.fullEncoding = appendToRlpList(this.encodedForHash, rest.map((field) => RLP.encode(field)));
    }
    return this.fullEncoding;
  }

  get number(): bigint {
    return this.fields.number;
  }

  /** keccak-256 of the header RLP without the three merged-mining fields (facts 1.4, step 1). */
  get hashForMergedMining(): Uint8Array {
    this.mergedMiningHash ??= keccak256(RLP.encode(fieldsWithoutMergedMining(this.fields)));
    return this.mergedMiningHash;
  }

  /**
   * This header (without merged-mining fields) with the three set: the miner's proof of work. The
   * 16 base fields' encodings are taken from this header's, not encoded again.
   */
  withMergedMining(merged: Pick<HeaderFields, "mergedMiningHeader" | "mergedMiningMerkleProof" | "mergedMiningCoinbaseTransaction">): BlockHeader {
    const fields = withMergedMiningFields(this.fields, merged);
    if (hasMergedMiningFields(this.fields) || !hasMergedMiningFields(fields)) return new BlockHeader(fields);
    // The full encoding is written once; the block hash is of its first 17 items under their own
    // list prefix, hashed in place.
    const base = this.encodedForHash;
    const encoded = appendBytesToRlpList(base, [merged.mergedMiningHeader, merged.mergedMiningMerkleProof, merged.mergedMiningCoinbaseTransaction]);
    const forHashPayloadLength = base.length - rlpListPayloadStart(base) + rlpBytesLength(merged.mergedMiningHeader);
    const start = rlpListPayloadStart(encoded);
    const forHashItems = { prefix: rlpListPrefix(forHashPayloadLength), start, end: start + forHashPayloadLength };
    const hash = keccak256OfTwo(forHashItems.prefix, encoded.subarray(forHashItems.start, forHashItems.end));
    return new BlockHeader(fields, { encoded, forHashItems, hash, mergedMiningHash: this.hashForMergedMining });
  }

  /**
   * withMergedMining for the built-in miner's proof, written in place: the full encoding is
   * allocated once with room for a `parentHeaderLength`-byte parent header, an empty merkle proof
   * and a `coinbaseLength`-byte compressed coinbase, and `write` fills the two in it (at the offsets
   * it is given). The fields are views of those bytes, not copies: a block's proof is one buffer, not
   * three (a typed array above 64 bytes costs some 0.5 µs to allocate). `write` answers false when it
   * found no proof; so does this then (undefined). Only for a header without merged-mining fields.
   */
  withMergedMiningWrittenIn(parentHeaderLength: number, coinbaseLength: number, write: (encoded: Uint8Array, parentHeaderAt: number, coinbaseAt: number) => boolean): BlockHeader | undefined {
    if (hasMergedMiningFields(this.fields) || parentHeaderLength < 2 || coinbaseLength < 2) throw new Error("a header written in place takes a parent header and a coinbase of 2 bytes or more, on a header without them");
    const base = this.encodedForHash;
    const basePayloadStart = rlpListPayloadStart(base);
    const parentHeaderItemLength = rlpPrefixLength(parentHeaderLength) + parentHeaderLength;
    const forHashPayloadLength = base.length - basePayloadStart + parentHeaderItemLength;
    // the empty merkle proof is the one byte 0x80
    const payloadLength = forHashPayloadLength + 1 + rlpPrefixLength(coinbaseLength) + coinbaseLength;
    const encoded = new Uint8Array(rlpPrefixLength(payloadLength) + payloadLength);
    let offset = writeRlpPrefix(encoded, 0, payloadLength, 0xc0);
    const start = offset;
    encoded.set(base.subarray(basePayloadStart), offset);
    offset += base.length - basePayloadStart;
    const parentHeaderAt = writeRlpPrefix(encoded, offset, parentHeaderLength, 0x80);
    offset = parentHeaderAt + parentHeaderLength;
    encoded[offset++] = emptyStringItem;
    const coinbaseAt = writeRlpPrefix(encoded, offset, coinbaseLength, 0x80);
    if (!write(encoded, parentHeaderAt, coinbaseAt)) return undefined;
    const forHashItems = { prefix: rlpListPrefix(forHashPayloadLength), start, end: start + forHashPayloadLength };
    const hash = keccak256OfTwo(forHashItems.prefix, encoded.subarray(forHashItems.start, forHashItems.end));
    const fields = withMergedMiningFields(this.fields, {
      mergedMiningHeader: encoded.subarray(parentHeaderAt, parentHeaderAt + parentHeaderLength),
      mergedMiningMerkleProof: emptyBytes,
      mergedMiningCoinbaseTransaction: encoded.subarray(coinbaseAt, coinbaseAt + coinbaseLength),
    });
    return new BlockHeader(fields, { encoded, forHashItems, hash, mergedMiningHash: this.hashForMergedMining });
  }

  static decode(encoded: Uint8Array): BlockHeader {
    const values = RLP.decode(encoded);
    if (!Array.isArray(values) || values.length !== 19 || !values.every((value) => value instanceof Uint8Array)) {
      throw new Error("malformed block header");
    }
    const bytes = values as Uint8Array[];
    const field = (index: number) => bytes[index]!;
    const quantity = (index: number) => bytesToBigInt(bytes[index]!);
    return new BlockHeader({
      parentHash: field(0),
      unclesHash: field(1),
      coinbase: field(2),
      stateRoot: field(3),
      transactionsRoot: field(4),
      receiptsRoot: field(5),
      logsBloom: field(6),
      difficulty: quantity(7),
      number: quantity(8),
      gasLimit: quantity(9),
      gasUsed: quantity(10),
      timestamp: quantity(11),
      extraData: field(12),
      paidFees: quantity(13),
      minimumGasPrice: quantity(14),
      uncleCount: Number(quantity(15)),
      mergedMiningHeader: field(16),
      mergedMiningMerkleProof: field(17),
      mergedMiningCoinbaseTransaction: field(18),
    });
  }
}
