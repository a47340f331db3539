// Chain objects -> their JSON-RPC shapes (spec section 2, reference-node fields; openrpc.json
// describes each). Pure functions. Typed transactions (--typed-transactions) carry their type's
// fields, as geth shows them; blocks carry baseFeePerGas (their minimum gas price) only on such a
// node, so that a legacy-only node's output stays the reference's.
import type { Block as BlockJson, Log as LogJson, Receipt as ReceiptJson, Transaction as TransactionJson } from "../../generated/types.js";
import type { Block } from "../chain/block.js";
import type { ChainLog, ChainReceipt } from "../chain/receipts.js";
import { effectiveGasPrice, type ChainTransaction, type ChainTx } from "../chain/transactions.js";
import type { BlockLogs, LocatedLog, TransactionLogs } from "../logs/index.js";
import { bytesToHex, toQuantity } from "../common/hex.js";

/** The reference's proof-of-work nonce placeholder. */
const zeroNonce = "0x0000000000000000";
/** As the reference since its release 7.1.0: Foundry (forge script, forge test --fork-url, cast run) refuses blocks without it. */
const zeroMixHash = `0x${"00".repeat(32)}`;

export interface TransactionPosition {
  blockHash: Uint8Array;
  blockNumber: bigint;
  index: number;
  /** The block's minimum gas price (its base fee): what a type 2 transaction's gas price is worked out from. */
  minimumGasPrice: bigint;
}

/** The access list in its JSON form. */
function accessListJson(tx: Exclude<ChainTx, { type: 0 }>): NonNullable<TransactionJson["accessList"]> {
  return tx.accessList.map(([address, storageKeys]) => ({ address: bytesToHex(address), storageKeys: storageKeys.map(bytesToHex) }));
}

/** The members every transaction type shows first, in the reference's order. */
function transactionBasics(transaction: ChainTransaction, position: TransactionPosition | undefined) {
  const { tx } = transaction;
  return {
    hash: bytesToHex(transaction.hash),
    nonce: toQuantity(tx.nonce),
    blockHash: position === undefined ? null : bytesToHex(position.blockHash),
    blockNumber: position === undefined ? null : toQuantity(position.blockNumber),
    transactionIndex: position === undefined ? null : toQuantity(position.index),
    from: bytesToHex(transaction.sender),
    to: tx.to === undefined ? null : bytesToHex(tx.to.bytes),
    gas: toQuantity(tx.gasLimit),
  };
}

export function formatTransaction(transaction: ChainTransaction, position: TransactionPosition | undefined): TransactionJson {
  const { tx } = transaction;
  if (tx.type !== 0) {
    const yParity = tx.v === 1n ? "0x1" : "0x0";
    return {
      ...transactionBasics(transaction, position),
      // A type 2 transaction's: what it paid once mined, its fee cap while pending (as geth).
      gasPrice: toQuantity(tx.type === 1 ? tx.gasPrice : position === undefined ? tx.maxFeePerGas : effectiveGasPrice(tx, position.minimumGasPrice)),
      ...(tx.type === 2 ? { maxFeePerGas: toQuantity(tx.maxFeePerGas), maxPriorityFeePerGas: toQuantity(tx.maxPriorityFeePerGas) } : {}),
      value: toQuantity(tx.value),
      input: bytesToHex(tx.data),
      accessList: accessListJson(tx),
      chainId: toQuantity(tx.chainId),
      v: yParity,
      r: toQuantity(tx.r!),
      s: toQuantity(tx.s!),
      yParity,
      type: tx.type === 1 ? "0x1" : "0x2",
    };
  }
  return {
    ...transactionBasics(transaction, position),
    gasPrice: toQuantity(tx.gasPrice),
    value: toQuantity(tx.value),
    input: bytesToHex(tx.data),
    // At least two digits, as the reference prints v ("0x1b", "0x65").
    v: `0x${tx.v!.toString(16).padStart(2, "0")}`,
    r: toQuantity(tx.r!),
    s: toQuantity(tx.s!),
    type: "0x0",
  };
}

