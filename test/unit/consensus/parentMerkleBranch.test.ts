// The coinbase's merkle branch: roots against bitcoinjs-lib, and the reference's refusal of merkle
// nodes that read as a 64-byte transaction.
import { expect } from "chai";
import { Block, Transaction } from "bitcoinjs-lib";
import {
  combineMerkleNodes,
  foldMerkleBranch,
  isSixtyFourByteTransaction,
  merkleBranchOfCoinbase,
  merkleRootOfTxids,
} from "../../../src/consensus/parentMerkleBranch.js";
import { createCoinbaseTransaction, displayHexToHash } from "../../helpers/parentChainProofs.js";

function spendingTransaction(seed: number): Transaction {
  const transaction = new Transaction();
  transaction.addInput(Uint8Array.from({ length: 32 }, (_, index) => (seed * 13 + index) & 0xff), seed);
  transaction.addOutput(Uint8Array.of(0x51), BigInt(1000 + seed));
  return transaction;
}

/**
 * A 64-byte transaction: one input with an `inputScriptLength`-byte script, one output of `value`
 * satoshis with a (4 - inputScriptLength)-byte script.
 */
function sixtyFourByteTransaction(inputScriptLength: number, value = 1000n, outpointIndex = 0): Uint8Array {
  const transaction = new Transaction();
  transaction.addInput(new Uint8Array(32).fill(0xaa), outpointIndex, 0xffffffff, new Uint8Array(inputScriptLength).fill(0x51));
  transaction.addOutput(new Uint8Array(4 - inputScriptLength).fill(0x51), value);
  const bytes = transaction.toBuffer();
  expect(bytes.length).to.equal(64);
  return bytes;
}

/** The two nodes whose display-order bytes are `bytes` (the order the reference's check reads). */
function nodesReadingAs(bytes: Uint8Array): [Uint8Array, Uint8Array] {
  return [bytes.slice(0, 32).reverse(), bytes.slice(32, 64).reverse()];
}

