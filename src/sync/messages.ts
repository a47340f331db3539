// The request/response protocols and gossip topics of the chain (network brief 4), and their RLP
// codecs. Requests and answers come from peers: every decoder checks shape, counts and sizes and
// throws MessageDecodingError naming what is wrong, never another exception. Headers travel in
// their full 19-field encoding (the receiver computes the hash); a body is
// [[signed transaction...], [uncle header...]] as in a block's wire form.
import type { Common } from "@ethereumjs/common";
import { Block, decodeWireSignedTransactions, decodeWireUncles, MalformedBlockError } from "../chain/block.js";
import { BlockHeader } from "../chain/header.js";
import type { TypedTransactionsAccepted } from "../chain/transactions.js";
import { decodeRlp, encodeRlp, encodeRlpListOfEncoded, rlpListItems, type RlpDecoded } from "../common/rlp.js";
import type { GossipTopic, RequestProtocol } from "../p2p/interface.js";
import type { BlockBody } from "./syncPeer.js";

/** A peer's bytes that are not the message they should be. */
export class MessageDecodingError extends Error {}

/** Most headers in one answer (rskj: a chunk, 192). */
export const maxHeadersPerRequest = 192;
/** Most hashes in one bodies request (network brief 4). */
export const maxBodiesPerRequest = 64;
/** Most hashes in one blocks request. */
export const maxBlocksPerRequest = 32;
/** Skeleton points before the best (rskj maxSkeletonChunks). */
export const maxSkeletonChunks = 20;
/** An answer stops taking bodies or blocks past this many bytes; the asking side asks again for the rest. */
export const softAnswerBytes = 2 * 1024 * 1024;
/** Largest frame: under libp2p's 4 MiB stream read buffer with the length prefix and result byte. */
const maxFrameBytes = 4 * 1024 * 1024 - 64;

export interface SyncProtocols {
  readonly headers: RequestProtocol;
  readonly bodies: RequestProtocol;
  readonly blocks: RequestProtocol;
  readonly blockHash: RequestProtocol;
  readonly skeleton: RequestProtocol;
}

/** The protocols with the time a peer has to answer each request (rskj: 30 s). */
export function syncProtocols(timeoutMs: number): SyncProtocols {
  return {
    headers: { name: "headers", maxRequestBytes: 64, maxResponseBytes: 2 * 1024 * 1024, timeoutMs },
    bodies: { name: "bodies", maxRequestBytes: 3 + maxBodiesPerRequest * 33, maxResponseBytes: maxFrameBytes, timeoutMs },
    blocks: { name: "blocks", maxRequestBytes: 3 + maxBlocksPerRequest * 33, maxResponseBytes: maxFrameBytes, timeoutMs },
    blockHash: { name: "block-hash", maxRequestBytes: 16, maxResponseBytes: 64, timeoutMs },
    skeleton: { name: "skeleton", maxRequestBytes: 16, maxResponseBytes: 8 * 1024, timeoutMs },
  };
}

/** New blocks (RLP of the block's wire form) and pool transactions (one signed transaction). */
export const blockTopic: GossipTopic = { name: "block", maxMessageBytes: 8 * 1024 * 1024 };
export const transactionTopic: GossipTopic = { name: "tx", maxMessageBytes: 128 * 1024 };

function decode(bytes: Uint8Array, what: string): RlpDecoded {
  try {
    return decodeRlp(bytes) as RlpDecoded;
  } catch (error) {
    throw new MessageDecodingError(`${what} is not RLP: ${(error as Error).message}`);
  }
}

function list(item: RlpDecoded, what: string): RlpDecoded[] {
  if (!Array.isArray(item)) throw new MessageDecodingError(`${what} is not a list`);
  return item;
}

function hash(item: RlpDecoded | undefined, what: string): Uint8Array {
  if (!(item instanceof Uint8Array) || item.length !== 32) throw new MessageDecodingError(`${what} is not 32 bytes`);
  return item;
}

