// What a bind means for keys: where unlocking is allowed (loopback, or beyond it with
// --allow-insecure-unlock) and where a private key may be exported (loopback only), and the
// personal_ answers that follow from both. The same over real sockets: test/rpc/personal/exposure.test.ts.
import { expect } from "chai";
import { Wallet } from "../../../src/accounts/wallet.js";
import type { Chain } from "../../../src/chain/chain.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import type { Miner } from "../../../src/mining/miner.js";
import { keyExportAllowedOn, unlockAllowedOn } from "../../../src/node/keyExposure.js";
import { RpcError } from "../../../src/rpc/errors.js";
import { createPersonalHandlers } from "../../../src/rpc/methods/personal.js";
import { createTransactionSending } from "../../../src/rpc/methods/transactionSending.js";
import type { TransactionPool } from "../../../src/txpool/transactionPool.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const loopbackHosts = ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"];
const otherHosts = ["0.0.0.0", "::", "192.168.1.20", "fd00::2"];

async function refusal(call: () => unknown): Promise<{ code: number; message: string }> {
  try {
    await call();
  } catch (error) {
    expect(error).to.be.instanceOf(RpcError);
    return { code: (error as RpcError).code, message: (error as RpcError).message };
  }
  return expect.fail("the call succeeded");
}

function personalHandlers(wallet: Wallet, keyExportAllowed: boolean) {
  const common = createExecutionRules(33n);
  return createPersonalHandlers({ wallet, sending: createTransactionSending({ common, chain: {} as Chain, pool: {} as TransactionPool, miner: {} as Miner, typedTransactions: false }), keyExportAllowed });
}

describe("node: keys on a bind beyond loopback", () => {
  it("allows unlocking on loopback, and beyond it only with --allow-insecure-unlock", () => {
    for (const host of loopbackHosts) expect(unlockAllowedOn({ host, allowInsecureUnlock: false }), host).to.equal(true);
    for (const host of otherHosts) {
      expect(unlockAllowedOn({ host, allowInsecureUnlock: false }), host).to.equal(false);
      expect(unlockAllowedOn({ host, allowInsecureUnlock: true }), host).to.equal(true);
    }
  });

  it("allows exporting a key on loopback only", () => {
    for (const host of loopbackHosts) expect(keyExportAllowedOn(host), host).to.equal(true);
    for (const host of otherHosts) expect(keyExportAllowedOn(host), host).to.equal(false);
  });

  it("answers personal_unlockAccount with geth's refusal where unlocking is not allowed, before any key file is read", async () => {
    const wallet = new Wallet(createExecutionRules(33n), { unlockAllowed: false });
    const handlers = personalHandlers(wallet, false);
    const address = await handlers.personal_newAccount(["secret"], {} as never);
    // A wrong passphrase would answer WrongPassphrase if the file were tried.
    for (const passphrase of ["secret", "wrong"]) {
      expect(await refusal(() => handlers.personal_unlockAccount([address, passphrase, undefined], {} as never))).to.deep.equal({ code: -32000, message: "account unlock with HTTP access is forbidden" });
    }
    expect(wallet.isUnlocked(Buffer.from(address.slice(2), "hex"))).to.equal(false);
  });

  it("refuses personal_dumpRawKey where export is not allowed, even for an unlocked account", async () => {
    const wallet = new Wallet(createExecutionRules(33n));
    wallet.addSeededAccount("cow", cow.slice(2));
    expect(await refusal(() => personalHandlers(wallet, false).personal_dumpRawKey([cow], {} as never))).to.deep.equal({ code: -32000, message: "private key export is forbidden on a node bound beyond loopback" });
    expect(await personalHandlers(wallet, true).personal_dumpRawKey([cow], {} as never)).to.match(/^0x[0-9a-f]{64}$/);
  });
});
