// When the node warns that its unlocked development accounts can be reached from other machines,
// and when it refuses personal_unlockAccount (a bind beyond loopback without --allow-insecure-unlock).
import { expect } from "chai";
import { Wallet } from "../../../src/accounts/wallet.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import type { Miner } from "../../../src/mining/miner.js";
import { exposesUnlockedAccounts, unlockAllowedOn } from "../../../src/node/node.js";
import { RpcError } from "../../../src/rpc/errors.js";
import { createPersonalHandlers } from "../../../src/rpc/methods/personal.js";
import { createTransactionSending } from "../../../src/rpc/methods/transactionSending.js";
import type { TransactionPool } from "../../../src/txpool/transactionPool.js";

describe("node: exposure of unlocked accounts", () => {
  it("is a bind beyond loopback on a network with development accounts", () => {
    const regtest = findNetworkProfile(33)!;
    const devnet = findNetworkProfile(32)!;
    for (const host of ["0.0.0.0", "::", "192.168.1.20"]) expect(exposesUnlockedAccounts(host, regtest), host).to.equal(true);
    for (const host of ["127.0.0.1", "localhost", "::1"]) expect(exposesUnlockedAccounts(host, regtest), host).to.equal(false);
    expect(exposesUnlockedAccounts("0.0.0.0", devnet)).to.equal(false);
  });

  it("allows unlocking on loopback, and beyond it only with --allow-insecure-unlock", () => {
    for (const host of ["127.0.0.1", "localhost", "::1"]) expect(unlockAllowedOn({ host, allowInsecureUnlock: false }), host).to.equal(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.20"]) {
      expect(unlockAllowedOn({ host, allowInsecureUnlock: false }), host).to.equal(false);
      expect(unlockAllowedOn({ host, allowInsecureUnlock: true }), host).to.equal(true);
    }
  });

  it("answers personal_unlockAccount with geth's refusal where unlocking is not allowed, without trying the passphrase", async () => {
    const common = createExecutionRules(33n);
    const wallet = new Wallet(common);
    let tried = false;
    wallet.unlock = async () => (tried = true);
    const handlers = createPersonalHandlers({ wallet, sending: createTransactionSending({ common, pool: {} as TransactionPool, miner: {} as Miner }), unlockAllowed: false });
    let refusal: unknown;
    try {
      await handlers.personal_unlockAccount(["0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826", "secret", undefined], {} as never);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).to.be.instanceOf(RpcError);
    expect({ code: (refusal as RpcError).code, message: (refusal as RpcError).message }).to.deep.equal({ code: -32000, message: "account unlock with HTTP access is forbidden" });
    expect(tried).to.equal(false);
  });
});
