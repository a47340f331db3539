// The codecs of the sync's request/response protocols (sync/messages.ts): every request and answer
// round-trips, and every limit holds at N and breaks at N + 1 with a MessageDecodingError naming the
// problem. Headers, bodies and blocks come from a real chain mined in chain services.
import { expect } from "chai";
import { Block, MalformedBlockError, withSigners } from "../../../src/chain/block.js";
import { encodeRlp, encodeRlpListOfEncoded, rlpListItems } from "../../../src/common/rlp.js";
import { recoverSignerKeyIfAny } from "../../../src/common/signatures.js";
import type { ChainServices } from "../../../src/node/index.js";
import {
  decodeBlock,
  decodeBlockHashAnswer,
  decodeBlocksAnswer,
  decodeBlocksRequest,
  decodeBodiesAnswer,
  decodeBodiesRequest,
  decodeHeadersAnswer,
  decodeHeadersRequest,
  decodeNumberRequest,
  decodeSkeletonAnswer,
  encodeBlockHashAnswer,
  encodeHashesRequest,
  encodeHeadersAnswer,
  encodeHeadersRequest,
  encodeItemsAnswer,
  encodeNumberRequest,
  encodeSkeletonAnswer,
  maxBlocksPerRequest,
  maxBodiesPerRequest,
  maxHeadersPerRequest,
  maxSkeletonChunks,
  MessageDecodingError,
  signedBodyOf,
  softAnswerBytes,
  syncProtocols,
} from "../../../src/sync/messages.js";
import { mineBlocks, openTestChain, signedTransfer } from "../../helpers/chainPair.js";

const stranger = "0x00000000000000000000000000000000000000aa";

function hashOf(seed: number, length = 32): Uint8Array {
  return new Uint8Array(length).fill(seed);
}

function hashes(count: number): Uint8Array[] {
  return Array.from({ length: count }, (_, index) => hashOf(index + 1));
}

/** `decode` throws MessageDecodingError whose message matches `pattern`. */
function expectRefused(decode: () => unknown, pattern: RegExp): void {
  let thrown: unknown;
  try {
    decode();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, "a MessageDecodingError").to.be.instanceOf(MessageDecodingError);
  expect((thrown as Error).message).to.match(pattern);
}

/** Bytes that are no RLP item: a long-string prefix announcing more bytes than follow. */
const notRlp = Uint8Array.of(0xb9, 0xff, 0xff, 0x01);
/** An RLP string of two bytes with a leading zero: 5 written non-canonically. */
const leadingZeroFive = Uint8Array.of(0x82, 0x00, 0x05);

