// Serialized parent-chain (Bitcoin) blocks and transactions, read from untrusted bytes: the
// mnr_submitParentBlock handler parses a pool's whole block with parseParentBlock (its coinbase and
// txids then make the compressed coinbase and the merkle branch); parseParentTransaction reads one
// transaction, such as the coinbase the other two submissions send.
// Transactions are read in both of Bitcoin's forms, legacy and segwit (BIP144: marker 0x00, flag
// 0x01, then a witness stack per input after the outputs); a txid hashes the form without witness.
// Every malformed input is a refusal naming what is wrong and at which byte of the bytes given, never
// an exception: a count or length is checked against the bytes left before anything is read or
// allocated for it, so a claimed count costs nothing. Compact sizes must use their shortest form, as
// Bitcoin Core requires ("non-canonical ReadCompactSize()"); the reference's bitcoinj accepts longer
// forms but hashes its own serialization, which writes the shortest: the bytes sent and the bytes
// hashed would differ.
// The answers never share memory with the bytes given (the caller may reuse its buffer): header and
// coinbase are copies, txids fresh hashes. Within a block, a legacy transaction is hashed through a
// view of the input, without a copy.
import { parentHeaderSize, sha256d } from "./parentChain.js";

export type ParentTransactionParse =
  | {
      ok: true;
      /** The transaction serialized without witness: the bytes its txid hashes (a copy). */
      withoutWitness: Uint8Array;
      /** SHA-256d of withoutWitness, internal byte order (as the merkle tree hashes it). */
      txid: Uint8Array;
      /** The offset just after the transaction in the bytes given. */
      end: number;
      /** Whether it came in the segwit form (marker and flag, witness stacks). */
      segwit: boolean;
    }
  | { ok: false; reason: string };

export type ParentBlockParse =
  | {
      ok: true;
      /** The 80-byte header (a copy). */
      header: Uint8Array;
      /**
       * Transaction 0 serialized without witness (a copy): its txid's bytes, from which the compressed
       * coinbase is made (network brief 8.2). The reference compresses what bitcoinj's
       * bitcoinSerialize() gives, which keeps the witness of a segwit coinbase (as read in
       * bitcoinj-thin), so it would refuse such a block at the merkle root; this node does not.
       */
      coinbase: Uint8Array;
      /** Every transaction's txid in block order, internal byte order. */
      txids: Uint8Array[];
    }
  | { ok: false; reason: string };

/** Where a transaction's parts are in the bytes given. */
interface TransactionLayout {
  start: number;
  end: number;
  segwit: boolean;
  /** Segwit only: from the input count to the end of the outputs (what follows marker and flag). */
  bodyStart: number;
  bodyEnd: number;
}

const outpointSize = 36;
const sequenceSize = 4;
const valueSize = 8;
const versionSize = 4;
const lockTimeSize = 4;
/** Outpoint, a script length of one byte, sequence: the least an input takes. */
const minInputSize = outpointSize + 1 + sequenceSize;
/** Value and a script length of one byte. */
const minOutputSize = valueSize + 1;
/** Version, one input, no output, lock time: the least any transaction this parser accepts takes. */
const minTransactionSize = versionSize + 1 + minInputSize + 1 + lockTimeSize;

/** A malformed input; thrown inside this module only and answered as a refusal. */
class MalformedParentData extends Error {}

/**
 * A part's name for a message: the first `#` in `what` replaced by `index` (an input or output), the
 * second by `item` (a witness item). Built only for a refusal: reading a well-formed block builds
 * no strings.
 */
function partName(what: string, index: number, item: number): string {
  return what.replace("#", String(index)).replace("#", String(item));
}

/** A cursor over the bytes given; offsets in messages are offsets in those bytes. */
class Reader {
  position: number;

  constructor(
    readonly bytes: Uint8Array,
    position: number,
  ) {
    this.position = position;
  }

  get left(): number {
    return this.bytes.length - this.position;
  }

  /** Moves past `count` bytes of `what`, or refuses when fewer are left. */
  skip(count: number, what: string, index = 0, item = 0): void {
    if (count > this.left) throw new MalformedParentData(`truncated: ${partName(what, index, item)} at byte ${this.position} needs ${count} bytes, ${this.left} left`);
    this.position += count;
  }

