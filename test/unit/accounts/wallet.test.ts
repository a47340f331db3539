// Wallet: personal-message signing (EIP-191, checked with ethers), locking, the limit on wrong
// passphrases, and a wallet that may not unlock (a bind beyond loopback).
import { expect } from "chai";
import { hashMessage, keccak256, toUtf8Bytes, Transaction, verifyMessage, Wallet as EthersWallet } from "ethers";
import { WrongPassphraseError } from "../../../src/accounts/keystore.js";
import { maxPassphraseFailures, passphraseWindowMs, personalMessageHash, TooManyPassphraseAttemptsError, UnlockForbiddenError, Wallet } from "../../../src/accounts/wallet.js";
import { createExecutionRules } from "../../../src/execution/rules.js";

const cow = "cd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const cowAddress = new Uint8Array(Buffer.from(cow, "hex"));

function hex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes).toString("hex")}`;
}

describe("accounts: wallet message signing", () => {
  let wallet: Wallet;
  beforeEach(() => {
    wallet = new Wallet(createExecutionRules(33n));
    wallet.addSeededAccount("cow", cow);
  });

  it("hashes with the EIP-191 personal-message prefix and the decimal byte length, as ethers does", () => {
    for (const message of [new Uint8Array(0), toUtf8Bytes("Hello"), new Uint8Array(300).fill(0xab)]) {
      expect(hex(personalMessageHash(message))).to.equal(hashMessage(message));
    }
  });

  it("signs r || s || v with v 27 or 28, the same bytes as ethers' signMessage, recovered by verifyMessage", async () => {
    const reference = new EthersWallet(keccak256(toUtf8Bytes("cow")));
    for (const text of ["", "Hello, chain-node!", "x".repeat(1000)]) {
      const message = toUtf8Bytes(text);
      const signature = wallet.signMessage(cowAddress, message)!;
      expect(signature).to.have.length(65);
      expect(signature[64]).to.be.oneOf([27, 28]);
      expect(hex(signature)).to.equal(await reference.signMessage(message));
      expect(verifyMessage(message, hex(signature)).toLowerCase()).to.equal(`0x${cow}`);
    }
  });

  it("signs nothing for an account it does not hold, or holds locked", () => {
    expect(wallet.signMessage(new Uint8Array(20).fill(0xaa), toUtf8Bytes("x"))).to.equal(undefined);
    expect(wallet.lock(new Uint8Array(20).fill(0xaa))).to.equal(false);
    expect(wallet.lock(cowAddress)).to.equal(true);
    expect(wallet.isUnlocked(cowAddress)).to.equal(false);
    expect(wallet.signMessage(cowAddress, toUtf8Bytes("x"))).to.equal(undefined);
  });
});

describe("accounts: wallet passphrase guessing", () => {
  const cheapScrypt = { n: 16, r: 1, p: 1 };

  async function walletWithAccount() {
    let clock = 1_000_000;
    const lockouts: string[] = [];
    const wallet = new Wallet(createExecutionRules(33n), { scrypt: cheapScrypt, now: () => clock, onPassphraseLockout: (address) => lockouts.push(address) });
    const address = await wallet.newAccount("right");
    wallet.lock(address);
    return { wallet, address, lockouts, advance: (ms: number) => (clock += ms) };
  }

  async function failure(attempt: Promise<unknown>): Promise<Error> {
    try {
      await attempt;
    } catch (error) {
      return error as Error;
    }
    throw new Error("the attempt succeeded");
  }

  it(`refuses every passphrase for the rest of the minute after ${maxPassphraseFailures} wrong ones, and reports it once`, async () => {
    const { wallet, address, lockouts, advance } = await walletWithAccount();
    // Right passphrases do not count.
    expect(await wallet.unlock(address, "right")).to.equal(true);
    for (let attempt = 0; attempt < maxPassphraseFailures; attempt++) expect(await failure(wallet.unlock(address, `wrong ${attempt}`))).to.be.instanceOf(WrongPassphraseError);
    expect(lockouts).to.deep.equal([Buffer.from(address).toString("hex")]);
    advance(15_000);
    const refused = await failure(wallet.unlock(address, "right"));
    expect(refused).to.be.instanceOf(TooManyPassphraseAttemptsError);
    expect(refused.message).to.equal(`too many wrong passphrases for account 0x${Buffer.from(address).toString("hex")}; try again in 45 s`);
    // Sending with a passphrase counts against the same account.
    expect(await failure(wallet.signTransactionWithPassphrase(address, "right", () => Promise.reject(new Error("not reached"))))).to.be.instanceOf(TooManyPassphraseAttemptsError);
    expect(lockouts).to.have.length(1);

    advance(passphraseWindowMs - 15_000);
    expect(await wallet.unlock(address, "right")).to.equal(true);
  });

  it("holds parallel guesses to the same limit", async () => {
    const { wallet, address } = await walletWithAccount();
    const attempts = await Promise.all(Array.from({ length: maxPassphraseFailures + 5 }, (_, index) => failure(wallet.unlock(address, `wrong ${index}`))));
    expect(attempts.filter((error) => error instanceof WrongPassphraseError)).to.have.length(maxPassphraseFailures);
    expect(attempts.filter((error) => error instanceof TooManyPassphraseAttemptsError)).to.have.length(5);
  });
});

describe("accounts: a wallet that may not unlock", () => {
  const cheapScrypt = { n: 16, r: 1, p: 1 };
  const unsigned = { nonce: 0n, gasPrice: 0n, gasLimit: 21_000n, to: new Uint8Array(20).fill(0xbb), value: 1n, data: new Uint8Array(0) };
  let wallet: Wallet;
  beforeEach(() => {
    wallet = new Wallet(createExecutionRules(33n), { scrypt: cheapScrypt, unlockAllowed: false });
    wallet.addSeededAccount("cow", cow);
  });

  function expectLocked(address: Uint8Array): void {
    expect(wallet.isUnlocked(address)).to.equal(false);
    expect(wallet.signMessage(address, toUtf8Bytes("x"))).to.equal(undefined);
    expect(wallet.signTransaction(address, unsigned)).to.equal(undefined);
  }

  it("lists development, new and imported accounts, all locked", async () => {
    const created = await wallet.newAccount("pw");
    const imported = await wallet.importRawKey(new Uint8Array(32).fill(7), "pw");
    expect((await wallet.listAccounts()).map(hex)).to.deep.equal([`0x${cow}`, hex(created), hex(imported)]);
    for (const address of [cowAddress, created, imported]) expectLocked(address);
    expect(wallet.unlockedAddresses()).to.deep.equal([]);
  });

  it("refuses to unlock, whatever the passphrase, and to make an account from a seed", async () => {
    const created = await wallet.newAccount("pw");
    for (const passphrase of ["pw", "wrong"]) {
      let refusal: unknown;
      await wallet.unlock(created, passphrase).catch((error: unknown) => (refusal = error));
      expect(refusal).to.be.instanceOf(UnlockForbiddenError);
    }
    expectLocked(created);
    expect(() => wallet.addAccountFromSeed("seed")).to.throw(UnlockForbiddenError);
    expect(wallet.addresses()).to.have.length(2);
  });

  it("still signs one transaction with the passphrase, and stays locked", async () => {
    const created = await wallet.newAccount("pw");
    const raw = await wallet.signTransactionWithPassphrase(created, "pw", async () => unsigned);
    expect(Transaction.from(hex(raw)).from?.toLowerCase()).to.equal(hex(created));
    expectLocked(created);
  });
});