describe("sync messages: codecs and their limits", function () {
  this.timeout(30_000);
  let services: ChainServices;
  let blocks: Block[];

  before(async () => {
    services = await openTestChain();
    let nonce = 0;
    blocks = await mineBlocks(services, 3, async () => [await signedTransfer(services, "cow", nonce++, stranger), await signedTransfer(services, "cow", nonce++, stranger, 7n)]);
  });
  after(async () => services.close());

  describe("headers/1", () => {
    it("a request round-trips, count 1 and 192", () => {
      for (const count of [1, maxHeadersPerRequest]) expect(decodeHeadersRequest(encodeHeadersRequest(hashOf(7), count))).to.deep.equal({ startHash: hashOf(7), count });
    });

    it("a count of 0 or 193 is refused", () => {
      expectRefused(() => decodeHeadersRequest(encodeHeadersRequest(hashOf(7), 0)), /headers count 0 is not in 1\.\.192/);
      expectRefused(() => decodeHeadersRequest(encodeHeadersRequest(hashOf(7), maxHeadersPerRequest + 1)), /headers count 193 is not in 1\.\.192/);
    });

    it("a start hash of 31 or 33 bytes is refused", () => {
      expectRefused(() => decodeHeadersRequest(encodeHeadersRequest(hashOf(7, 31), 1)), /headers start hash is not 32 bytes/);
      expectRefused(() => decodeHeadersRequest(encodeHeadersRequest(hashOf(7, 33), 1)), /headers start hash is not 32 bytes/);
    });

    it("a count with a leading zero byte, a count of 9 bytes, a third item, a non-list and non-RLP bytes are refused", () => {
      expectRefused(() => decodeHeadersRequest(encodeRlpListOfEncoded([encodeRlp(hashOf(7)), leadingZeroFive])), /headers count has a leading zero byte/);
      expectRefused(() => decodeHeadersRequest(encodeRlp([hashOf(7), new Uint8Array(9).fill(1)])), /headers count is not a number of at most 8 bytes/);
      expectRefused(() => decodeHeadersRequest(encodeRlp([hashOf(7), 1, 1])), /more than 2 items/);
      expectRefused(() => decodeHeadersRequest(encodeRlp(hashOf(7))), /headers request is not a list/);
      expectRefused(() => decodeHeadersRequest(notRlp), /headers request is not RLP/);
    });

    it("an answer round-trips the real headers, hashes and all; more headers than asked are refused", () => {
      const headers = blocks.map((block) => block.header).reverse();
      const answer = encodeHeadersAnswer(headers.map((header) => header.encoded));
      const decoded = decodeHeadersAnswer(answer, 3);
      expect(decoded.map((header) => Buffer.from(header.hash).toString("hex"))).to.deep.equal(headers.map((header) => Buffer.from(header.hash).toString("hex")));
      expect(decoded.map((header) => header.number)).to.deep.equal([3n, 2n, 1n]);
      expect(decodeHeadersAnswer(encodeHeadersAnswer([]), 1)).to.deep.equal([]);
      expectRefused(() => decodeHeadersAnswer(answer, 2), /3 headers for 2 asked/);
    });

    it("an answer with a header that is not one, or that is no RLP list, is refused", () => {
      expectRefused(() => decodeHeadersAnswer(encodeRlp([[1, 2, 3]]), 1), /header 0: malformed block header/);
      expectRefused(() => decodeHeadersAnswer(notRlp, 1), /headers answer is not an RLP list/);
      expectRefused(() => decodeHeadersAnswer(encodeRlp(hashOf(1)), 1), /headers answer is not an RLP list/);
    });
  });

  for (const [name, decodeRequest, max] of [
    ["bodies", decodeBodiesRequest, maxBodiesPerRequest],
    ["blocks", decodeBlocksRequest, maxBlocksPerRequest],
  ] as const) {
    describe(`${name}/1 requests`, () => {
      it(`${max} hashes round-trip and fit the protocol's request size; ${max + 1} are refused`, () => {
        const request = encodeHashesRequest(hashes(max));
        expect(decodeRequest(request)).to.deep.equal(hashes(max));
        expect(request.length).to.be.at.most(syncProtocols(1_000)[name].maxRequestBytes);
        expectRefused(() => decodeRequest(encodeHashesRequest(hashes(max + 1))), new RegExp(`${name} request asks for ${max + 1} items, more than ${max}`));
      });

      it("no hashes, a hash of 31 or 33 bytes, a nested list and non-RLP bytes are refused", () => {
        expectRefused(() => decodeRequest(encodeHashesRequest([])), new RegExp(`${name} request asks for nothing`));
        expectRefused(() => decodeRequest(encodeHashesRequest([hashOf(1), hashOf(2, 31)])), new RegExp(`${name} request item 1 is not 32 bytes`));
        expectRefused(() => decodeRequest(encodeHashesRequest([hashOf(2, 33)])), new RegExp(`${name} request item 0 is not 32 bytes`));
        expectRefused(() => decodeRequest(encodeRlp([[hashOf(1)]])), new RegExp(`${name} request item 0 is not 32 bytes`));
        expectRefused(() => decodeRequest(notRlp), new RegExp(`${name} request is not RLP`));
      });
    });
  }

  describe("bodies/1 and blocks/1 answers", () => {
    it("bodies round-trip with their transactions (senders recovered) and an empty entry for a block not held", () => {
      const answer = encodeItemsAnswer([blocks[0]!.encodeWireBody(), undefined, blocks[2]!.encodeWireBody()]);
      const decoded = decodeBodiesAnswer(answer, 3);
      expect(decoded).to.have.length(3);
      expect(decoded[1]).to.equal(undefined);
      for (const index of [0, 2]) {
        const signed = signedBodyOf(decoded[index]!, services.common, false);
        const body = { transactions: withSigners(signed.transactions, signed.transactions.map((transaction) => recoverSignerKeyIfAny(transaction.signature))), uncles: signed.uncles };
        const original = blocks[index]!;
        expect(body.transactions.map((transaction) => Buffer.from(transaction.hash).toString("hex"))).to.deep.equal(original.transactions.map((transaction) => Buffer.from(transaction.hash).toString("hex")));
        expect(body.transactions.map((transaction) => Buffer.from(transaction.sender).toString("hex"))).to.deep.equal(original.transactions.map((transaction) => Buffer.from(transaction.sender).toString("hex")));
        expect(body.uncles).to.deep.equal([]);
      }
    });

    it("a bodies answer longer than asked, or with a body not [transactions, uncles], or with a transaction that does not decode, is refused", () => {
      const answer = encodeItemsAnswer([blocks[0]!.encodeWireBody(), blocks[1]!.encodeWireBody()]);
      expectRefused(() => decodeBodiesAnswer(answer, 1), /2 bodies for 1 asked/);
      expectRefused(() => decodeBodiesAnswer(encodeRlp([[[], [], []]]), 1), /body 0 is not \[transactions, uncles\]/);
      expectRefused(() => decodeBodiesAnswer(encodeRlp([hashOf(1)]), 1), /body 0 is not a list/);
      expectRefused(() => decodeBodiesAnswer(encodeRlp([[hashOf(1), []]]), 1), /body 0 transactions is not a list/);
      expectRefused(() => decodeBodiesAnswer(notRlp, 1), /bodies answer is not RLP/);
      const [broken] = decodeBodiesAnswer(encodeRlp([[[[1, 2, 3]], []]]), 1);
      expectRefused(() => signedBodyOf(broken!, services.common, false), /body: transaction 0/);
    });

    it("a body's transactions take their signers' keys; one without a signer is refused, naming the transaction", () => {
      const [decoded] = decodeBodiesAnswer(encodeItemsAnswer([blocks[0]!.encodeWireBody()]), 1);
      const signed = () => signedBodyOf(decoded!, services.common, false).transactions;
      const keys = signed().map((transaction) => recoverSignerKeyIfAny(transaction.signature));
      expect(keys.length).to.be.greaterThan(0);
      expect(withSigners(signed(), keys)).to.have.length(keys.length);
      const lastIndex = keys.length - 1;
      expect(() => withSigners(signed(), keys.map((key, index) => (index === lastIndex ? undefined : key)))).to.throw(MalformedBlockError, new RegExp(`^transaction ${lastIndex}: invalid transaction signature$`));
    });

    it("blocks round-trip, hashes and senders; an empty entry is a block not held; more than asked is refused", () => {
      const answer = encodeItemsAnswer([blocks[1]!.encode(), undefined]);
      const [first, second] = decodeBlocksAnswer(answer, 2);
      expect(second).to.equal(undefined);
      const block = decodeBlock(first!, services.common, false);
      expect(Buffer.from(block.hash).toString("hex")).to.equal(Buffer.from(blocks[1]!.hash).toString("hex"));
      expect(block.transactions.map((transaction) => Buffer.from(transaction.sender).toString("hex"))).to.deep.equal(blocks[1]!.transactions.map((transaction) => Buffer.from(transaction.sender).toString("hex")));
      expectRefused(() => decodeBlocksAnswer(answer, 1), /2 blocks for 1 asked/);
      expectRefused(() => decodeBlocksAnswer(notRlp, 1), /blocks answer is not an RLP list/);
    });

    it("a block that does not decode is refused as a message, not another error", () => {
      expectRefused(() => decodeBlock(notRlp, services.common, false), /block: not RLP/);
      expectRefused(() => decodeBlock(encodeRlp([[], []]), services.common, false), /block: a block is an RLP list of a header/);
      const encoded = blocks[0]!.encode();
      // The header's list cut to 18 fields.
      const [header, transactions, uncles] = rlpListItems(encoded);
      const shortHeader = encodeRlpListOfEncoded(rlpListItems(header!).slice(0, 18));
      expectRefused(() => decodeBlock(encodeRlpListOfEncoded([shortHeader, transactions!, uncles!]), services.common, false), /block: the header: malformed block header/);
    });

    it("an items answer stops before passing the 2 MiB soft limit, and always keeps the first item", () => {
      const item = (bytes: number) => encodeRlp(new Uint8Array(bytes - 4).fill(0xaa));
      const quarter = item(softAnswerBytes / 4);
      expect(quarter.length).to.equal(softAnswerBytes / 4);
      // Four quarters make exactly the soft limit: all four go; the fifth does not.
      const five = decodeBlocksAnswer(encodeItemsAnswer([quarter, quarter, quarter, quarter, quarter]), 5);
      expect(five).to.have.length(4);
      // One byte over: the fourth stays out.
      const bigger = item(softAnswerBytes / 4 + 1);
      expect(decodeBlocksAnswer(encodeItemsAnswer([quarter, quarter, quarter, bigger]), 4)).to.have.length(3);
      // A first item over the limit on its own still goes, alone.
      const huge = item(softAnswerBytes + 1_000);
      const alone = decodeBlocksAnswer(encodeItemsAnswer([huge, quarter]), 2);
      expect(alone).to.have.length(1);
      expect(alone[0]!.length).to.equal(huge.length);
      // Empty entries count by their one byte.
      expect(decodeBlocksAnswer(encodeItemsAnswer([undefined, undefined]), 2)).to.deep.equal([undefined, undefined]);
    });
  });

  describe("block-hash/1", () => {
    it("a number request round-trips, 0 and the largest 8-byte number", () => {
      for (const number of [0n, 1n, 127n, 128n, 2n ** 64n - 1n]) expect(decodeNumberRequest(encodeNumberRequest(number), "block-hash request")).to.equal(number);
    });

    it("a number with a leading zero byte, of 9 bytes, two numbers, no list and non-RLP bytes are refused", () => {
      expectRefused(() => decodeNumberRequest(encodeRlpListOfEncoded([leadingZeroFive]), "block-hash request"), /block-hash request number has a leading zero byte/);
      // Zero written as the byte 0x00 rather than the empty string.
      expectRefused(() => decodeNumberRequest(encodeRlpListOfEncoded([Uint8Array.of(0x00)]), "block-hash request"), /block-hash request number has a leading zero byte/);
      expectRefused(() => decodeNumberRequest(encodeNumberRequest(2n ** 64n), "block-hash request"), /block-hash request number is not a number of at most 8 bytes/);
      expectRefused(() => decodeNumberRequest(encodeRlp([1, 2]), "block-hash request"), /block-hash request is not \[number\]/);
      expectRefused(() => decodeNumberRequest(encodeRlp(5), "skeleton request"), /skeleton request is not a list/);
      expectRefused(() => decodeNumberRequest(notRlp, "skeleton request"), /skeleton request is not RLP/);
    });

    it("an answer round-trips a hash or none; two hashes or a hash of 31 or 33 bytes are refused", () => {
      expect(decodeBlockHashAnswer(encodeBlockHashAnswer(hashOf(3)))).to.deep.equal(hashOf(3));
      expect(decodeBlockHashAnswer(encodeBlockHashAnswer(undefined))).to.equal(undefined);
      expect(encodeBlockHashAnswer(hashOf(3)).length).to.be.at.most(syncProtocols(1_000).blockHash.maxResponseBytes);
      expectRefused(() => decodeBlockHashAnswer(encodeRlp([hashOf(1), hashOf(2)])), /block-hash answer has more than one hash/);
      expectRefused(() => decodeBlockHashAnswer(encodeRlp([hashOf(1, 31)])), /block hash is not 32 bytes/);
      expectRefused(() => decodeBlockHashAnswer(encodeRlp([hashOf(1, 33)])), /block hash is not 32 bytes/);
      expectRefused(() => decodeBlockHashAnswer(notRlp), /block-hash answer is not RLP/);
    });
  });

  describe("skeleton/1", () => {
    const points = (count: number) => Array.from({ length: count }, (_, index) => ({ number: BigInt(index * 192), hash: hashOf(index + 1) }));

    it(`${maxSkeletonChunks + 1} points round-trip and fit the answer size; ${maxSkeletonChunks + 2} are refused`, () => {
      const answer = encodeSkeletonAnswer(points(maxSkeletonChunks + 1));
      expect(decodeSkeletonAnswer(answer)).to.deep.equal(points(maxSkeletonChunks + 1));
      expect(answer.length).to.be.at.most(syncProtocols(1_000).skeleton.maxResponseBytes);
      expectRefused(() => decodeSkeletonAnswer(encodeSkeletonAnswer(points(maxSkeletonChunks + 2))), /a skeleton of 22 points, more than 21/);
    });

    it("a point not [number, hash], a hash of 31 or 33 bytes, a number with a leading zero and non-RLP bytes are refused", () => {
      expectRefused(() => decodeSkeletonAnswer(encodeRlp([[1]])), /skeleton point 0 is not \[number, hash\]/);
      expectRefused(() => decodeSkeletonAnswer(encodeRlp([[0, hashOf(1)], [192, hashOf(2, 31)]])), /skeleton point 1 hash is not 32 bytes/);
      expectRefused(() => decodeSkeletonAnswer(encodeRlp([[0, hashOf(2, 33)]])), /skeleton point 0 hash is not 32 bytes/);
      expectRefused(() => decodeSkeletonAnswer(encodeRlpListOfEncoded([encodeRlpListOfEncoded([leadingZeroFive, encodeRlp(hashOf(1))])])), /skeleton point 0 number has a leading zero byte/);
      expectRefused(() => decodeSkeletonAnswer(encodeRlp([hashOf(1)])), /skeleton point 0 is not a list/);
      expectRefused(() => decodeSkeletonAnswer(notRlp), /skeleton answer is not RLP/);
    });
  });

  it("every protocol's largest request fits its own size limit", () => {
    const protocols = syncProtocols(1_000);
    expect(encodeHeadersRequest(hashOf(0xff), maxHeadersPerRequest).length).to.be.at.most(protocols.headers.maxRequestBytes);
    expect(encodeNumberRequest(2n ** 64n - 1n).length).to.be.at.most(protocols.blockHash.maxRequestBytes);
    expect(encodeNumberRequest(2n ** 64n - 1n).length).to.be.at.most(protocols.skeleton.maxRequestBytes);
    // A full answer of 192 of these headers (merged-mining fields and all) fits its answer limit.
    const full = encodeHeadersAnswer(Array.from({ length: maxHeadersPerRequest }, () => blocks[0]!.header.encoded));
    expect(full.length).to.be.at.most(protocols.headers.maxResponseBytes);
  });
});