/** An unsigned integer of at most 8 bytes, canonical. */
function number(item: RlpDecoded | undefined, what: string): bigint {
  if (!(item instanceof Uint8Array) || item.length > 8) throw new MessageDecodingError(`${what} is not a number of at most 8 bytes`);
  if (item.length > 0 && item[0] === 0) throw new MessageDecodingError(`${what} has a leading zero byte`);
  let value = 0n;
  for (const byte of item) value = (value << 8n) | BigInt(byte);
  return value;
}

function hashes(bytes: Uint8Array, what: string, max: number): Uint8Array[] {
  const items = list(decode(bytes, what), what);
  if (items.length === 0) throw new MessageDecodingError(`${what} asks for nothing`);
  if (items.length > max) throw new MessageDecodingError(`${what} asks for ${items.length} items, more than ${max}`);
  return items.map((item, index) => hash(item, `${what} item ${index}`));
}

function header(encoded: Uint8Array, what: string): BlockHeader {
  try {
    return BlockHeader.decode(encoded);
  } catch (error) {
    throw new MessageDecodingError(`${what}: ${(error as Error).message}`);
  }
}

function listItems(bytes: Uint8Array, what: string): Uint8Array[] {
  try {
    return rlpListItems(bytes);
  } catch (error) {
    throw new MessageDecodingError(`${what} is not an RLP list: ${(error as Error).message}`);
  }
}

// headers/1: [startHash, count] -> [header...], walking parent links from startHash, newest first.

export function encodeHeadersRequest(startHash: Uint8Array, count: number): Uint8Array {
  return encodeRlp([startHash, count]);
}

export function decodeHeadersRequest(bytes: Uint8Array): { startHash: Uint8Array; count: number } {
  const [start, count, ...rest] = list(decode(bytes, "headers request"), "headers request");
  if (rest.length > 0) throw new MessageDecodingError("headers request has more than 2 items");
  const value = number(count, "headers count");
  if (value < 1n || value > BigInt(maxHeadersPerRequest)) throw new MessageDecodingError(`headers count ${value} is not in 1..${maxHeadersPerRequest}`);
  return { startHash: hash(start, "headers start hash"), count: Number(value) };
}

/** The answer of headers given by their full encodings (BlockHeader.encoded, or a stored header's bytes as they are). */
export function encodeHeadersAnswer(encodedHeaders: readonly Uint8Array[]): Uint8Array {
  return encodeRlpListOfEncoded(encodedHeaders);
}

export function decodeHeadersAnswer(bytes: Uint8Array, asked: number): BlockHeader[] {
  const items = listItems(bytes, "headers answer");
  if (items.length > asked) throw new MessageDecodingError(`${items.length} headers for ${asked} asked`);
  return items.map((item, index) => header(item, `header ${index}`));
}

// bodies/1: [hash...] -> [body or empty list...], in the order asked; may end early past softAnswerBytes.

export function encodeHashesRequest(requested: readonly Uint8Array[]): Uint8Array {
  return encodeRlp(requested as Uint8Array[]);
}

export function decodeBodiesRequest(bytes: Uint8Array): Uint8Array[] {
  return hashes(bytes, "bodies request", maxBodiesPerRequest);
}

export function decodeBlocksRequest(bytes: Uint8Array): Uint8Array[] {
  return hashes(bytes, "blocks request", maxBlocksPerRequest);
}

/** Entries that are each an RLP item already (a body, a block) or undefined for one not held (an empty list), stopped past the soft limit. */
export function encodeItemsAnswer(entries: readonly (Uint8Array | undefined)[]): Uint8Array {
  const items: Uint8Array[] = [];
  let size = 0;
  for (const entry of entries) {
    const item = entry ?? emptyList;
    if (items.length > 0 && size + item.length > softAnswerBytes) break;
    items.push(item);
    size += item.length;
  }
  return encodeRlpListOfEncoded(items);
}

const emptyList = Uint8Array.of(0xc0);

/** A body's parts, RLP-decoded, not yet checked. */
export interface WireBody {
  readonly transactionItems: readonly RlpDecoded[];
  readonly uncleItems: readonly RlpDecoded[];
}

