import { expect } from "chai";
import { selectHead, totalDifficultyOf, type HeadCandidate } from "../../../src/consensus/forkChoice.js";
import { childBlock, makeHeader } from "../../helpers/consensusHeaders.js";

const hash = (firstByte: number) => new Uint8Array(32).fill(0x55).fill(firstByte, 0, 1);
const head: HeadCandidate = { totalDifficulty: 1_000n, paidFees: 100n, hash: hash(0x80) };
const smaller = hash(0x7f);
const larger = hash(0x81);

describe("consensus/forkChoice", () => {
  it("total difficulty is the parent's plus the block's and its uncles' difficulties", () => {
    const parent = makeHeader({ number: 5n });
    const uncles = [makeHeader({ number: 4n, difficulty: 30n }), makeHeader({ number: 3n, difficulty: 7n })];
    const block = childBlock(parent, "b", uncles);
    expect(totalDifficultyOf(500n, block)).to.equal(500n + block.header.fields.difficulty + 37n);
  });

  it("a heavier chain wins whatever its fees and hash; a lighter one loses whatever its fees and hash", () => {
    expect(selectHead({ totalDifficulty: 1_001n, paidFees: 0n, hash: larger }, head)).to.deep.equal({ becomesHead: true, because: "heavier" });
    expect(selectHead({ totalDifficulty: 999n, paidFees: 10_000n, hash: smaller }, head)).to.deep.equal({ becomesHead: false, because: "lighter" });
  });

  it("at equal weight, more than twice the head's fees wins with any hash; exactly twice does not by fees alone", () => {
    expect(selectHead({ totalDifficulty: 1_000n, paidFees: 201n, hash: larger }, head)).to.deep.equal({ becomesHead: true, because: "moreThanTwiceTheFees" });
    expect(selectHead({ totalDifficulty: 1_000n, paidFees: 200n, hash: larger }, head)).to.deep.equal({ becomesHead: false, because: "tieKeepsHead" });
  });

  it("at equal weight, over half the head's fees wins with a smaller hash, loses with a larger or equal one", () => {
    expect(selectHead({ totalDifficulty: 1_000n, paidFees: 51n, hash: smaller }, head)).to.deep.equal({ becomesHead: true, because: "smallerHashWithOverHalfTheFees" });
    expect(selectHead({ totalDifficulty: 1_000n, paidFees: 200n, hash: smaller }, head)).to.deep.equal({ becomesHead: true, because: "smallerHashWithOverHalfTheFees" });
    expect(selectHead({ totalDifficulty: 1_000n, paidFees: 51n, hash: larger }, head)).to.deep.include({ becomesHead: false });
    expect(selectHead({ totalDifficulty: 1_000n, paidFees: 100n, hash: head.hash }, head)).to.deep.include({ becomesHead: false });
  });

  it("at equal weight, exactly half the head's fees (or less) loses even with a smaller hash", () => {
    expect(selectHead({ totalDifficulty: 1_000n, paidFees: 50n, hash: smaller }, head)).to.deep.equal({ becomesHead: false, because: "tieKeepsHead" });
    expect(selectHead({ totalDifficulty: 1_000n, paidFees: 0n, hash: smaller }, head)).to.deep.include({ becomesHead: false });
  });

  it("with no fees on either side (regtest's empty blocks), a tie always keeps the head", () => {
    const feeless = { ...head, paidFees: 0n };
    expect(selectHead({ totalDifficulty: 1_000n, paidFees: 0n, hash: smaller }, feeless)).to.deep.equal({ becomesHead: false, because: "tieKeepsHead" });
  });

  it("hashes compare as unsigned bytes from the first: 0x7f.. < 0x80.. < 0xff..", () => {
    const tie = (candidateHash: Uint8Array, headHash: Uint8Array) => selectHead({ totalDifficulty: 1n, paidFees: 1n, hash: candidateHash }, { totalDifficulty: 1n, paidFees: 1n, hash: headHash }).becomesHead;
    expect(tie(hash(0x7f), hash(0x80))).to.equal(true);
    expect(tie(hash(0x80), hash(0xff))).to.equal(true);
    expect(tie(hash(0xff), hash(0x80))).to.equal(false);
    const lastByteLower = hash(0x80).fill(0x00, 31);
    expect(tie(lastByteLower, hash(0x80))).to.equal(true);
  });
});
