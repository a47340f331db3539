import { expect } from "chai";
import { createLegacyTx } from "@ethereumjs/tx";
import { Address } from "@ethereumjs/util";
import { decodeOwnTransaction, decodeRawTransaction, MalformedTransactionError } from "../../../src/chain/transactions.js";
import { keccak256 } from "../../../src/common/crypto.js";
import { bytesToHex } from "../../../src/common/hex.js";
import { createExecutionRules } from "../../../src/execution/rules.js";

const common = createExecutionRules(33n);
const key = keccak256(new TextEncoder().encode("cow"));
const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";

/** `allowUnlimitedInitCodeSize` lets a test sign what the chain must refuse. */
function signed(fields: { nonce: bigint; data?: Uint8Array; to?: Uint8Array }, allowUnlimitedInitCodeSize = false): Uint8Array {
  const to = fields.to === undefined ? undefined : new Address(fields.to);
  return createLegacyTx({ nonce: fields.nonce, gasLimit: 100_000n, to, data: fields.data }, { common, allowUnlimitedInitCodeSize }).sign(key).serialize();
}

function reasonOf(decode: () => unknown): string | undefined {
  try {
    decode();
  } catch (error) {
    if (error instanceof MalformedTransactionError) return error.reason;
    throw error;
  }
  return undefined;
}

describe("signed transactions", () => {
  it("a transaction the node signed decodes to what recovering its sender gives", () => {
    const raw = signed({ nonce: 3n, to: new Uint8Array(20).fill(9), data: new Uint8Array([1, 2, 3]) });
    const recovered = decodeRawTransaction(raw, common);
    const own = decodeOwnTransaction(raw, recovered.sender, common);
    expect(bytesToHex(recovered.sender)).to.equal(cow);
    expect(bytesToHex(own.sender)).to.equal(cow);
    expect(bytesToHex(own.hash)).to.equal(bytesToHex(recovered.hash));
    expect(own.tx.getSenderAddress().toString()).to.equal(cow);
    expect(own.tx.nonce).to.equal(3n);
    expect(Object.isFrozen(own.tx)).to.equal(true);
  });

  it("a transaction the node signed goes through the same checks as a received one", () => {
    const sender = new Uint8Array(20).fill(1);
    const typed = Uint8Array.from([0x02, 0xc0]);
    expect(reasonOf(() => decodeOwnTransaction(typed, sender, common))).to.equal("typed");
    expect(reasonOf(() => decodeOwnTransaction(Uint8Array.from([0xc1, 0x80]), sender, common))).to.equal("undecodable");
    const otherChain = createLegacyTx({ nonce: 0n, gasLimit: 21_000n }, { common: createExecutionRules(31n) }).sign(key).serialize();
    expect(reasonOf(() => decodeOwnTransaction(otherChain, sender, common))).to.equal("chainId");
    const oversizedInitCode = signed({ nonce: 0n, data: new Uint8Array(49_153) }, true);
    expect(reasonOf(() => decodeOwnTransaction(oversizedInitCode, sender, common))).to.equal("initCode");
    expect(reasonOf(() => decodeRawTransaction(oversizedInitCode, common))).to.equal("initCode");
  });
});
