import { expect } from "chai";
import type { HeaderFields } from "../../../src/chain/header.js";
import { consensusConstantsFor } from "../../../src/consensus/constants.js";
import { checkHeaderAgainstParent, gasLimitRange, minimumGasPriceRange } from "../../../src/consensus/rules/parent.js";
import { passed } from "../../../src/consensus/verdict.js";
import { childHeader, makeHeader, regtestConstants } from "../../helpers/consensusHeaders.js";

const testnet = { constants: consensusConstantsFor({ networkId: 31 }), now: 2_000n };
const regtest = { constants: regtestConstants, now: 2_000n };
const parent = makeHeader({ number: 41n, timestamp: 1_000n, minimumGasPrice: 1_000n, gasLimit: 10_000_000n });

/** The child header with `fields` changed, checked against `parent` on the testnet profile (timestamp rules on). */
function check(fields: Partial<HeaderFields>, context = testnet) {
  return checkHeaderAgainstParent(childHeader(parent, "", fields, context.constants).fields, parent.fields, context);
}

describe("consensus/rules/parent", () => {
  it("a child built to the rules passes", () => {
    expect(check({})).to.deep.equal(passed);
  });

  it("minimum gas price within ±1 % of the parent's: 990 and 1010 pass after 1000, 989 and 1011 do not", () => {
    for (const price of [990n, 1_000n, 1_010n]) expect(check({ minimumGasPrice: price }), `${price}`).to.deep.equal(passed);
    for (const price of [989n, 1_011n]) expect(check({ minimumGasPrice: price }), `${price}`).to.include({ ok: false, rule: "minimumGasPrice" });
  });

  it("the gas price range moves at least 1 wei and stops at 0 (BlockGasPriceRange)", () => {
    expect(minimumGasPriceRange(0n)).to.deep.equal({ lowest: 0n, highest: 1n });
    expect(minimumGasPriceRange(99n)).to.deep.equal({ lowest: 98n, highest: 100n });
    expect(minimumGasPriceRange(100n)).to.deep.equal({ lowest: 99n, highest: 101n });
    expect(minimumGasPriceRange(1_999n)).to.deep.equal({ lowest: 1_980n, highest: 2_018n });
  });

  it("number is the parent's + 1: 42 passes after 41, 43 and 41 do not", () => {
    expect(check({ number: 42n })).to.deep.equal(passed);
    expect(check({ number: 43n })).to.deep.include({ ok: false, rule: "parentNumber", reason: "number 43 does not follow the parent's 41" });
    expect(check({ number: 41n })).to.include({ rule: "parentNumber" });
  });

  it("timestamp after the parent's: 1 s after passes, the same second does not; regtest turns the rule off", () => {
    expect(check({ timestamp: 1_001n })).to.deep.equal(passed);
    expect(check({ timestamp: 1_000n })).to.include({ ok: false, rule: "timestampAfterParent" });
    expect(check({ timestamp: 1_000n }, regtest)).to.deep.equal(passed);
    expect(check({ timestamp: 999n }, regtest)).to.deep.equal(passed);
  });

  it("difficulty is the computed one, not one more or less", () => {
    const computed = childHeader(parent, "", {}, testnet.constants).fields.difficulty;
    expect(computed).to.equal(1_002_500n);
    expect(check({ difficulty: computed + 1n })).to.deep.include({ ok: false, rule: "difficulty", reason: "difficulty 1002501 is not the computed 1002500" });
    expect(check({ difficulty: computed - 1n })).to.include({ rule: "difficulty" });
    // The uncle count is part of the computation: with 1 uncle 5 s is still sooner than 28 s.
    expect(check({ uncleCount: 1 })).to.deep.equal(passed);
  });

  it("gas limit within parent·1023/1024..parent·1025/1024, rounded down", () => {
    expect(gasLimitRange(10_000_000n, 1024n)).to.deep.equal({ lowest: 9_990_234n, highest: 10_009_765n });
    for (const gasLimit of [9_990_234n, 10_009_765n]) expect(check({ gasLimit }), `${gasLimit}`).to.deep.equal(passed);
    for (const gasLimit of [9_990_233n, 10_009_766n]) expect(check({ gasLimit }), `${gasLimit}`).to.include({ ok: false, rule: "parentGasLimit" });
  });

  it("the first broken rule in the reference's order is the one reported", () => {
    expect(check({ minimumGasPrice: 2_000n, number: 50n, timestamp: 1_000n, gasLimit: 1n })).to.include({ rule: "minimumGasPrice" });
    expect(check({ number: 50n, timestamp: 1_000n, gasLimit: 1n })).to.include({ rule: "parentNumber" });
    expect(check({ timestamp: 1_000n, difficulty: 7n, gasLimit: 1n })).to.include({ rule: "timestampAfterParent" });
    expect(check({ difficulty: 7n, gasLimit: 1n })).to.include({ rule: "difficulty" });
  });
});
