// A received transaction's sender comes from the recovery it is given (the node's: the offload):
// a signature without a signer is refused as such and changes nothing, and any other failure of
// the recovery is not passed off as a bad signature. Sends a batch will make can be recovered
// ahead: each takes its key when it comes, and the ones that never come are let go.
import { expect } from "chai";
import { Wallet, getBytes, keccak256, toUtf8Bytes } from "ethers";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { createLogger } from "../../../src/common/logger.js";
import { recoverSignerKey, SignatureRecoveryError, type RecoverableSignature, type RecoveryAhead, type SenderRecovery } from "../../../src/common/signatures.js";
import { openChainServices, type ChainServices } from "../../../src/node/chainServices.js";
import { defaultNodeOptions } from "../../../src/node/options.js";
import { RpcError } from "../../../src/rpc/errors.js";
import { createTransactionSending } from "../../../src/rpc/methods/transactionSending.js";

describe("rpc/methods/transactionSending: the sender's recovery", function () {
  this.timeout(20_000);
  const cow = new Wallet(keccak256(toUtf8Bytes("cow")));
  let services: ChainServices;
  let raw: string;

  beforeEach(async () => {
    services = await openChainServices(findNetworkProfile(33)!, { dataDir: undefined, inMemory: true }, defaultNodeOptions.chain, createLogger("silent"));
    raw = await signedTransfer(0);
  });
  afterEach(() => services.close());

  /** cow's transfer of 1 wei with `nonce`, signed (hex). */
  function signedTransfer(nonce: number): Promise<string> {
    return cow.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice: 0n, to: "0x00000000000000000000000000000000000000aa", value: 1n });
  }

  /** A recovery that answers `recover` in order and never recovers ahead. */
  function inOrderOnly(recover: (signature: RecoverableSignature) => Promise<Uint8Array>): SenderRecovery {
    return { recover, recoverAhead: () => undefined };
  }

  /** The rejection of `promise`, or undefined when it resolved. */
  async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
    return promise.then(
      () => undefined,
      (error: unknown) => error,
    );
  }

  it("refuses a signature the recovery finds no signer for, and mines nothing", async () => {
    const sending = createTransactionSending({ ...services, senderRecovery: inOrderOnly(() => Promise.reject(new SignatureRecoveryError("Public key could not be recover"))) });
    const refusal = await rejectionOf(sending.submitRaw(raw));
    expect(refusal).to.be.instanceOf(RpcError);
    expect(refusal).to.include({ code: -32010, message: "invalid transaction signature" });
    expect(services.pool.pending()).to.have.length(0);
    expect(services.chain.head.number).to.equal(0n);
  });

  it("passes on any other failure of the recovery as it is, not as a bad signature", async () => {
    const failure = new Error("the recovery thread broke");
    const sending = createTransactionSending({ ...services, senderRecovery: inOrderOnly(() => Promise.reject(failure)) });
    expect(await rejectionOf(sending.submitRaw(raw))).to.equal(failure);
    expect(services.chain.head.number).to.equal(0n);
  });

  it("mines the transaction with the sender the node's recovery gives", async () => {
    const recoveries: Uint8Array[] = [];
    const sending = createTransactionSending({
      ...services,
      senderRecovery: inOrderOnly(async (signature) => {
        // The offload's (absent on a machine with one core: the main thread's).
        const key = await (services.senderRecovery?.recover(signature) ?? recoverSignerKey(signature));
        recoveries.push(key);
        return key;
      }),
    });
    const hash = await sending.submitRaw(raw);
    expect(recoveries).to.have.length(1);
    const location = await services.chain.getTransactionLocation(getBytes(hash));
    const block = await services.chain.getBlockByHash(location!.blockHash);
    expect(Buffer.from(block!.transactions[0]!.sender).toString("hex")).to.equal(cow.address.slice(2).toLowerCase());
    expect(Buffer.from(recoveries[0]!).toString("hex")).to.equal(cow.signingKey.publicKey.slice(4));
  });

  describe("ahead of a batch's sends", () => {
    /** A recovery ahead that recovers on this thread when read, and records what was done with it. */
    function recordingRecovery(): { recovery: SenderRecovery; events: string[] } {
      const events: string[] = [];
      let handedOver = 0;
      const recovery: SenderRecovery = {
        recover: async (signature) => (events.push("in order"), recoverSignerKey(signature)),
        recoverAhead: (signature): RecoveryAhead => {
          const number = ++handedOver;
          events.push(`ahead ${number}`);
          return {
            key: () => (events.push(`key ${number}`), recoverSignerKey(signature)),
            release: () => void events.push(`release ${number}`),
          };
        },
      };
      return { recovery, events };
    }

    it("gives each send the key recovered ahead, and lets go of those whose send never came", async () => {
      const { recovery, events } = recordingRecovery();
      const sending = createTransactionSending({ ...services, senderRecovery: recovery });
      const raws = await Promise.all([1, 2, 3].map(signedTransfer));
      const release = sending.recoverAhead(raws);
      expect(events).to.deep.equal(["ahead 1", "ahead 2", "ahead 3"]);
      expect(await sending.submitRaw(raw)).to.match(/^0x/); // the batch's first, in order
      await sending.submitRaw(raws[0]!);
      await sending.submitRaw(raws[1]!);
      release();
      expect(events).to.deep.equal(["ahead 1", "ahead 2", "ahead 3", "in order", "key 1", "key 2", "release 3"]);
      expect(services.chain.head.number).to.equal(3n);
      const block = await services.chain.getBlockByNumber(3n);
      expect(Buffer.from(block!.transactions[0]!.sender).toString("hex")).to.equal(cow.address.slice(2).toLowerCase());
      // Let go: the third is recovered in order when it comes after all.
      await sending.submitRaw(raws[2]!);
      expect(events.at(-1)).to.equal("in order");
    });

    it("skips what it cannot decode (refused as usual when sent), and stops handing over when the recovery has no room", async () => {
      const { recovery, events } = recordingRecovery();
      let room = 1;
      const sending = createTransactionSending({ ...services, senderRecovery: { ...recovery, recoverAhead: (signature) => (room-- > 0 ? recovery.recoverAhead(signature) : undefined) } });
      const raws = await Promise.all([0, 1, 2].map(signedTransfer));
      sending.recoverAhead(["0x1234", raws[0]!, raws[1]!, raws[2]!]);
      expect(events).to.deep.equal(["ahead 1"]);
      const refusal = await rejectionOf(sending.submitRaw("0x1234"));
      expect(refusal).to.be.instanceOf(RpcError);
      expect(refusal).to.include({ code: -32602, message: "Invalid input: typed transactions are not supported (type 0x12); send a legacy (type 0) transaction: --legacy in Foundry, type: 0 in ethers and viem, defaultTransactionType \"0x0\" in web3.js" });
      for (const next of raws) await sending.submitRaw(next);
      expect(events).to.deep.equal(["ahead 1", "key 1", "in order", "in order"]);
    });

    it("keeps eight sends of a batch under way, handing over the next as each takes its key", async () => {
      const { recovery, events } = recordingRecovery();
      const sending = createTransactionSending({ ...services, senderRecovery: recovery });
      const raws = await Promise.all(Array.from({ length: 12 }, (_, index) => signedTransfer(index + 1)));
      sending.recoverAhead(raws);
      expect(events).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8].map((number) => `ahead ${number}`));
      events.length = 0;
      await sending.submitRaw(raw);
      for (const next of raws) await sending.submitRaw(next);
      const handedOverLater = [9, 10, 11, 12].flatMap((number) => [`ahead ${number}`, `key ${number - 8}`]);
      expect(events).to.deep.equal(["in order", ...handedOverLater, "key 5", "key 6", "key 7", "key 8", "key 9", "key 10", "key 11", "key 12"]);
      expect(services.chain.head.number).to.equal(13n);
    });

    it("does not decode what is not DATA (its parameters are not validated yet)", async () => {
      const { recovery, events } = recordingRecovery();
      const sending = createTransactionSending({ ...services, senderRecovery: recovery });
      const started = performance.now();
      // "" and "0" would make a buffer of 2 GiB of a decoder that trusts its input.
      sending.recoverAhead(["", "0", "0x", "0xabc", "0xzz", `${raw}0`, raw]);
      expect(performance.now() - started).to.be.lessThan(1_000);
      expect(events).to.deep.equal(["ahead 1"]);
    });

    it("refuses a send whose signature the recovery ahead finds no signer for, and mines nothing", async () => {
      const sending = createTransactionSending({
        ...services,
        senderRecovery: inOrderOnlyWithAhead(() => {
          throw new SignatureRecoveryError("Public key could not be recover");
        }),
      });
      sending.recoverAhead([raw]);
      const refusal = await rejectionOf(sending.submitRaw(raw));
      expect(refusal).to.include({ code: -32010, message: "invalid transaction signature" });
      expect(services.chain.head.number).to.equal(0n);
    });

    /** A recovery whose every recovery ahead reads its key with `key`. */
    function inOrderOnlyWithAhead(key: () => Uint8Array): SenderRecovery {
      return { recover: (signature) => Promise.resolve(recoverSignerKey(signature)), recoverAhead: () => ({ key, release: () => undefined }) };
    }
  });
});
