// Wallet: personal-message signing (EIP-191, checked with ethers) and locking.
import { expect } from "chai";
import { hashMessage, keccak256, toUtf8Bytes, verifyMessage, Wallet as EthersWallet } from "ethers";
import { personalMessageHash, Wallet } from "../../../src/accounts/wallet.js";
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