  /**
   * A compact size (1, 3, 5 or 9 bytes) counting items of at least `minItemSize` bytes each; refused
   * when not in its shortest form or when the bytes left could not hold that many items.
   */
  count(minItemSize: number, what: string, index = 0, item = 0): number {
    const at = this.position;
    const bytes = this.bytes;
    if (this.left < 1) throw new MalformedParentData(`truncated: ${partName(what, index, item)} at byte ${at} needs 1 byte, 0 left`);
    const first = bytes[at]!;
    let size: number;
    let value: number;
    let exact: bigint | undefined;
    if (first < 0xfd) {
      size = 1;
      value = first;
    } else {
      size = first === 0xfd ? 3 : first === 0xfe ? 5 : 9;
      if (this.left < size) throw new MalformedParentData(`truncated: ${partName(what, index, item)} at byte ${at} needs ${size} bytes, ${this.left} left`);
      if (size === 3) value = bytes[at + 1]! | (bytes[at + 2]! << 8);
      else if (size === 5) value = (bytes[at + 1]! | (bytes[at + 2]! << 8) | (bytes[at + 3]! << 16) | (bytes[at + 4]! << 24)) >>> 0;
      else {
        exact = new DataView(bytes.buffer, bytes.byteOffset + at + 1, 8).getBigUint64(0, true);
        // Exact below 2^53; anything larger is refused below whatever its rounding.
        value = Number(exact);
      }
      const smallest = size === 3 ? 0xfd : size === 5 ? 0x10000 : 0x100000000;
      if (value < smallest) throw new MalformedParentData(`${partName(what, index, item)} at byte ${at}: ${value} written in ${size} bytes, not in its shortest form`);
    }
    this.position = at + size;
    if (value * minItemSize > this.left) {
      const claimed = exact ?? BigInt(value);
      throw new MalformedParentData(`${partName(what, index, item)} at byte ${at} claims ${claimed}, more than the ${this.left} bytes left could hold`);
    }
    return value;
  }

  /** A compact-size length (named `what`), then that many bytes. */
  lengthPrefixed(what: string, index = 0, item = 0): void {
    const length = this.count(1, what, index, item);
    this.position += length;
  }
}

function readTransaction(reader: Reader): TransactionLayout {
  const start = reader.position;
  const bytes = reader.bytes;
  reader.skip(versionSize, "transaction version");
  let segwit = false;
  if (reader.left >= 1 && bytes[reader.position] === 0x00) {
    // An input count of 0 reads as the segwit marker (BIP144), the next byte as its flag, as Bitcoin
    // Core reads them; a transaction without inputs is never valid, so nothing valid is lost.
    const at = reader.position;
    if (reader.left < 2) throw new MalformedParentData(`truncated: segwit flag at byte ${at + 1} needs 1 byte, 0 left`);
    const flag = bytes[at + 1]!;
    if (flag !== 0x01) throw new MalformedParentData(`input count 0 at byte ${at}: not a segwit marker, the flag after it is 0x${flag.toString(16).padStart(2, "0")}, not 0x01`);
    reader.position = at + 2;
    segwit = true;
  }
  const bodyStart = reader.position;
  const inputCount = reader.count(minInputSize, "input count");
  if (inputCount === 0) throw new MalformedParentData(`segwit transaction at byte ${start} with no inputs (input count at byte ${bodyStart})`);
  for (let index = 0; index < inputCount; index++) {
    reader.skip(outpointSize, "input # outpoint", index);
    reader.lengthPrefixed("input # script length", index);
    reader.skip(sequenceSize, "input # sequence", index);
  }
  const outputCount = reader.count(minOutputSize, "output count");
  for (let index = 0; index < outputCount; index++) {
    reader.skip(valueSize, "output # value", index);
    reader.lengthPrefixed("output # script length", index);
  }
  const bodyEnd = reader.position;
  if (segwit) {
    let items = 0;
    for (let index = 0; index < inputCount; index++) {
      const itemCount = reader.count(1, "input # witness item count", index);
      items += itemCount;
      for (let item = 0; item < itemCount; item++) reader.lengthPrefixed("input # witness item # length", index, item);
    }
    // Bitcoin Core ("Superfluous witness record") and bitcoinjs-lib refuse the segwit form without witness data.
    if (items === 0) throw new MalformedParentData(`segwit transaction at byte ${start} with no witness items`);
  }
  reader.skip(lockTimeSize, "transaction lock time");
  return { start, end: reader.position, segwit, bodyStart, bodyEnd };
}

