// A received transaction's sender comes from the recovery it is given (the node's: the offload):
// a signature without a signer is refused as such and changes nothing, and any other failure of
// the recovery is not passed off as a bad signature.
import { expect } from "chai";
import { Wallet, getBytes, keccak256, toUtf8Bytes } from "ethers";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { createLogger } from "../../../src/common/logger.js";
import { recoverSignerKey, SignatureRecoveryError } from "../../../src/common/signatures.js";
import { openChainServices, type ChainServices } from "../../../src/node/chainServices.js";
import { defaultNodeOptions } from "../../../src/node/options.js";
import { RpcError } from "../../../src/rpc/errors.js";
import { createTransactionSending } from "../../../src/rpc/methods/transactionSending.js";

describe("rpc/methods/transactionSending: the sender's recovery", function () {
  this.timeout(20_000);
  const cow = new Wallet(keccak256(toUtf8Bytes("cow")));
  let services: ChainServices;
  let raw: Uint8Array;

  beforeEach(async () => {
    services = await openChainServices(findNetworkProfile(33)!, { dataDir: undefined, inMemory: true }, defaultNodeOptions.chain, createLogger("silent"));
    raw = getBytes(await cow.signTransaction({ type: 0, chainId: 33n, nonce: 0, gasLimit: 21_000n, gasPrice: 0n, to: "0x00000000000000000000000000000000000000aa", value: 1n }));
  });
  afterEach(() => services.close());

  /** The rejection of `promise`, or undefined when it resolved. */
  async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
    return promise.then(
      () => undefined,
      (error: unknown) => error,
    );
  }

  it("refuses a signature the recovery finds no signer for, and mines nothing", async () => {
    const sending = createTransactionSending({ ...services, recoverSignerKey: () => Promise.reject(new SignatureRecoveryError("Public key could not be recover")) });
    const refusal = await rejectionOf(sending.submitRaw(raw));
    expect(refusal).to.be.instanceOf(RpcError);
    expect(refusal).to.include({ code: -32010, message: "invalid transaction signature" });
    expect(services.pool.pending()).to.have.length(0);
    expect(services.chain.head.number).to.equal(0n);
  });

  it("passes on any other failure of the recovery as it is, not as a bad signature", async () => {
    const failure = new Error("the recovery thread broke");
    const sending = createTransactionSending({ ...services, recoverSignerKey: () => Promise.reject(failure) });
    expect(await rejectionOf(sending.submitRaw(raw))).to.equal(failure);
    expect(services.chain.head.number).to.equal(0n);
  });

  it("mines the transaction with the sender the node's recovery gives", async () => {
    const recoveries: Uint8Array[] = [];
    const sending = createTransactionSending({
      ...services,
      recoverSignerKey: async (signature) => {
        // The offload's (absent on a machine with one core: the main thread's).
        const key = await (services.recoverSignerKey?.(signature) ?? recoverSignerKey(signature));
        recoveries.push(key);
        return key;
      },
    });
    const hash = await sending.submitRaw(raw);
    expect(recoveries).to.have.length(1);
    const location = await services.chain.getTransactionLocation(getBytes(hash));
    const block = await services.chain.getBlockByHash(location!.blockHash);
    expect(Buffer.from(block!.transactions[0]!.sender).toString("hex")).to.equal(cow.address.slice(2).toLowerCase());
    expect(Buffer.from(recoveries[0]!).toString("hex")).to.equal(cow.signingKey.publicKey.slice(4));
  });
});
