import { expect } from "chai";
import { createAddressFromPrivateKey } from "@ethereumjs/util";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { findNetworkProfile, regtestDevelopmentAccounts, regtestMinerAccount } from "../../../src/chain/networks.js";

describe("network profiles", () => {
  it("the regtest development accounts are keccak-256 of their seeds, funded with 10^30 wei", () => {
    const regtest = findNetworkProfile(33)!;
    expect(regtestDevelopmentAccounts.map((account) => account.seed)).to.deep.equal(["cow", ...Array.from({ length: 9 }, (_, index) => `cow${index + 1}`)]);
    for (const account of regtestDevelopmentAccounts) {
      const derived = createAddressFromPrivateKey(keccak_256(new TextEncoder().encode(account.seed)));
      expect(derived.toString(), account.seed).to.equal(`0x${account.address}`);
      expect(regtest.genesis.alloc.get(account.address)?.balance, account.seed).to.equal(10n ** 30n);
    }
  });

  it("the regtest miner account is keccak-256 of its secret, not funded", () => {
    const regtest = findNetworkProfile(33)!;
    expect(regtest.minerAccount).to.equal(regtestMinerAccount);
    const derived = createAddressFromPrivateKey(keccak_256(new TextEncoder().encode("regtest_miner_secret_please_change")));
    expect(derived.toString()).to.equal(`0x${regtestMinerAccount.address}`);
    expect(regtest.genesis.alloc.has(regtestMinerAccount.address)).to.equal(false);
  });

  it("networks 30, 31 and 32 start empty, without development accounts", () => {
    for (const id of [30, 31, 32]) {
      const profile = findNetworkProfile(id)!;
      expect(profile.chainId).to.equal(BigInt(id));
      expect(profile.genesis.alloc.size).to.equal(0);
      expect(profile.developmentAccounts).to.have.length(0);
      expect(profile.minerAccount).to.equal(undefined);
    }
  });
});