/** The transaction without witness: a view of the bytes when legacy, else version ‖ body ‖ lock time (copied). */
function withoutWitnessOf(bytes: Uint8Array, layout: TransactionLayout): Uint8Array {
  if (!layout.segwit) return bytes.subarray(layout.start, layout.end);
  const bodyLength = layout.bodyEnd - layout.bodyStart;
  const stripped = new Uint8Array(versionSize + bodyLength + lockTimeSize);
  stripped.set(bytes.subarray(layout.start, layout.start + versionSize), 0);
  stripped.set(bytes.subarray(layout.bodyStart, layout.bodyEnd), versionSize);
  stripped.set(bytes.subarray(layout.end - lockTimeSize, layout.end), versionSize + bodyLength);
  return stripped;
}

function refusal(error: unknown): { ok: false; reason: string } {
  if (error instanceof MalformedParentData) return { ok: false, reason: error.message };
  throw error;
}

/**
 * One transaction starting at `offset` (0 by default); the bytes may go on after it (`end` says
 * where it stopped). An offset outside the bytes is refused like a truncation.
 */
export function parseParentTransaction(bytes: Uint8Array, offset = 0): ParentTransactionParse {
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > bytes.length) {
    return { ok: false, reason: `transaction offset ${offset} outside the ${bytes.length} bytes given` };
  }
  try {
    const layout = readTransaction(new Reader(bytes, offset));
    const view = withoutWitnessOf(bytes, layout);
    const withoutWitness = layout.segwit ? view : view.slice();
    return { ok: true, withoutWitness, txid: sha256d(withoutWitness), end: layout.end, segwit: layout.segwit };
  } catch (error) {
    return refusal(error);
  }
}

/**
 * A whole block: the 80-byte header, a compact-size transaction count of at least 1, the
 * transactions, nothing after them. Whether transaction 0 is shaped as a coinbase (one input, the
 * null outpoint) is not checked: neither the merged-mining rule nor the reference asks for it.
 */
export function parseParentBlock(bytes: Uint8Array): ParentBlockParse {
  if (bytes.length < parentHeaderSize) {
    return { ok: false, reason: `truncated: block of ${bytes.length} bytes, shorter than its 80-byte header` };
  }
  const reader = new Reader(bytes, parentHeaderSize);
  let transactionIndex = -1;
  try {
    const transactionCount = reader.count(minTransactionSize, "transaction count");
    if (transactionCount === 0) return { ok: false, reason: `transaction count 0 at byte ${parentHeaderSize}: a block has at least its coinbase` };
    const txids = new Array<Uint8Array>(transactionCount);
    let coinbase: Uint8Array | undefined;
    for (transactionIndex = 0; transactionIndex < transactionCount; transactionIndex++) {
      const layout = readTransaction(reader);
      const withoutWitness = withoutWitnessOf(bytes, layout);
      txids[transactionIndex] = sha256d(withoutWitness);
      if (transactionIndex === 0) coinbase = layout.segwit ? withoutWitness : withoutWitness.slice();
    }
    transactionIndex = -1;
    if (reader.left > 0) {
      return { ok: false, reason: `${reader.left} bytes after the last of ${transactionCount} transactions, from byte ${reader.position}` };
    }
    return { ok: true, header: bytes.slice(0, parentHeaderSize), coinbase: coinbase!, txids };
  } catch (error) {
    const answer = refusal(error);
    if (transactionIndex >= 0) answer.reason = `transaction ${transactionIndex}: ${answer.reason}`;
    return answer;
  }
}
