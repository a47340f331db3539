// The built-in parent miner: its parent blocks as bitcoinjs-lib reads them, and its proofs passing
// the merged-mining rule.
import { expect } from "chai";
import { Block, Transaction } from "bitcoinjs-lib";
import { lastIndexOfBytes, mergedMiningTag } from "../../../src/consensus/compressedCoinbase.js";
import { checkMergedMiningProof } from "../../../src/consensus/mergedMiningProof.js";
import { decodeParentHeader } from "../../../src/consensus/parentChain.js";
import { createBuiltinParentMiner, createSeededParentMinerRandom, type ParentBlockSolution } from "../../../src/mining/builtinParentMiner.js";
import { parentCoinbaseSubsidy, throwawayPayToPubkeyScript } from "../../../src/mining/parentCoinbase.js";
import { commitmentTo } from "../../helpers/parentChainProofs.js";

const now = 1_750_000_000;

function seededMiner(seed: number) {
  return createBuiltinParentMiner({ random: createSeededParentMinerRandom(Uint8Array.of(seed)), nowSeconds: () => now });
}

function hashNumber(index: number): Uint8Array {
  return Uint8Array.from({ length: 32 }, (_, byte) => (index * 17 + byte) & 0xff);
}

function checkSolution(solution: ParentBlockSolution, hashForMergedMining: Uint8Array, difficulty: bigint) {
  const { mergedMiningHeader, mergedMiningMerkleProof, mergedMiningCoinbaseTransaction } = solution.fields;
  return checkMergedMiningProof({ hashForMergedMining, difficulty, parentHeader: mergedMiningHeader, merkleProof: mergedMiningMerkleProof, compressedCoinbase: mergedMiningCoinbaseTransaction });
}

describe("mining/builtinParentMiner", () => {
  it("answers fields that pass the merged-mining rule, at difficulty 1 and 4096", () => {
    const miner = seededMiner(1);
    for (const difficulty of [1n, 4096n]) {
      for (let index = 0; index < 5; index++) {
        const solution = miner.mine(hashNumber(index), difficulty);
        const check = checkSolution(solution, hashNumber(index), difficulty);
        expect(check.ok, `difficulty ${difficulty}, block ${index}: ${JSON.stringify(check)}`).to.equal(true);
        // The same fields do not prove another block.
        expect(checkSolution(solution, hashNumber(index + 100), difficulty).ok).to.equal(false);
      }
    }
  });

  it("makes the reference's regtest parent block: a lone coinbase paying 50 BTC, then prefix ‖ tag ‖ hash", () => {
    const hashForMergedMining = hashNumber(7);
    const solution = seededMiner(2).mine(hashForMergedMining, 1n);
    const coinbase = Transaction.fromBuffer(solution.coinbase);
    expect(coinbase.isCoinbase()).to.equal(true);
    expect(coinbase.ins).to.have.length(1);
    expect(coinbase.ins[0]!.script).to.have.length(0);
    expect(coinbase.outs.map((output) => output.value)).to.deep.equal([parentCoinbaseSubsidy, 0n]);
    expect(Buffer.from(coinbase.outs[0]!.script)).to.deep.equal(Buffer.from(throwawayPayToPubkeyScript));
    const commitment = coinbase.outs[1]!.script;
    expect(Buffer.from(commitment.subarray(commitment.length - 41))).to.deep.equal(Buffer.from(commitmentTo(hashForMergedMining)));
    expect(commitment.length - 41).to.be.below(1000);

    const block = Block.fromBuffer(solution.fields.mergedMiningHeader);
    expect(Buffer.from(block.prevHash!)).to.deep.equal(Buffer.alloc(32));
    expect(Buffer.from(block.merkleRoot!)).to.deep.equal(Buffer.from(coinbase.getHash()));
    expect(block.timestamp).to.equal(now);
    expect(block.bits).to.equal(0x207fffff);
    expect(Buffer.from(block.getHash())).to.deep.equal(Buffer.from(solution.parentHeaderHash));
    expect(solution.fields.mergedMiningMerkleProof).to.have.length(0);
  });

  it("draws prefixes of 0 to 999 bytes from its random source: the same seed gives the same fields", () => {
    const first = seededMiner(3);
    const second = seededMiner(3);
    const prefixLengths = new Set<number>();
    for (let index = 0; index < 20; index++) {
      const one = first.mine(hashNumber(index), 1n);
      const other = second.mine(hashNumber(index), 1n);
      expect(one.fields).to.deep.equal(other.fields);
      prefixLengths.add(lastIndexOfBytes(one.coinbase, mergedMiningTag));
    }
    expect(prefixLengths.size).to.be.above(15);
    expect(seededMiner(4).mine(hashNumber(0), 1n).fields).to.not.deep.equal(seededMiner(3).mine(hashNumber(0), 1n).fields);
  });

  it("counts nonces on from one block to the next, as the reference's miner does", () => {
    const miner = seededMiner(5);
    const first = miner.mine(hashNumber(1), 4096n);
    const second = miner.mine(hashNumber(2), 4096n);
    const firstNonce = decodeParentHeader(first.fields.mergedMiningHeader)!.nonce;
    expect(firstNonce).to.equal(first.attempts - 1);
    expect(decodeParentHeader(second.fields.mergedMiningHeader)!.nonce).to.equal(firstNonce + second.attempts);
  });

  it("searches in slices for a caller that must yield, and keeps its answer once found", () => {
    const search = seededMiner(6).startSearch(hashNumber(3), 4096n);
    let solution: ParentBlockSolution | undefined;
    let slices = 0;
    while (solution === undefined) {
      solution = search.tryNonces(100);
      slices++;
    }
    expect(search.attempts).to.equal(solution.attempts);
    expect(slices).to.equal(Math.ceil(solution.attempts / 100));
    expect(search.tryNonces(100)).to.equal(solution);
    expect(search.attempts).to.equal(solution.attempts);
    const whole = seededMiner(6).mine(hashNumber(3), 4096n);
    expect(whole.fields).to.deep.equal(solution.fields);
  });
});