/** `baseFeePerGas`: whether the block shows its minimum gas price as its base fee (a node started with --typed-transactions). */
export function formatBlock(block: Block, totalDifficulty: bigint, fullTransactions: boolean, baseFeePerGas = false): BlockJson {
  const fields = block.header.fields;
  const json: BlockJson = {
    number: toQuantity(fields.number),
    hash: bytesToHex(block.hash),
    parentHash: bytesToHex(fields.parentHash),
    nonce: zeroNonce,
    mixHash: zeroMixHash,
    sha3Uncles: bytesToHex(fields.unclesHash),
    logsBloom: bytesToHex(fields.logsBloom),
    transactionsRoot: bytesToHex(fields.transactionsRoot),
    stateRoot: bytesToHex(fields.stateRoot),
    receiptsRoot: bytesToHex(fields.receiptsRoot),
    miner: bytesToHex(fields.coinbase),
    difficulty: toQuantity(fields.difficulty),
    cumulativeDifficulty: toQuantity(block.cumulativeDifficulty),
    totalDifficulty: toQuantity(totalDifficulty),
    extraData: bytesToHex(fields.extraData),
    size: toQuantity(block.size),
    gasLimit: toQuantity(fields.gasLimit),
    gasUsed: toQuantity(fields.gasUsed),
    timestamp: toQuantity(fields.timestamp),
    transactions: fullTransactions
      ? block.transactions.map((transaction, index) => formatTransaction(transaction, { blockHash: block.hash, blockNumber: block.number, index, minimumGasPrice: fields.minimumGasPrice }))
      : block.transactions.map((transaction) => bytesToHex(transaction.hash)),
    uncles: block.uncles.map((uncle) => bytesToHex(uncle.hash)),
    minimumGasPrice: toQuantity(fields.minimumGasPrice),
    hashForMergedMining: bytesToHex(block.header.hashForMergedMining),
    paidFees: toQuantity(fields.paidFees),
    parentMergedMiningHeader: bytesToHex(fields.mergedMiningHeader),
    parentMergedMiningCoinbaseTransaction: bytesToHex(fields.mergedMiningCoinbaseTransaction),
    parentMergedMiningMerkleProof: bytesToHex(fields.mergedMiningMerkleProof),
  };
  if (baseFeePerGas) json.baseFeePerGas = json.minimumGasPrice;
  return json;
}

/** What a log shares with the other logs of its transaction, as wire strings. */
interface LogPlace {
  readonly blockHash: string;
  readonly blockNumber: string;
  readonly transactionHash: string;
  readonly transactionIndex: string;
}

function formatLog(log: ChainLog, logIndex: number, place: LogPlace, removed: boolean): LogJson {
  const strings = stringsOf(log);
  return {
    removed,
    logIndex: toQuantity(logIndex),
    transactionIndex: place.transactionIndex,
    transactionHash: place.transactionHash,
    blockHash: place.blockHash,
    blockNumber: place.blockNumber,
    address: strings.address,
    data: strings.data,
    topics: strings.topics,
  };
}

/** A log's own wire strings. */
interface LogStrings {
  readonly address: string;
  readonly data: string;
  readonly topics: LogJson["topics"];
}

// Wire strings of logs and of their transactions' places, made once per object: logs held by the
// chain's caches and the recent-block index are served many times (filters, repeated queries), and
// hex conversion is most of the cost of answering them. Entries go when the objects do.
const logStrings = new WeakMap<ChainLog, LogStrings>();
const placeStrings = new WeakMap<TransactionLogs, LogPlace>();

function stringsOf(log: ChainLog): LogStrings {
  let strings = logStrings.get(log);
  if (strings === undefined) {
    strings = { address: bytesToHex(log.address), data: bytesToHex(log.data), topics: log.topics.map(bytesToHex) as LogJson["topics"] };
    logStrings.set(log, strings);
  }
  return strings;
}

function placeOf(block: BlockLogs, transaction: TransactionLogs): LogPlace {
  let place = placeStrings.get(transaction);
  if (place === undefined) {
    place = { blockHash: bytesToHex(block.hash), blockNumber: toQuantity(block.number), transactionHash: bytesToHex(transaction.hash), transactionIndex: toQuantity(transaction.index) };
    placeStrings.set(transaction, place);
  }
  return place;
}

/** Logs found by a query or a filter, in their order. */
export function formatLocatedLogs(logs: readonly LocatedLog[]): LogJson[] {
  const result = new Array<LogJson>(logs.length);
  for (let index = 0; index < logs.length; index++) {
    const { block, transaction, log, logIndex, removed } = logs[index]!;
    result[index] = formatLog(log, logIndex, placeOf(block, transaction), removed);
  }
  return result;
}

// Each log of a block as its JSON text (removed: false), made once per transaction record: an
// answer of logs is then these texts joined, with no objects to build and serialise. The log index
// prepares them for blocks it has just indexed (BlockLogIndex.setPreparation), in the turns after
// mining, so the first query over new blocks finds them ready; a query makes those it lacks. Keyed
// by the record, so a block that leaves the chain (revert, reorganisation) takes its texts with
// it, and a block mined again at the same height is a new record. The texts prepared are kept for
// the most recent logs only (preparedTextChars); those made by queries go with their records.
const logTexts = new WeakMap<TransactionLogs, readonly string[]>();
/** Most characters of prepared texts kept; past it those of the oldest prepared records go. */
const preparedTextChars = 16 * 1024 * 1024;
/** The records prepared and the characters of their texts, oldest first from `preparedStart`. */
let prepared: TransactionLogs[] = [];
let preparedCharCounts: number[] = [];
let preparedStart = 0;
let preparedChars = 0;

