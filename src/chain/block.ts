// A block: its header, its transactions (with their recovered senders) and its uncle headers,
// and the body encoding the store keeps. The block size is that of RLP([header, transactions, uncles]).
import type { Common } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import { BlockHeader } from "./header.js";
import { restoreTransaction, type ChainTransaction } from "./transactions.js";

export class Block {
  private encodedSize: number | undefined;

  constructor(
    readonly header: BlockHeader,
    readonly transactions: readonly ChainTransaction[],
    readonly uncles: readonly BlockHeader[] = [],
  ) {}

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
      const transactions = lengthOfList(this.transactions.reduce((sum, transaction) => sum + transaction.raw.length, 0));
      const uncles = lengthOfList(this.uncles.reduce((sum, uncle) => sum + uncle.encoded.length, 0));
      this.encodedSize = lengthOfList(this.header.encoded.length + transactions + uncles);
    }
    return this.encodedSize;
  }

  /** Stored body: RLP([[raw transaction...], [sender...], [uncle header...]]). */
  encodeBody(): Uint8Array {
    return RLP.encode([this.transactions.map((transaction) => transaction.raw), this.transactions.map((transaction) => transaction.sender), this.uncles.map((uncle) => uncle.encoded)]);
  }

  static decodeBody(header: BlockHeader, encodedBody: Uint8Array, common: Common): Block {
    const [raws, senders, uncles] = RLP.decode(encodedBody) as [Uint8Array[], Uint8Array[], Uint8Array[]];
    const transactions = raws.map((raw, index) => restoreTransaction(raw, senders[index]!, common));
    return new Block(header, transactions, uncles.map((uncle) => BlockHeader.decode(uncle)));
  }
}

/** Length of an RLP list whose items take `payloadLength` bytes. */
function lengthOfList(payloadLength: number): number {
  if (payloadLength < 56) return 1 + payloadLength;
  let lengthBytes = 0;
  for (let rest = payloadLength; rest > 0; rest = Math.floor(rest / 256)) lengthBytes++;
  return 1 + lengthBytes + payloadLength;
}
