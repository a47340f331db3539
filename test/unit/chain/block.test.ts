import { expect } from "chai";
import { RLP } from "@ethereumjs/rlp";
import { createFeeMarket1559Tx, createLegacyTx } from "@ethereumjs/tx";
import { Address } from "@ethereumjs/util";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { Block } from "../../../src/chain/block.js";
import { BlockHeader, blockHashOfStoredHeader, emptyBloom, emptyBytes, emptyListHash, emptyTrieRoot, summarizeStoredHeader, unclesHashOf, zeroHash } from "../../../src/chain/header.js";
import { indexedTrieRoot } from "../../../src/chain/indexedTrie.js";
import { decodeRawTransaction, type ChainTransaction } from "../../../src/chain/transactions.js";
import { createExecutionRules } from "../../../src/execution/rules.js";

const common = createExecutionRules(33n);

function header(number: bigint, difficulty: bigint, extraData: Uint8Array): BlockHeader {
  return new BlockHeader({
    parentHash: zeroHash, unclesHash: emptyListHash, coinbase: new Uint8Array(20), stateRoot: emptyTrieRoot, transactionsRoot: emptyTrieRoot,
    receiptsRoot: emptyTrieRoot, logsBloom: emptyBloom, difficulty, number, gasLimit: 10_000_000n, gasUsed: 0n, timestamp: 1n, extraData,
    paidFees: 0n, minimumGasPrice: 0n, uncleCount: 0, mergedMiningHeader: emptyBytes, mergedMiningMerkleProof: emptyBytes, mergedMiningCoinbaseTransaction: emptyBytes,
  });
}

/** A block whose header commits to its body (uncles hash, transactions root), as a stored block's does. */
function wholeBlock(number: bigint, extraData: Uint8Array, transactions: readonly ChainTransaction[], uncles: readonly BlockHeader[]): Block {
  const fields = { ...header(number, 3n, extraData).fields, unclesHash: unclesHashOf(uncles), transactionsRoot: indexedTrieRoot(transactions.map((transaction) => transaction.raw)), uncleCount: uncles.length };
  return new Block(new BlockHeader(fields), transactions, uncles);
}