/** The ASCII bytes of a fixed text. */
const asciiBytes = (text: string): Uint8Array => Uint8Array.from(text, (character) => character.charCodeAt(0));
const logStartPiece = asciiBytes('{"removed":false,"logIndex":"0x');
const transactionIndexPiece = asciiBytes('","transactionIndex":"0x');
const transactionHashPiece = asciiBytes('","transactionHash":"0x');
const blockHashPiece = asciiBytes('","blockHash":"0x');
const blockNumberPiece = asciiBytes('","blockNumber":"0x');
const addressPiece = asciiBytes('","address":"0x');
const dataPiece = asciiBytes('","data":"0x');
const topicsPiece = asciiBytes('","topics":[');
const hexDigitCodes = asciiBytes("0123456789abcdef");
/** Bytes of a log's text besides its quantities' digits and its hex data: the pieces and the closing `]}`. */
const fixedPieceBytes = [logStartPiece, transactionIndexPiece, transactionHashPiece, blockHashPiece, blockNumberPiece, addressPiece, dataPiece, topicsPiece].reduce((sum, piece) => sum + piece.length, 2);
/** Most hex digits of a log index (a safe integer). */
const logIndexDigitsBound = 14;

/**
 * Where a log's text is written as bytes before it becomes one string. Made of pieces and joined,
 * a text cost a string per piece and one per byte of hex (bytesToHex appends), several kilobytes
 * of young objects a log for every mined block with logs. Grown for a long log; one that would
 * need more than textBytesKept bytes gets a buffer of its own.
 */
let textBytes = Buffer.allocUnsafe(2048);
const textBytesKept = 64 * 1024;

function writePiece(out: Uint8Array, at: number, piece: Uint8Array): number {
  out.set(piece, at);
  return at + piece.length;
}

/** Two lower-case hex digits per byte, as bytesToHex writes them after its 0x. */
function writeHexDigits(out: Uint8Array, at: number, bytes: Uint8Array): number {
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index]!;
    out[at++] = hexDigitCodes[byte >>> 4]!;
    out[at++] = hexDigitCodes[byte & 15]!;
  }
  return at;
}

/** The digits of a QUANTITY, as toQuantity writes them after its 0x. */
function writeQuantityDigits(out: Uint8Array, at: number, digits: string): number {
  for (let index = 0; index < digits.length; index++) out[at++] = digits.charCodeAt(index);
  return at;
}

/** The texts of the transaction's logs, as JSON.stringify writes formatLog's objects (removed: false). */
function makeLogTexts(block: BlockLogs, transaction: TransactionLogs): string[] {
  const transactionIndexDigits = transaction.index.toString(16);
  const blockNumberDigits = block.number.toString(16);
  const texts = new Array<string>(transaction.logs.length);
  for (let offset = 0; offset < transaction.logs.length; offset++) {
    const log = transaction.logs[offset]!;
    let topicBytes = 0;
    for (const topic of log.topics) topicBytes += 4 + 2 * topic.length;
    const length =
      fixedPieceBytes + logIndexDigitsBound + transactionIndexDigits.length + blockNumberDigits.length + 2 * (transaction.hash.length + block.hash.length + log.address.length + log.data.length) + topicBytes;
    let out = textBytes;
    if (length > out.length) {
      out = Buffer.allocUnsafe(length);
      if (length <= textBytesKept) textBytes = out;
    }
    let at = writePiece(out, 0, logStartPiece);
    at = writeQuantityDigits(out, at, (transaction.firstLogIndex + offset).toString(16));
    at = writePiece(out, at, transactionIndexPiece);
    at = writeQuantityDigits(out, at, transactionIndexDigits);
    at = writePiece(out, at, transactionHashPiece);
    at = writeHexDigits(out, at, transaction.hash);
    at = writePiece(out, at, blockHashPiece);
    at = writeHexDigits(out, at, block.hash);
    at = writePiece(out, at, blockNumberPiece);
    at = writeQuantityDigits(out, at, blockNumberDigits);
    at = writePiece(out, at, addressPiece);
    at = writeHexDigits(out, at, log.address);
    at = writePiece(out, at, dataPiece);
    at = writeHexDigits(out, at, log.data);
    at = writePiece(out, at, topicsPiece);
    for (let index = 0; index < log.topics.length; index++) {
      if (index > 0) out[at++] = 0x2c; // ,
      out[at++] = 0x22; // "
      out[at++] = 0x30; // 0
      out[at++] = 0x78; // x
      at = writeHexDigits(out, at, log.topics[index]!);
      out[at++] = 0x22;
    }
    out[at++] = 0x5d; // ]
    out[at++] = 0x7d; // }
    texts[offset] = out.toString("latin1", 0, at);
  }
  return texts;
}

