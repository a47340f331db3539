// The way in to the pool, with real signatures and a real pool: a received transaction is decoded
// and refused as malformed before its signature is looked at, its sender is the signer recovered
// on this thread or by the recovery given, a signature without a signer is refused as such, any
// other failure of the recovery passes as it is, and the pool's refusals come back as its own.
// Recoveries started ahead are taken by the transactions they were started for, eight at a time,
// and the ones never taken are let go; on the recovery worker, the keys are the main thread's.
import { expect } from "chai";
import { concat, getBytes, hexlify, keccak256, Signature, toUtf8Bytes, Transaction, Wallet } from "ethers";
import { MalformedTransactionError } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { recoverSignerKey, SignatureRecoveryError, type RecoverableSignature, type RecoveryAhead, type SenderRecovery } from "../../../src/common/signatures.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { RecoveryOffload } from "../../../src/node/recoveryOffload.js";
import { createTransactionIntake, recoveriesAheadPerBatch } from "../../../src/txpool/transactionIntake.js";
import { TransactionPool, TransactionRejectedError } from "../../../src/txpool/transactionPool.js";
import { withoutSigner } from "../../helpers/signatures.js";

const common = createExecutionRules(33n);
const cow = new Wallet(keccak256(toUtf8Bytes("cow")));
const cowAddress = cow.address.slice(2).toLowerCase();
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** A pool where every account has nonce 0 and `balance` wei. */
function poolWith(balance = 10n ** 18n): TransactionPool {
  return new TransactionPool({
    readAccount: async () => ({ nonce: 0n, balance }),
    limits: () => ({ blockGasLimit: 10_000_000n, minimumGasPrice: 0n }),
  });
}

/** cow's transfer of 1 wei with `nonce` on chain `chainId`, signed (hex). */
function signedTransfer(nonce: number, chainId = 33n): Promise<string> {
  return cow.signTransaction({ type: 0, chainId, nonce, gasLimit: 21_000n, gasPrice: 0n, to: "0x00000000000000000000000000000000000000aa", value: 1n });
}

/** `raw` with an r that is no point's x coordinate on the curve: its signature has no signer. */
function withoutSignerRaw(raw: string): string {
  const transaction = Transaction.from(raw);
  const { r, s, v } = transaction.signature!;
  const { rs } = withoutSigner({ messageHash: getBytes(transaction.unsignedHash), rs: getBytes(concat([r, s])), recovery: v === 27 ? 0 : 1 });
  transaction.signature = Signature.from({ r: hexlify(rs.subarray(0, 32)), s, v });
  return transaction.serialized;
}

/** The rejection of `promise` (or of calling `run`), or undefined when it resolved. */
async function rejectionOf(run: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof run === "function" ? run() : run);
  } catch (error) {
    return error;
  }
  return undefined;
}

