import { expect } from "chai";
import { RLP } from "@ethereumjs/rlp";
import { createAccessList2930Tx, createFeeMarket1559Tx, createLegacyTx, createLegacyTxFromRLP, createTxFromRLP } from "@ethereumjs/tx";
import { Address } from "@ethereumjs/util";
import {
  decodeOwnTransaction,
  decodeRawTransaction,
  effectiveGasPrice,
  impersonatedSenderOf,
  impersonatedTransaction,
  MalformedTransactionError,
  restoreTransaction,
} from "../../../src/chain/transactions.js";
import { keccak256 } from "../../../src/common/crypto.js";
import { signRecoverable } from "../../../src/common/signatures.js";
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

  it("hash and sender are the package's, EIP-155 protected or not, with or without a recipient", () => {
    // v = 27/28: signed over the six fields alone, without a chain id.
    const unsignedFields = [Uint8Array.of(5), Uint8Array.of(0x03, 0xe8), Uint8Array.of(0x52, 0x08), new Uint8Array(20).fill(2), Uint8Array.of(1), new Uint8Array(0)];
    const recoverable = signRecoverable(keccak256(RLP.encode(unsignedFields)), key);
    const unprotected = RLP.encode([...unsignedFields, Uint8Array.of(27 + recoverable[0]!), recoverable.subarray(1, 33), recoverable.subarray(33)]);
    const cases = [
      signed({ nonce: 0n, to: new Uint8Array(20).fill(7) }),
      signed({ nonce: 0x80n, data: new Uint8Array([0x60, 0x00]) }),
      signed({ nonce: 2n ** 40n, to: new Uint8Array(20).fill(0xfe), data: new Uint8Array(300).fill(0xab) }),
      unprotected,
    ];
    for (const raw of cases) {
      const reference = createLegacyTxFromRLP(raw, { common });
      const decoded = decodeRawTransaction(raw, common);
      expect(bytesToHex(decoded.hash)).to.equal(bytesToHex(reference.hash()));
      expect(bytesToHex(decoded.sender)).to.equal(reference.getSenderAddress().toString());
      expect(bytesToHex(decoded.tx.hash())).to.equal(bytesToHex(reference.hash()));
    }
    expect(createLegacyTxFromRLP(cases[3]!, { common }).v).to.be.oneOf([27n, 28n]);
  });

  it("a signature that recovers no key is refused as an invalid signature", () => {
    const fields = RLP.decode(signed({ nonce: 1n, to: new Uint8Array(20).fill(7) })) as Uint8Array[];
    fields[7] = new Uint8Array(0); // r = 0
    expect(reasonOf(() => decodeRawTransaction(RLP.encode(fields), common))).to.equal("signature");
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

  it("typed transactions: only when the node takes them, with the package's hash and sender; stored ones decode either way", () => {
    const to = new Address(new Uint8Array(20).fill(7));
    const accessList = [[new Uint8Array(20).fill(7), [new Uint8Array(32)]]] as [Uint8Array, Uint8Array[]][];
    const cases = [
      createAccessList2930Tx({ chainId: 33n, nonce: 1n, gasPrice: 5n, gasLimit: 30_000n, to, value: 2n, accessList }, { common }).sign(key).serialize(),
      createFeeMarket1559Tx({ chainId: 33n, nonce: 2n, maxFeePerGas: 9n, maxPriorityFeePerGas: 3n, gasLimit: 30_000n, to, accessList }, { common }).sign(key).serialize(),
    ];
    for (const raw of cases) {
      expect(reasonOf(() => decodeRawTransaction(raw, common))).to.equal("typed");
      const reference = createTxFromRLP(raw, { common });
      const decoded = decodeRawTransaction(raw, common, true);
      expect(decoded.tx.type).to.equal(raw[0]);
      expect(bytesToHex(decoded.hash)).to.equal(bytesToHex(reference.hash()));
      expect(bytesToHex(decoded.sender)).to.equal(cow);
      const restored = restoreTransaction(raw, decoded.sender, common);
      expect(bytesToHex(restored.tx.serialize())).to.equal(bytesToHex(raw));
      expect(bytesToHex(restored.hash)).to.equal(bytesToHex(decoded.hash));
      // A longer encoding of the same list (its length in two bytes) is refused: its hash would not be the transaction's.
      expect(raw[1]).to.equal(0xf8);
      const padded = Uint8Array.from([raw[0]!, 0xf9, 0x00, ...raw.subarray(2)]);
      expect(reasonOf(() => decodeRawTransaction(padded, common, true))).to.equal("undecodable");
    }
    // The fee market one pays min(9, base fee + 3): 3 + base fee up to a base fee of 6, 9 after.
    const feeMarket = decodeRawTransaction(cases[1]!, common, true).tx;
    expect([0n, 6n, 7n, 100n].map((baseFee) => effectiveGasPrice(feeMarket, baseFee))).to.deep.equal([3n, 9n, 9n, 9n]);
    expect(effectiveGasPrice(decodeRawTransaction(cases[0]!, common, true).tx, 100n)).to.equal(5n);
    // 0x03 and 0x04 are refused by name, with the flag too.
    for (const type of [3, 4]) expect(reasonOf(() => decodeRawTransaction(Uint8Array.from([type, 0xc0]), common, true))).to.equal("typed");
  });

  it("a typed transaction from an impersonated sender names it in its stand-in signature", () => {
    const sender = new Uint8Array(20).fill(0xee);
    const fields = { nonce: 0n, gasPrice: 0n, gasLimit: 21_000n, to: new Uint8Array(20).fill(7), value: 1n, data: new Uint8Array(0) };
    for (const type of [0, 1, 2] as const) {
      const transaction = impersonatedTransaction({ ...fields, type, maxFeePerGas: 4n, maxPriorityFeePerGas: 1n }, sender, common);
      expect(transaction.tx.type).to.equal(type);
      expect(bytesToHex(impersonatedSenderOf(transaction.raw)!)).to.equal(bytesToHex(sender));
      expect(bytesToHex(restoreTransaction(transaction.raw, sender, common).hash)).to.equal(bytesToHex(transaction.hash));
    }
  });
});