function logTextsOf(block: BlockLogs, transaction: TransactionLogs): readonly string[] {
  let texts = logTexts.get(transaction);
  if (texts === undefined) {
    texts = makeLogTexts(block, transaction);
    logTexts.set(transaction, texts);
  }
  return texts;
}

/** Makes the texts of a block's logs ahead of queries (see logTexts), keeping preparedTextChars at most. */
export function prepareLogTexts(block: BlockLogs): void {
  for (const transaction of block.transactions) {
    if (logTexts.has(transaction)) continue;
    const texts = makeLogTexts(block, transaction);
    logTexts.set(transaction, texts);
    let chars = 0;
    for (const text of texts) chars += text.length;
    prepared.push(transaction);
    preparedCharCounts.push(chars);
    preparedChars += chars;
  }
  while (preparedChars > preparedTextChars && preparedStart < prepared.length) {
    preparedChars -= preparedCharCounts[preparedStart]!;
    logTexts.delete(prepared[preparedStart]!);
    preparedStart++;
  }
  // Those let go leave the lists in one cut now and then: a cut per block copied the whole lists each time.
  if (preparedStart >= 1024 && preparedStart * 2 >= prepared.length) {
    prepared = prepared.slice(preparedStart);
    preparedCharCounts = preparedCharCounts.slice(preparedStart);
    preparedStart = 0;
  }
}

/** Answers of logs longer than this are handed over as bytes (see encodeLocatedLogs). */
const logBytesMinChars = 64 * 1024;

/**
 * Logs found by a query, in their order, as the JSON text of formatLocatedLogs' answer (byte for
 * byte), for the dispatcher to splice in (EncodedJson). The texts are joined once; a long answer
 * is handed over as its bytes (the texts are ASCII), which the dispatcher writes out as they are,
 * with no part to measure or encode again (a 1,000-log answer is some 600 kB).
 */
export function encodeLocatedLogs(logs: readonly LocatedLog[]): string | Uint8Array {
  const texts = new Array<string>(logs.length);
  for (let index = 0; index < logs.length; index++) {
    const located = logs[index]!;
    const { transaction } = located;
    texts[index] = located.removed ? JSON.stringify(formatLocatedLogs([located])[0]) : logTextsOf(located.block, transaction)[located.logIndex - transaction.firstLogIndex]!;
  }
  const text = `[${texts.join(",")}]`;
  return text.length < logBytesMinChars ? text : Buffer.from(text, "latin1");
}

/** The receipt of the transaction at `index` of `block`; log indexes count from the block's first log. */
export function formatReceipt(block: Block, receipts: readonly ChainReceipt[], index: number): ReceiptJson {
  const transaction = block.transactions[index]!;
  const receipt = receipts[index]!;
  const place: LogPlace = { blockHash: bytesToHex(block.hash), blockNumber: toQuantity(block.number), transactionHash: bytesToHex(transaction.hash), transactionIndex: toQuantity(index) };
  let firstLogIndex = 0;
  for (let earlier = 0; earlier < index; earlier++) firstLogIndex += receipts[earlier]!.logs.length;
  return {
    transactionHash: bytesToHex(transaction.hash),
    transactionIndex: toQuantity(index),
    blockHash: bytesToHex(block.hash),
    blockNumber: toQuantity(block.number),
    from: bytesToHex(transaction.sender),
    to: transaction.tx.to === undefined ? null : bytesToHex(transaction.tx.to.bytes),
    cumulativeGasUsed: toQuantity(receipt.cumulativeGasUsed),
    gasUsed: toQuantity(receipt.gasUsed),
    contractAddress: receipt.contractAddress === undefined ? null : bytesToHex(receipt.contractAddress),
    logs: receipt.logs.map((log, offset) => formatLog(log, firstLogIndex + offset, place, false)),
    logsBloom: bytesToHex(receipt.logsBloom),
    status: receipt.success ? "0x1" : "0x0",
    effectiveGasPrice: toQuantity(effectiveGasPrice(transaction.tx, block.header.fields.minimumGasPrice)),
    type: transaction.tx.type === 0 ? "0x0" : transaction.tx.type === 1 ? "0x1" : "0x2",
  };
}
