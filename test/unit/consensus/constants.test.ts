import { expect } from "chai";
import { networkProfiles } from "../../../src/chain/networks.js";
import { consensusConstantsFor } from "../../../src/consensus/constants.js";

describe("consensus/constants", () => {
  it("each network profile has the brief's values: target time, divisor, minimum difficulty, future limit, reset", () => {
    const table = networkProfiles.map((profile) => {
      const constants = consensusConstantsFor(profile);
      return [profile.networkId, constants.durationLimit, constants.difficultyBoundDivisor, constants.minimumDifficulty, constants.newBlockMaxSecondsInTheFuture, constants.difficultyResetAfterSeconds];
    });
    expect(table).to.deep.equal([
      [30, 14n, 400n, 1n, 60n, undefined],
      [31, 14n, 400n, 1n, 540n, 600n],
      [32, 14n, 400n, 1n, 540n, 600n],
      [33, 10n, 2048n, 1n, 0n, 600n],
    ]);
  });

  it("the limits shared by every profile: uncles 10 in 7 generations, gas limit ±1/1024 and ≥ 3,000,000, extra data ≤ 32 bytes", () => {
    for (const profile of networkProfiles) {
      const constants = consensusConstantsFor(profile);
      expect([constants.uncleListLimit, constants.uncleGenerationLimit, constants.gasLimitBoundDivisor, constants.minimumGasLimit, constants.maximumExtraDataSize, constants.blockGasPriceCapMultiplier]).to.deep.equal([
        10, 7, 1024n, 3_000_000n, 32, 100n,
      ]);
      expect(constants.maxParentChainTimestampDifference).to.equal(profile.networkId === 31 ? 7_200n : 300n);
    }
  });

  it("a network id without constants is refused, not given another network's", () => {
    expect(() => consensusConstantsFor({ networkId: 34 })).to.throw("no consensus constants for network 34");
  });
});