export function decodeBodiesAnswer(bytes: Uint8Array, asked: number): (WireBody | undefined)[] {
  const entries = list(decode(bytes, "bodies answer"), "bodies answer");
  if (entries.length > asked) throw new MessageDecodingError(`${entries.length} bodies for ${asked} asked`);
  return entries.map((entry, index) => {
    const parts = list(entry, `body ${index}`);
    if (parts.length === 0) return undefined;
    if (parts.length !== 2) throw new MessageDecodingError(`body ${index} is not [transactions, uncles]`);
    return { transactionItems: list(parts[0]!, `body ${index} transactions`), uncleItems: list(parts[1]!, `body ${index} uncles`) };
  });
}

/** A body's transactions and uncles, senders still to recover; MessageDecodingError for what does not decode. */
export function signedBodyOf(body: WireBody, common: Common, typed: TypedTransactionsAccepted): BlockBody {
  return refusedAs("body", () => ({ transactions: decodeWireSignedTransactions(body.transactionItems, common, typed), uncles: decodeWireUncles(body.uncleItems) }));
}

/** What `decode` answers; its MalformedBlockError becomes a MessageDecodingError naming `what`. */
function refusedAs<T>(what: string, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof MalformedBlockError) throw new MessageDecodingError(`${what}: ${error.message}`);
    throw error;
  }
}

/** A block's wire form (blocks/1 answers, block gossip); MessageDecodingError for what does not decode. */
export function decodeBlock(bytes: Uint8Array, common: Common, typed: TypedTransactionsAccepted): Block {
  return refusedAs("block", () => Block.decode(bytes, common, typed));
}

export function decodeBlocksAnswer(bytes: Uint8Array, asked: number): (Uint8Array | undefined)[] {
  const items = listItems(bytes, "blocks answer");
  if (items.length > asked) throw new MessageDecodingError(`${items.length} blocks for ${asked} asked`);
  return items.map((item) => (item.length === 1 && item[0] === 0xc0 ? undefined : item));
}

// block-hash/1: [number] -> [hash] or [].

export function encodeNumberRequest(blockNumber: bigint): Uint8Array {
  return encodeRlp([blockNumber]);
}

export function decodeNumberRequest(bytes: Uint8Array, what: string): bigint {
  const items = list(decode(bytes, what), what);
  if (items.length !== 1) throw new MessageDecodingError(`${what} is not [number]`);
  return number(items[0], `${what} number`);
}

export function encodeBlockHashAnswer(blockHash: Uint8Array | undefined): Uint8Array {
  return encodeRlp(blockHash === undefined ? [] : [blockHash]);
}

export function decodeBlockHashAnswer(bytes: Uint8Array): Uint8Array | undefined {
  const items = list(decode(bytes, "block-hash answer"), "block-hash answer");
  if (items.length > 1) throw new MessageDecodingError("block-hash answer has more than one hash");
  return items.length === 0 ? undefined : hash(items[0], "block hash");
}

// skeleton/1: [startNumber] -> [[number, hash]...]: the canonical block every chunk from the chunk
// start at or below startNumber, at most maxSkeletonChunks, then the best.

export function encodeSkeletonAnswer(points: readonly { number: bigint; hash: Uint8Array }[]): Uint8Array {
  return encodeRlp(points.map((point) => [point.number, point.hash]));
}

export function decodeSkeletonAnswer(bytes: Uint8Array): { number: bigint; hash: Uint8Array }[] {
  const items = list(decode(bytes, "skeleton answer"), "skeleton answer");
  if (items.length > maxSkeletonChunks + 1) throw new MessageDecodingError(`a skeleton of ${items.length} points, more than ${maxSkeletonChunks + 1}`);
  return items.map((item, index) => {
    const pair = list(item, `skeleton point ${index}`);
    if (pair.length !== 2) throw new MessageDecodingError(`skeleton point ${index} is not [number, hash]`);
    return { number: number(pair[0], `skeleton point ${index} number`), hash: hash(pair[1], `skeleton point ${index} hash`) };
  });
}