/** A recovery that records what it is asked; recovers ahead (on this thread when read) while `room` lasts. */
function recordingRecovery(room = Infinity): { recovery: SenderRecovery; events: string[] } {
  const events: string[] = [];
  let handedOver = 0;
  const recovery: SenderRecovery = {
    recover: async (signature) => (events.push("in order"), recoverSignerKey(signature)),
    recoverAhead: (signature): RecoveryAhead | undefined => {
      if (room-- <= 0) return undefined;
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

describe("txpool/transactionIntake: decoding, sender recovery and admission", function () {
  this.timeout(20_000);

  describe("decoding", () => {
    const refusals: [string, () => Promise<string>, MalformedTransactionError["reason"], RegExp][] = [
      ["not RLP", async () => "0xc2", "undecodable", /./],
      ["a typed transaction without --typed-transactions", async () => "0x02c0", "typed", /^typed transactions are not supported/],
      ["another chain's", () => signedTransfer(0, 31n), "chainId", /./],
    ];
    for (const [what, raw, reason, message] of refusals) {
      it(`refuses ${what} as malformed, before any recovery`, async () => {
        const { recovery, events } = recordingRecovery();
        const pool = poolWith();
        const intake = createTransactionIntake({ common, typedTransactions: false, pool, senderRecovery: recovery });
        const refusal = await rejectionOf(intake.receive(await raw()));
        expect(refusal).to.be.instanceOf(MalformedTransactionError);
        expect(refusal).to.include({ reason });
        expect((refusal as Error).message).to.match(message);
        expect(events).to.deep.equal([]);
        expect(pool.size).to.equal(0);
      });
    }

    it("takes a typed transaction with --typed-transactions, its sender the signer", async () => {
      const raw = await cow.signTransaction({ type: 2, chainId: 33n, nonce: 0, gasLimit: 21_000n, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n, to: "0x00000000000000000000000000000000000000aa", value: 1n });
      const intake = createTransactionIntake({ common, typedTransactions: true, pool: poolWith() });
      const transaction = await intake.receive(raw);
      expect(transaction.tx.type).to.equal(2);
      expect(hex(transaction.sender)).to.equal(cowAddress);
      expect(hexlify(transaction.hash)).to.equal(keccak256(raw));
    });
  });

  describe("sender recovery", () => {
    it("recovers the signer on this thread when given no recovery, and admits the transaction", async () => {
      const pool = poolWith();
      const intake = createTransactionIntake({ common, typedTransactions: false, pool });
      const raw = await signedTransfer(0);
      const transaction = await intake.receive(raw);
      expect(hex(transaction.sender)).to.equal(cowAddress);
      expect(hexlify(transaction.raw)).to.equal(raw);
      expect(await intake.admit(transaction)).to.equal("pending");
      expect(pool.get(transaction.hash)).to.equal(transaction);
    });

    it("refuses a signature without a signer, on this thread and by the recovery given", async () => {
      const raw = withoutSignerRaw(await signedTransfer(0));
      const byRecovery = { recover: (signature: RecoverableSignature) => Promise.resolve().then(() => recoverSignerKey(signature)), recoverAhead: () => undefined };
      for (const senderRecovery of [undefined, byRecovery]) {
        const intake = createTransactionIntake({ common, typedTransactions: false, pool: poolWith(), senderRecovery });
        const refusal = await rejectionOf(intake.receive(raw));
        expect(refusal).to.be.instanceOf(MalformedTransactionError);
        expect(refusal).to.include({ reason: "signature", message: "invalid transaction signature" });
      }
    });

    it("passes on any other failure of the recovery as it is", async () => {
      const failure = new Error("the recovery thread broke");
      const intake = createTransactionIntake({ common, typedTransactions: false, pool: poolWith(), senderRecovery: { recover: () => Promise.reject(failure), recoverAhead: () => undefined } });
      expect(await rejectionOf(intake.receive(await signedTransfer(0)))).to.equal(failure);
    });
  });

  describe("recovery ahead", () => {
    it("gives each transaction the key recovered ahead for it, eight under way at once, and lets go of those never received", async () => {
      const { recovery, events } = recordingRecovery();
      const intake = createTransactionIntake({ common, typedTransactions: false, pool: poolWith(), senderRecovery: recovery });
      const raws = await Promise.all(Array.from({ length: 11 }, (_, nonce) => signedTransfer(nonce)));
      const release = intake.recoverAhead(raws);
      expect(recoveriesAheadPerBatch).to.equal(8);
      expect(events).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8].map((number) => `ahead ${number}`));
      events.length = 0;
      for (const raw of raws.slice(0, 9)) expect(hex((await intake.receive(raw)).sender)).to.equal(cowAddress);
      // Each taken key made room for the next: 9, 10 and 11 were handed over as 1, 2 and 3 were taken.
      expect(events).to.deep.equal(["ahead 9", "key 1", "ahead 10", "key 2", "ahead 11", "key 3", "key 4", "key 5", "key 6", "key 7", "key 8", "key 9"]);
      events.length = 0;
      release();
      expect(events).to.deep.equal(["release 10", "release 11"]);
      // Let go: received after all, it is recovered in order.
      await intake.receive(raws[9]!);
      expect(events).to.deep.equal(["release 10", "release 11", "in order"]);
    });

    it("skips what it cannot decode (refused when received) and stops when the recovery has no room", async () => {
      const { recovery, events } = recordingRecovery(1);
      const intake = createTransactionIntake({ common, typedTransactions: false, pool: poolWith(), senderRecovery: recovery });
      const raws = await Promise.all([0, 1].map((nonce) => signedTransfer(nonce)));
      intake.recoverAhead(["0xc2", raws[0]!, raws[1]!]);
      expect(events).to.deep.equal(["ahead 1"]);
      expect(await rejectionOf(intake.receive("0xc2"))).to.be.instanceOf(MalformedTransactionError);
      await intake.receive(raws[0]!);
      await intake.receive(raws[1]!);
      expect(events).to.deep.equal(["ahead 1", "key 1", "in order"]);
    });

    it("refuses a transaction whose signature the recovery ahead finds no signer for", async () => {
      const raw = await signedTransfer(0);
      const intake = createTransactionIntake({
        common,
        typedTransactions: false,
        pool: poolWith(),
        senderRecovery: {
          recover: (signature) => Promise.resolve(recoverSignerKey(signature)),
          recoverAhead: () => ({
            key: () => {
              throw new SignatureRecoveryError("Public key could not be recover");
            },
            release: () => undefined,
          }),
        },
      });
      intake.recoverAhead([raw]);
      expect(await rejectionOf(intake.receive(raw))).to.include({ reason: "signature", message: "invalid transaction signature" });
    });

    it("recovers nothing ahead without a recovery to hand over to", async () => {
      const intake = createTransactionIntake({ common, typedTransactions: false, pool: poolWith() });
      const raw = await signedTransfer(0);
      intake.recoverAhead([raw])();
      expect(hex((await intake.receive(raw)).sender)).to.equal(cowAddress);
    });

    it("on the recovery worker: every transaction gets its signer's key", async () => {
      const offload = new RecoveryOffload(createLogger("error"));
      offload.start();
      try {
        expect(await offload.ready, "the worker serves").to.equal(true);
        const pool = poolWith();
        const intake = createTransactionIntake({ common, typedTransactions: false, pool, senderRecovery: offload });
        const raws = await Promise.all(Array.from({ length: 12 }, (_, nonce) => signedTransfer(nonce)));
        const release = intake.recoverAhead(raws);
        for (const raw of raws) await intake.admit(await intake.receive(raw));
        release();
        expect(pool.size).to.equal(12);
        expect(pool.pending().map((transaction) => hex(transaction.sender))).to.deep.equal(raws.map(() => cowAddress));
        expect(offload.recoveryCounts.byWorker + offload.recoveryCounts.onMainThread).to.equal(12);
      } finally {
        await offload.close();
      }
    });
  });

  describe("admission", () => {
    it("refuses what the pool refuses, and holds nothing of it", async () => {
      const pool = poolWith(0n);
      const intake = createTransactionIntake({ common, typedTransactions: false, pool });
      const transaction = await intake.receive(await signedTransfer(0));
      const refusal = await rejectionOf(intake.admit(transaction));
      expect(refusal).to.be.instanceOf(TransactionRejectedError);
      expect(refusal).to.include({ message: "insufficient funds" });
      expect(pool.size).to.equal(0);
    });

    it("admits the node's own and impersonated transactions with the sender they are known to have", async () => {
      const pool = poolWith();
      const intake = createTransactionIntake({ common, typedTransactions: false, pool });
      const own = intake.own(getBytes(await signedTransfer(0)), getBytes(cow.address));
      const sender = getBytes("0x00000000000000000000000000000000000000bb");
      const impersonated = intake.impersonated({ nonce: 0n, gasPrice: 0n, gasLimit: 21_000n, to: getBytes("0x00000000000000000000000000000000000000aa"), value: 1n, data: new Uint8Array() }, sender);
      for (const transaction of [own, impersonated]) expect(await intake.admit(transaction)).to.equal("pending");
      expect(pool.pending().map((transaction) => hex(transaction.sender))).to.have.members([cowAddress, "00000000000000000000000000000000000000bb"]);
      expect(() => intake.own(getBytes("0xc2"), getBytes(cow.address))).to.throw(MalformedTransactionError);
    });
  });
});
