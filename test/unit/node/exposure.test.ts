// When the node warns that its unlocked development accounts can be reached from other machines.
import { expect } from "chai";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { exposesUnlockedAccounts } from "../../../src/node/node.js";

describe("node: exposure of unlocked accounts", () => {
  it("is a bind beyond loopback on a network with development accounts", () => {
    const regtest = findNetworkProfile(33)!;
    const devnet = findNetworkProfile(32)!;
    for (const host of ["0.0.0.0", "::", "192.168.1.20"]) expect(exposesUnlockedAccounts(host, regtest), host).to.equal(true);
    for (const host of ["127.0.0.1", "localhost", "::1"]) expect(exposesUnlockedAccounts(host, regtest), host).to.equal(false);
    expect(exposesUnlockedAccounts("0.0.0.0", devnet)).to.equal(false);
  });
});