describe("chain/block", () => {
  it("size is the length of RLP([header, transactions, uncles]), and headers round-trip through RLP", () => {
    const key = keccak_256(new TextEncoder().encode("cow"));
    const transactions = [0n, 1n].map((nonce) =>
      decodeRawTransaction(
        createLegacyTx({ nonce, gasLimit: 60_000n, to: new Address(new Uint8Array(20).fill(7)), data: new Uint8Array(nonce === 0n ? 3 : 300) }, { common }).sign(key).serialize(),
        common,
      ),
    );
    const uncle = header(1n, 5n, new Uint8Array(40));
    const block = new Block(header(2n, 3n, new Uint8Array(10)), transactions, [uncle]);
    const expected = RLP.encode([RLP.decode(block.header.encoded), transactions.map((transaction) => RLP.decode(transaction.raw)), [RLP.decode(uncle.encoded)]] as never).length;
    expect(block.size).to.equal(expected);
    expect(new Block(header(0n, 1n, emptyBytes), []).size).to.equal(RLP.encode([RLP.decode(header(0n, 1n, emptyBytes).encoded), [], []] as never).length);
    expect(block.cumulativeDifficulty).to.equal(8n);
    const decoded = BlockHeader.decode(block.header.encoded);
    expect(Buffer.compare(decoded.hash, block.hash)).to.equal(0);
    expect(Buffer.compare(decoded.hashForMergedMining, block.header.hashForMergedMining)).to.equal(0);
  });

  it("the wire body made from the stored body's bytes is the one made from the block: legacy and typed transactions, uncles, none", () => {
    const key = keccak_256(new TextEncoder().encode("cow"));
    const to = new Address(new Uint8Array(20).fill(7));
    const legacy = [0n, 1n].map((nonce) => decodeRawTransaction(createLegacyTx({ nonce, gasLimit: 60_000n, to, data: new Uint8Array(nonce === 0n ? 3 : 300) }, { common }).sign(key).serialize(), common));
    const typed = decodeRawTransaction(createFeeMarket1559Tx({ chainId: 33n, nonce: 2n, gasLimit: 60_000n, maxFeePerGas: 10n, to, data: new Uint8Array(70) }, { common }).sign(key).serialize(), common, true);
    const blocks = [
      wholeBlock(2n, new Uint8Array(10), [...legacy, typed], [header(1n, 5n, new Uint8Array(40)), header(1n, 6n, emptyBytes)]),
      wholeBlock(3n, emptyBytes, [typed], []),
      wholeBlock(4n, emptyBytes, [], []),
    ];
    for (const block of blocks) {
      expect(block.bodyMismatch()).to.equal(undefined);
      expect(Buffer.from(Block.wireBodyFromStored(block.encodeBody(), block.header.fields)).toString("hex")).to.equal(Buffer.from(block.encodeWireBody()).toString("hex"));
    }
    expect(() => Block.wireBodyFromStored(RLP.encode([[], []]), blocks[2]!.header.fields)).to.throw(/stored body/);
  });

  it("a body that is not its header's is named and not made into a wire body: other uncles, other transactions", () => {
    const key = keccak_256(new TextEncoder().encode("cow"));
    const to = new Address(new Uint8Array(20).fill(7));
    const transactions = [0n, 1n].map((nonce) => decodeRawTransaction(createLegacyTx({ nonce, gasLimit: 60_000n, to }, { common }).sign(key).serialize(), common));
    const uncle = header(1n, 5n, new Uint8Array(40));
    const block = wholeBlock(2n, emptyBytes, transactions, [uncle]);
    const otherUncles = new Block(block.header, transactions, [header(1n, 5n, new Uint8Array(41))]);
    const otherTransactions = new Block(block.header, [transactions[1]!, transactions[0]!], [uncle]);
    const fewerTransactions = new Block(block.header, transactions.slice(1), [uncle]);
    expect(otherUncles.bodyMismatch()).to.equal("its uncles do not match the header's uncles hash");
    expect(otherTransactions.bodyMismatch()).to.equal("its transactions do not match the header's transactions root");
    expect(fewerTransactions.bodyMismatch()).to.equal("its transactions do not match the header's transactions root");
    expect(() => Block.wireBodyFromStored(otherUncles.encodeBody(), block.header.fields)).to.throw(/uncles do not match/);
    expect(() => Block.wireBodyFromStored(otherTransactions.encodeBody(), block.header.fields)).to.throw(/transactions do not match/);
    expect(() => Block.wireBodyFromStored(fewerTransactions.encodeBody(), block.header.fields)).to.throw(/transactions do not match/);
    expect(Block.wireBodyFromStored(block.encodeBody(), block.header.fields)).to.deep.equal(block.encodeWireBody());
  });

  it("hashes as the reference (RSKIP92): the 16 base fields, and the parent-chain header only when a merged-mining field is set", () => {
    const plain = header(5n, 1n, Uint8Array.of(7));
    const base = (RLP.decode(plain.encoded) as Uint8Array[]).slice(0, 16);
    expect(plain.hash).to.deep.equal(keccak_256(RLP.encode(base)));
    expect(plain.hash).to.deep.equal(plain.hashForMergedMining);
    expect(plain.encodedForHash).to.deep.equal(RLP.encode(base));
    expect(blockHashOfStoredHeader(plain.encoded)).to.deep.equal(plain.hash);

    const parentHeader = new Uint8Array(80).fill(3);
    const mined = (proof: Uint8Array, coinbase: Uint8Array, parent = parentHeader) =>
      new BlockHeader({ ...plain.fields, mergedMiningHeader: parent, mergedMiningMerkleProof: proof, mergedMiningCoinbaseTransaction: coinbase });
    const withProof = mined(new Uint8Array(32).fill(1), new Uint8Array(100).fill(2));
    expect(withProof.hash).to.deep.equal(keccak_256(RLP.encode([...base, parentHeader])));
    expect(withProof.hashForMergedMining).to.deep.equal(plain.hash);
    expect(blockHashOfStoredHeader(withProof.encoded)).to.deep.equal(withProof.hash);
    expect(BlockHeader.decode(withProof.encoded).hash).to.deep.equal(withProof.hash);
    // The proof and the coinbase are not hashed; the parent-chain header is, even alone.
    expect(mined(emptyBytes, new Uint8Array(90)).hash).to.deep.equal(withProof.hash);
    expect(mined(withProof.fields.mergedMiningMerkleProof, withProof.fields.mergedMiningCoinbaseTransaction, new Uint8Array(80).fill(4)).hash).to.not.deep.equal(withProof.hash);
    expect(mined(new Uint8Array(32), emptyBytes, emptyBytes).hash).to.deep.equal(keccak_256(RLP.encode([...base, emptyBytes])));
  });

  it("a stored header's summary, read in one pass, has the hash and fields of the decoded header; a field that is a list is refused", () => {
    const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
    const summaryOf = (encoded: Uint8Array) => {
      const { hash, parentHash, number, unclesHash, transactionsRoot } = summarizeStoredHeader(encoded);
      return { hash: hex(hash), parentHash: hex(parentHash), number, unclesHash: hex(unclesHash), transactionsRoot: hex(transactionsRoot) };
    };
    const plain = new BlockHeader({ ...header(0n, 1n, emptyBytes).fields, parentHash: new Uint8Array(32).fill(0xa1), transactionsRoot: new Uint8Array(32).fill(0xb2) });
    const merged = (parent: Uint8Array, proof: Uint8Array, coinbase: Uint8Array) => plain.withMergedMining({ mergedMiningHeader: parent, mergedMiningMerkleProof: proof, mergedMiningCoinbaseTransaction: coinbase });
    // Numbers of every length up to 8 bytes; merged-mining fields set or not, the parent-chain header empty while the others are set.
    for (const number of [0n, 1n, 0x7fn, 0x80n, 0x1_0000_0000_0000n, 2n ** 64n - 1n]) {
      const numbered = new BlockHeader({ ...plain.fields, number, extraData: new Uint8Array(40).fill(7) });
      for (const each of [numbered, numbered.withMergedMining({ mergedMiningHeader: new Uint8Array(80).fill(3), mergedMiningMerkleProof: emptyBytes, mergedMiningCoinbaseTransaction: new Uint8Array(300).fill(4) }), merged(emptyBytes, Uint8Array.of(1), emptyBytes)]) {
        const decoded = BlockHeader.decode(each.encoded);
        expect(summaryOf(each.encoded)).to.deep.equal({ hash: hex(decoded.hash), parentHash: hex(decoded.fields.parentHash), number: decoded.number, unclesHash: hex(decoded.fields.unclesHash), transactionsRoot: hex(decoded.fields.transactionsRoot) });
        expect(hex(summarizeStoredHeader(each.encoded).hash)).to.equal(hex(blockHashOfStoredHeader(each.encoded)));
      }
    }
    // The merkle proof (not hashed when the parent-chain header is set) as a list: BlockHeader.decode refuses it, and so does the summary.
    const items = RLP.decode(merged(new Uint8Array(80).fill(3), Uint8Array.of(1), Uint8Array.of(2)).encoded) as Uint8Array[];
    const listProof = RLP.encode([...items.slice(0, 17), [Uint8Array.of(1)], items[18]!]);
    expect(() => BlockHeader.decode(listProof)).to.throw("malformed block header");
    expect(() => summarizeStoredHeader(listProof)).to.throw("malformed block header");
    expect(() => summarizeStoredHeader(RLP.encode(items.slice(0, 18)))).to.throw("malformed block header");
    expect(() => summarizeStoredHeader(plain.encoded.subarray(0, plain.encoded.length - 1))).to.throw();
  });

  it("withMergedMining gives the header the fields give: the same encodings and hashes, for fields of every encoded length", () => {
    const fieldValues = [emptyBytes, Uint8Array.of(5), Uint8Array.of(0x90), new Uint8Array(55).fill(6), new Uint8Array(80).fill(3), new Uint8Array(300).fill(8), new Uint8Array(70_000).fill(9)];
    for (const extraData of [emptyBytes, new Uint8Array(32).fill(1)]) {
      const plain = header(9n, 1n, extraData);
      for (const parent of fieldValues) {
        for (const [proof, coinbase] of [[emptyBytes, new Uint8Array(150).fill(2)], ...fieldValues.map((value) => [value, value])] as const) {
          const merged = { mergedMiningHeader: parent, mergedMiningMerkleProof: proof, mergedMiningCoinbaseTransaction: coinbase };
          const appended = plain.withMergedMining(merged);
          const built = new BlockHeader({ ...plain.fields, ...merged });
          const label = `parent ${parent.length}, proof ${proof.length}, coinbase ${coinbase.length}`;
          expect(Buffer.from(appended.encoded).equals(Buffer.from(built.encoded)), label).to.equal(true);
          expect(Buffer.from(appended.hash).equals(Buffer.from(built.hash)), label).to.equal(true);
          expect(Buffer.from(appended.encodedForHash).equals(Buffer.from(built.encodedForHash)), label).to.equal(true);
          expect(Buffer.from(appended.hashForMergedMining).equals(Buffer.from(plain.hash)), label).to.equal(true);
        }
      }
    }
  });
});
