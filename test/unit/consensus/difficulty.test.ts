import { expect } from "chai";
import { consensusConstantsFor, type ConsensusConstants } from "../../../src/consensus/constants.js";
import { calculateDifficulty } from "../../../src/consensus/difficulty.js";

const regtest = consensusConstantsFor({ networkId: 33 });
const mainnet = consensusConstantsFor({ networkId: 30 });
const testnet = consensusConstantsFor({ networkId: 31 });

const parent = { difficulty: 1_000_000n, timestamp: 1_000n };
const after = (seconds: bigint, uncleCount = 0) => ({ timestamp: parent.timestamp + seconds, uncleCount });

describe("consensus/difficulty", () => {
  it("the table: sooner than the target raises by parent/divisor, at the target keeps, later lowers", () => {
    const rows: [ConsensusConstants, bigint, bigint][] = [
      // regtest: 10 s target, 1,000,000 / 2048 = 488
      [regtest, 9n, 1_000_488n],
      [regtest, 10n, 1_000_000n],
      [regtest, 11n, 999_512n],
      // mainnet, testnet, devnet profiles: 14 s target, 1,000,000 / 400 = 2,500
      [mainnet, 13n, 1_002_500n],
      [mainnet, 14n, 1_000_000n],
      [mainnet, 15n, 997_500n],
      [testnet, 1n, 1_002_500n],
      [testnet, 599n, 997_500n],
    ];
    for (const [constants, seconds, expected] of rows) {
      expect(calculateDifficulty(after(seconds), parent, constants), `${constants.durationLimit} s target, ${seconds} s later`).to.equal(expected);
    }
  });

  it("each uncle adds one target time: with 2 uncles regtest's target is 30 s", () => {
    expect(calculateDifficulty(after(29n, 2), parent, regtest)).to.equal(1_000_488n);
    expect(calculateDifficulty(after(30n, 2), parent, regtest)).to.equal(1_000_000n);
    expect(calculateDifficulty(after(31n, 2), parent, regtest)).to.equal(999_512n);
    // The same 15 s lowers a block without uncles and raises one with an uncle.
    expect(calculateDifficulty(after(15n, 0), parent, regtest)).to.equal(999_512n);
    expect(calculateDifficulty(after(15n, 1), parent, regtest)).to.equal(1_000_488n);
  });

  it("a timestamp before the parent's (only where timestamp rules are off) keeps the parent's difficulty", () => {
    expect(calculateDifficulty({ timestamp: parent.timestamp - 1n, uncleCount: 0 }, parent, regtest)).to.equal(1_000_000n);
    // The same timestamp is 0 s after: below the target, so it rises.
    expect(calculateDifficulty(after(0n), parent, regtest)).to.equal(1_000_488n);
  });

  it("never below the minimum: difficulty 1 cannot move, a parent of 0 rises to the minimum, a drop stops at it", () => {
    const one = { difficulty: 1n, timestamp: 1_000n };
    expect(calculateDifficulty(after(1n), one, regtest)).to.equal(1n);
    expect(calculateDifficulty(after(100n), one, regtest)).to.equal(1n);
    expect(calculateDifficulty(after(100n), { difficulty: 0n, timestamp: 1_000n }, regtest)).to.equal(1n);
    const minimum5000 = { ...mainnet, minimumDifficulty: 5_000n };
    expect(calculateDifficulty(after(15n), { difficulty: 5_010n, timestamp: 1_000n }, minimum5000)).to.equal(5_000n);
    expect(calculateDifficulty(after(15n), { difficulty: 5_012n, timestamp: 1_000n }, minimum5000)).to.equal(5_000n);
    expect(calculateDifficulty(after(15n), { difficulty: 6_000n, timestamp: 1_000n }, minimum5000)).to.equal(5_985n);
  });

  it("divisor 2048 against 400 on the same parent and times", () => {
    const sameTarget = { ...regtest, durationLimit: 14n };
    expect(calculateDifficulty(after(5n), { difficulty: 4_096_000n, timestamp: 1_000n }, sameTarget)).to.equal(4_098_000n);
    expect(calculateDifficulty(after(5n), { difficulty: 4_096_000n, timestamp: 1_000n }, mainnet)).to.equal(4_106_240n);
    // Below the divisor the quotient is 0: a difficulty of 2047 stays put under 2048, moves under 400.
    expect(calculateDifficulty(after(5n), { difficulty: 2_047n, timestamp: 1_000n }, sameTarget)).to.equal(2_047n);
    expect(calculateDifficulty(after(5n), { difficulty: 2_047n, timestamp: 1_000n }, mainnet)).to.equal(2_052n);
  });

  it("600 s or more after the parent drops to the minimum where RSKIP97 is off (regtest, testnet, devnet), not on mainnet", () => {
    expect(calculateDifficulty(after(599n), parent, regtest)).to.equal(999_512n);
    expect(calculateDifficulty(after(600n), parent, regtest)).to.equal(1n);
    expect(calculateDifficulty(after(600n), parent, { ...testnet, minimumDifficulty: 131_072n })).to.equal(131_072n);
    expect(calculateDifficulty(after(600n), parent, mainnet)).to.equal(997_500n);
  });
});
