// The compressed coinbase: its layout, and the txid computed from it against bitcoinjs-lib's.
import { expect } from "chai";
import { sha256 } from "@noble/hashes/sha2.js";
import {
  coinbaseTxidFromCompressed,
  compressCoinbase,
  compressCoinbaseWithTxid,
  decodeCompressedCoinbase,
  encodeCompressedCoinbase,
  lastIndexOfBytes,
  mergedMiningTag,
} from "../../../src/consensus/compressedCoinbase.js";
import { sha256d } from "../../../src/consensus/parentChain.js";
import { sha256FromMidstate, sha256MidstateAfter, wordsToBytes } from "../../../src/consensus/sha256Midstate.js";
import { commitmentTo, createCoinbaseTransaction, opReturnScript, serializeWithoutWitness } from "../../helpers/parentChainProofs.js";

const hashForMergedMining = Uint8Array.from({ length: 32 }, (_, index) => 0xa0 + index);
const payToPubkey = Uint8Array.from([0x21, 0x02, ...new Uint8Array(32).fill(7), 0xac]);

function txidFromCompression(coinbase: Uint8Array): Uint8Array {
  return coinbaseTxidFromCompressed(decodeCompressedCoinbase(compressCoinbase(coinbase))!);
}

describe("consensus/compressedCoinbase", () => {
  it("a short coinbase keeps all its bytes: no 64-byte block precedes the tag", () => {
    const transaction = createCoinbaseTransaction({ outputScripts: [opReturnScript(commitmentTo(hashForMergedMining))] });
    const coinbase = transaction.toBuffer();
    expect(lastIndexOfBytes(coinbase, mergedMiningTag)).to.be.below(64);
    const compressed = decodeCompressedCoinbase(compressCoinbase(coinbase))!;
    expect(compressed.byteCountBefore).to.equal(0n);
    expect(Buffer.from(compressed.tail)).to.deep.equal(Buffer.from(coinbase));
    expect(Buffer.from(coinbaseTxidFromCompressed(compressed))).to.deep.equal(Buffer.from(transaction.getHash()));
  });

  it("a coinbase longer than 128 bytes keeps the state after the 64-byte blocks before its tag, and the same txid", () => {
    const transaction = createCoinbaseTransaction({
      scriptSig: Uint8Array.from({ length: 100 }, (_, index) => index),
      outputScripts: [payToPubkey, opReturnScript(Uint8Array.from({ length: 20 }, () => 0x55)), opReturnScript(commitmentTo(hashForMergedMining))],
    });
    const coinbase = transaction.toBuffer();
    const tagPosition = lastIndexOfBytes(coinbase, mergedMiningTag);
    expect(coinbase.length).to.be.above(200);
    expect(tagPosition).to.be.at.least(192);
    const encoded = compressCoinbase(coinbase);
    const compressed = decodeCompressedCoinbase(encoded)!;
    expect(compressed.byteCountBefore).to.equal(BigInt(tagPosition - (tagPosition % 64)));
    expect(Buffer.from(encoded.subarray(0, 8)).readBigUInt64BE()).to.equal(compressed.byteCountBefore);
    expect(encoded.length).to.equal(40 + coinbase.length - Number(compressed.byteCountBefore));
    expect(Buffer.from(compressed.tail)).to.deep.equal(Buffer.from(coinbase.subarray(Number(compressed.byteCountBefore))));
    expect(Buffer.from(coinbaseTxidFromCompressed(compressed))).to.deep.equal(Buffer.from(transaction.getHash()));
    expect(transaction.getId()).to.equal(Buffer.from(coinbaseTxidFromCompressed(compressed)).reverse().toString("hex"));
  });

  it("a segwit coinbase is compressed without its witness: its txid, not its wtxid", () => {
    const transaction = createCoinbaseTransaction({
      scriptSig: Uint8Array.from({ length: 90 }, (_, index) => 255 - index),
      outputScripts: [payToPubkey, opReturnScript(Uint8Array.from([0xaa, 0x21, 0xa9, 0xed, ...new Uint8Array(32).fill(9)])), opReturnScript(commitmentTo(hashForMergedMining))],
      witness: true,
    });
    expect(transaction.hasWitnesses()).to.equal(true);
    const withoutWitness = serializeWithoutWitness(transaction);
    expect(withoutWitness.length).to.be.below(transaction.toBuffer().length);
    expect(Buffer.from(txidFromCompression(withoutWitness))).to.deep.equal(Buffer.from(transaction.getHash()));
    expect(Buffer.from(txidFromCompression(withoutWitness))).to.not.deep.equal(Buffer.from(transaction.getHash(true)));
  });

  it("the last tag decides the cut; without a tag nothing is hashed ahead", () => {
    const early = Uint8Array.from([...new Uint8Array(10), ...mergedMiningTag, ...new Uint8Array(150), ...mergedMiningTag, ...new Uint8Array(5)]);
    expect(decodeCompressedCoinbase(compressCoinbase(early))!.byteCountBefore).to.equal(128n);
    const none = new Uint8Array(300).fill(1);
    expect(decodeCompressedCoinbase(compressCoinbase(none))!.byteCountBefore).to.equal(0n);
    expect(Buffer.from(txidFromCompression(none))).to.deep.equal(Buffer.from(sha256d(none)));
  });

  it("refuses to read fewer than 40 bytes, and writes back what it reads", () => {
    expect(decodeCompressedCoinbase(new Uint8Array(39))).to.equal(undefined);
    expect(decodeCompressedCoinbase(new Uint8Array(0))).to.equal(undefined);
    const encoded = compressCoinbase(Uint8Array.from({ length: 200 }, (_, index) => (index * 7) & 0xff));
    expect(Buffer.from(encodeCompressedCoinbase(decodeCompressedCoinbase(encoded)!))).to.deep.equal(Buffer.from(encoded));
  });

  it("SHA-256 resumed from a midstate equals SHA-256 of the whole message, at every cut", () => {
    const message = Uint8Array.from({ length: 333 }, (_, index) => (index * 31 + 5) & 0xff);
    for (const cut of [0, 64, 128, 320]) {
      const resumed = sha256FromMidstate(sha256MidstateAfter(message.subarray(0, cut)), BigInt(cut), message.subarray(cut));
      expect(Buffer.from(resumed), `cut ${cut}`).to.deep.equal(Buffer.from(sha256(message)));
    }
    expect(() => sha256MidstateAfter(new Uint8Array(65))).to.throw(RangeError);
  });

  it("SHA-256 resumed from a midstate is right for every tail length around the padding's block boundaries", () => {
    const message = Uint8Array.from({ length: 64 + 200 }, (_, index) => (index * 13 + 1) & 0xff);
    const midstate = sha256MidstateAfter(message.subarray(0, 64));
    for (let tailLength = 0; tailLength <= 200; tailLength++) {
      const whole = message.subarray(0, 64 + tailLength);
      expect(Buffer.from(sha256FromMidstate(midstate, 64n, whole.subarray(64))), `tail of ${tailLength}`).to.deep.equal(Buffer.from(sha256(whole)));
    }
  });

  it("compresses with the txid the rule computes, whichever coinbase came before (the kept state is the right one's)", () => {
    const tagged = (first: number, tagAt: number) => {
      const coinbase = Uint8Array.from({ length: tagAt + 60 }, (_, index) => (index * 3 + first) & 0xff);
      coinbase.set(mergedMiningTag, tagAt);
      coinbase.set(hashForMergedMining, tagAt + mergedMiningTag.length);
      return coinbase;
    };
    // Same cut (64), other first bytes; another cut (128); no tag (cut 0); back to the first.
    const coinbases = [tagged(1, 100), tagged(1, 127), tagged(2, 100), tagged(2, 130), new Uint8Array(90).fill(4), tagged(1, 100), tagged(1, 64), tagged(1, 63)];
    for (const [index, coinbase] of coinbases.entries()) {
      const { compressed, txid } = compressCoinbaseWithTxid(coinbase);
      expect(Buffer.from(compressed), `coinbase ${index}`).to.deep.equal(Buffer.from(compressCoinbase(coinbase)));
      expect(Buffer.from(txid), `coinbase ${index}`).to.deep.equal(Buffer.from(sha256d(coinbase)));
      expect(Buffer.from(coinbaseTxidFromCompressed(decodeCompressedCoinbase(compressed)!))).to.deep.equal(Buffer.from(txid));
      const tagPosition = lastIndexOfBytes(coinbase, mergedMiningTag);
      const cut = tagPosition < 0 ? 0 : tagPosition - (tagPosition % 64);
      expect(Buffer.from(compressed.subarray(8, 40)), `coinbase ${index}`).to.deep.equal(Buffer.from(wordsToBytes(sha256MidstateAfter(coinbase.subarray(0, cut)))));
    }
  });

  it("writes the length field as the reference's Java long does: count * 8 modulo 2^64", () => {
    const midstate = sha256MidstateAfter(new Uint8Array(64));
    const tail = Uint8Array.of(1, 2, 3);
    // (2^61 + 64) * 8 = 2^64 + 512, the same field as 64 * 8.
    expect(Buffer.from(sha256FromMidstate(midstate, (1n << 61n) + 64n, tail))).to.deep.equal(Buffer.from(sha256FromMidstate(midstate, 64n, tail)));
  });
});
