import { expect } from "chai";
import { engineErrorMessage } from "../../../src/common/engineErrors.js";

describe("common: engine error messages", () => {
  it("drops the context @ethereumjs appends to a message", () => {
    const funds =
      "sender doesn't have enough funds to send tx. The upfront cost is: 1 and the sender's account (0x00000000000000000000000000000000000000aa) only has: 0";
    const context =
      " (vm hf=shanghai -> block number=17 hash=0x0b1e hf=shanghai baseFeePerGas=0 txs=0 uncles=0 -> tx type=0 hash=not available (unsigned) nonce=0 value=1 signed=false hf=shanghai gasPrice=0)";
    expect(engineErrorMessage(new Error(funds + context))).to.equal(funds);
    expect(engineErrorMessage(new Error("gasLimit is too low. given 0, need at least 21000 (tx type=0 hash=0x01 nonce=0 value=0 signed=true hf=shanghai gasPrice=0)"))).to.equal(
      "gasLimit is too low. given 0, need at least 21000",
    );
    expect(engineErrorMessage(new Error("invalid chain id (hardfork=shanghai)"))).to.equal("invalid chain id");
    expect(engineErrorMessage(new Error("INTRINSIC_GAS_TOO_LOW: tx gas limit 0 is lower than the minimum gas limit of 21000 (vm hf=shanghai -> block number=8)"))).to.equal(
      "tx gas limit 0 is lower than the minimum gas limit of 21000",
    );
  });

  it("keeps a message without that context, parentheses and all", () => {
    expect(engineErrorMessage(new Error("the sender's account (0x01) only has: 0"))).to.equal("the sender's account (0x01) only has: 0");
    expect(engineErrorMessage("not an Error")).to.equal("not an Error");
  });

  it("words the RLP decoder's message for an input cut short without its helper's name", () => {
    expect(engineErrorMessage(new Error("invalid RLP (safeSlice): end slice of Uint8Array out-of-bounds"))).to.equal("invalid RLP: the input ends inside an item");
    expect(engineErrorMessage(new Error("invalid RLP: extra zeros"))).to.equal("invalid RLP: extra zeros");
  });

  it("names the engine's base fee as the block's minimum gas price", () => {
    expect(engineErrorMessage(new Error("Transaction's gasPrice (1) is less than the block's baseFeePerGas (1000) (vm hf=shanghai -> block number=1)"))).to.equal(
      "transaction's gas price (1) lower than block's minimum (1000)",
    );
  });
});