describe("consensus/parentMerkleBranch", () => {
  it("combines two nodes as bitcoind does (the reference's MerkleTreeUtilsTest vectors, display order)", () => {
    const vectors = [
      ["b945b008fbc3f357db745909958b570773fc14575a36af8bbc195b484e21f366", "9880f57b6735152a8c6d4c7e1b3bc6434ee75e459511a642bbb8cb71d3a6b6d8", "ceea4835dd23fae1978a3f6f3f0aa0171e018360272dd5b98d37550fbc978d01"],
      ["083eafdf670bb1bbc83b63262887e3cf519c3e252fac29adfb92c1e857b37f91", "5740915e973a211c71655d10e4c672301c27c287843dcfa97b7aafc04992ec5e", "107857d7233c41d4c37ecaa9ad9d9ab15371f643074866cd23d657e6e99676be"],
    ];
    for (const [left, right, parent] of vectors) {
      expect(Buffer.from(combineMerkleNodes(displayHexToHash(left!), displayHexToHash(right!)))).to.deep.equal(Buffer.from(displayHexToHash(parent!)));
    }
  });

  it("computes bitcoinjs-lib's merkle root, and a coinbase branch that folds to it, for 1 to 9 transactions", () => {
    for (let count = 1; count <= 9; count++) {
      const transactions = [createCoinbaseTransaction({ scriptSig: Uint8Array.of(count), outputScripts: [Uint8Array.of(0x51)] })];
      for (let index = 1; index < count; index++) transactions.push(spendingTransaction(index));
      const txids = transactions.map((transaction) => transaction.getHash());
      const expectedRoot = Buffer.from(Block.calculateMerkleRoot(transactions));
      expect(Buffer.from(merkleRootOfTxids(txids)), `${count} transactions`).to.deep.equal(expectedRoot);
      const branch = merkleBranchOfCoinbase(txids);
      expect(branch.length, `${count} transactions`).to.equal(32 * Math.ceil(Math.log2(count)));
      const fold = foldMerkleBranch(txids[0]!, branch);
      expect(fold.kind === "root" && Buffer.from(fold.root), `${count} transactions`).to.deep.equal(expectedRoot);
    }
  });

  it("recognizes a 64-byte transaction read in display order, whatever its script lengths", () => {
    for (const inputScriptLength of [0, 1, 2, 3, 4]) {
      const [left, right] = nodesReadingAs(sixtyFourByteTransaction(inputScriptLength));
      expect(isSixtyFourByteTransaction(left, right), `input script of ${inputScriptLength} bytes`).to.equal(true);
    }
    // A coinbase-shaped input (outpoint index 0xffffffff) too, and the value bounds are inclusive.
    expect(isSixtyFourByteTransaction(...nodesReadingAs(sixtyFourByteTransaction(2, 1n, 0xffffffff)))).to.equal(true);
    expect(isSixtyFourByteTransaction(...nodesReadingAs(sixtyFourByteTransaction(2, 21_000_000n * 100_000_000n, 1_000_000)))).to.equal(true);
  });

  it("reads the display-order bytes: the same transaction as internal-order nodes is not refused", () => {
    const bytes = sixtyFourByteTransaction(4);
    expect(isSixtyFourByteTransaction(bytes.slice(0, 32), bytes.slice(32))).to.equal(false);
  });

  it("lets through 64 bytes that fail any one of the reference's conditions", () => {
    const valid = sixtyFourByteTransaction(2);
    const changed = (offset: number, bytes: number[]) => {
      const copy = valid.slice();
      copy.set(bytes, offset);
      return isSixtyFourByteTransaction(...nodesReadingAs(copy));
    };
    expect(changed(4, [2]), "two inputs").to.equal(false);
    expect(changed(37, [0x41, 0x42, 0x0f, 0x00]), "outpoint index 1,000,001").to.equal(false);
    expect(changed(41, [5]), "input script of 5 bytes").to.equal(false);
    expect(changed(41, [0x80]), "input script length read as negative").to.equal(false);
    expect(changed(48, [2]), "two outputs").to.equal(false);
    expect(changed(49, [0, 0, 0, 0, 0, 0, 0, 0]), "zero value").to.equal(false);
    expect(changed(49, [0x01, 0x40, 0x07, 0x5a, 0xf0, 0x75, 0x07, 0x00]), "21 million BTC and one satoshi").to.equal(false);
    expect(changed(49, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), "negative value").to.equal(false);
    expect(changed(57, [3]), "scripts of 2 + 3 bytes").to.equal(false);
    expect(changed(0, [9, 9, 9, 9]), "the version is not read").to.equal(true);
    expect(changed(60, [9, 9, 9, 9]), "the lock time is not read").to.equal(true);
  });

  it("stops the fold at the level where the nodes read as a transaction", () => {
    const [left, right] = nodesReadingAs(sixtyFourByteTransaction(1));
    expect(foldMerkleBranch(left, Uint8Array.from([...right, ...new Uint8Array(32)]))).to.deep.equal({ kind: "nodesFormTransaction", level: 0 });
    // One level up: a leaf whose parent's display-order byte 4 is 1 (the only byte of the left
    // half the check reads), under a sibling that is the right half of a 64-byte transaction.
    const firstSibling = new Uint8Array(32);
    const leaf = new Uint8Array(32);
    for (let seed = 1; combineMerkleNodes(leaf, firstSibling).slice().reverse()[4] !== 1; seed++) new DataView(leaf.buffer).setUint32(0, seed);
    expect(isSixtyFourByteTransaction(leaf, firstSibling)).to.equal(false);
    const proof = Uint8Array.from([...firstSibling, ...right]);
    expect(foldMerkleBranch(leaf, proof)).to.deep.equal({ kind: "nodesFormTransaction", level: 1 });
  });
});
