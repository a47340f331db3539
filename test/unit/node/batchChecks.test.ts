// A long sync's stateless checks in batches on a thread of their own: senders recovered with
// exactly the main thread's keys, in order, undefined for a signature without a signer; proofs of
// work checked with exactly the main thread's verdicts; batches in flight together each get their
// own answer; once closed (or for a batch the thread never answered) the main thread checks them,
// and nothing asked is lost.
import { expect } from "chai";
import { createLogger } from "../../../src/common/logger.js";
import { recoverSignerKeyIfAny } from "../../../src/common/signatures.js";
import { checkMergedMiningProof, type MergedMiningProof } from "../../../src/consensus/mergedMiningProof.js";
import { mergedMiningProofOf } from "../../../src/consensus/blockImporter.js";
import { BatchCheckThread } from "../../../src/node/batchChecks.js";
import { packSignatures, packSignerKeys, unpackSignatures, unpackSignerKeys } from "../../../src/node/batchChecksWire.js";
import { mineBlocks, openTestChain } from "../../helpers/chainPair.js";
import { randomSignatures, withoutSigner } from "../../helpers/signatures.js";

const hex = (key: Uint8Array | undefined) => (key === undefined ? "none" : Buffer.from(key).toString("hex"));

describe("node/batchChecks: a long sync's stateless checks in batches on their own thread", function () {
  this.timeout(20_000);
  let thread: BatchCheckThread;

  beforeEach(() => (thread = new BatchCheckThread(createLogger("error"))));
  afterEach(() => thread.close());

  it("answers a batch with the main thread's keys in order, undefined for a signature without a signer, all on the thread", async () => {
    const batch = randomSignatures(300, 1);
    batch[17] = withoutSigner(batch[17]!);
    batch[299] = withoutSigner(batch[299]!);
    const keys = await thread.recoverAll(batch);
    expect(keys.map(hex)).to.deep.equal(batch.map((signature) => hex(recoverSignerKeyIfAny(signature))));
    expect(keys[17]).to.equal(undefined);
    expect(keys[299]).to.equal(undefined);
    expect(thread.checkedOnMainThread).to.equal(0);
  });

  it("batches in flight together each get their own answer; an empty batch is answered at once", async () => {
    const batches = Array.from({ length: 12 }, (_, index) => randomSignatures(1 + index * 7, 100 + index));
    const answers = await Promise.all([...batches.map((batch) => thread.recoverAll(batch)), thread.recoverAll([])]);
    expect(answers.at(-1)).to.deep.equal([]);
    batches.forEach((batch, index) => expect(answers[index]!.map(hex)).to.deep.equal(batch.map((signature) => hex(recoverSignerKeyIfAny(signature)))));
    expect(thread.checkedOnMainThread).to.equal(0);
  });

  it("prepare() starts the thread before any batch: the first batch is checked on it, and close finds it running", async () => {
    thread.prepare();
    // Started and online before the first batch is asked.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const batch = randomSignatures(20, 7);
    expect((await thread.recoverAll(batch)).map(hex)).to.deep.equal(batch.map((signature) => hex(recoverSignerKeyIfAny(signature))));
    expect(thread.checkedOnMainThread).to.equal(0);
    expect(await thread.close()).to.equal("left");
  });

  it("without prepare() or a batch, no thread starts", async () => {
    expect(await thread.close()).to.equal("none");
  });

  it("after close, and for batches the thread had not answered, the main thread recovers them", async () => {
    const unanswered = randomSignatures(2_000, 3);
    const inFlight = thread.recoverAll(unanswered);
    await thread.close();
    const later = randomSignatures(5, 4);
    const [inFlightKeys, laterKeys] = await Promise.all([inFlight, thread.recoverAll(later)]);
    expect(inFlightKeys.map(hex)).to.deep.equal(unanswered.map((signature) => hex(recoverSignerKeyIfAny(signature))));
    expect(laterKeys.map(hex)).to.deep.equal(later.map((signature) => hex(recoverSignerKeyIfAny(signature))));
    expect(thread.checkedOnMainThread).to.equal(2_005);
  });

  it("closed in the middle of a long batch, the thread leaves between two signatures rather than being terminated", async () => {
    // Some 12,000 recoveries: over half a second of the thread's work. Terminated during a native
    // recovery, the thread could abort the process; asked to leave, it stops at the next item.
    const long = randomSignatures(12_000, 5);
    await thread.recoverAll(randomSignatures(1, 6));
    const inFlight = thread.recoverAll(long);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await thread.close()).to.equal("left");
    const keys = await inFlight;
    expect(keys.slice(0, 50).map(hex)).to.deep.equal(long.slice(0, 50).map((signature) => hex(recoverSignerKeyIfAny(signature))));
  });

  it("checks proofs of work with the main thread's verdicts: mined headers pass, tampered ones are refused by the same rule", async () => {
    const services = await openTestChain();
    let proofs: MergedMiningProof[];
    try {
      proofs = (await mineBlocks(services, 6)).map((block) => mergedMiningProofOf(block.header));
    } finally {
      await services.close();
    }
    const tampered: MergedMiningProof[] = [
      { ...proofs[0]!, hashForMergedMining: new Uint8Array(32).fill(9) },
      { ...proofs[1]!, merkleProof: new Uint8Array(31) },
      { ...proofs[2]!, parentHeader: proofs[2]!.parentHeader.subarray(1) },
      { ...proofs[3]!, compressedCoinbase: new Uint8Array(10) },
    ];
    const batch = [...proofs, ...tampered];
    const [checks, signatureKeys] = await Promise.all([thread.checkAll(batch), thread.recoverAll(randomSignatures(3, 9))]);
    const verdict = (check: ReturnType<typeof checkMergedMiningProof>) => (check.ok ? "ok" : `${check.rule}: ${check.reason}`);
    expect(checks.map(verdict)).to.deep.equal(batch.map((proof) => verdict(checkMergedMiningProof(proof))));
    expect(checks.slice(0, 6).every((check) => check.ok)).to.equal(true);
    expect(checks.slice(6).some((check) => check.ok)).to.equal(false);
    expect(signatureKeys).to.have.length(3);
    expect(await thread.checkAll([])).to.deep.equal([]);
    expect(thread.checkedOnMainThread).to.equal(0);
  });

  it("the wire: signatures and keys round-trip; bytes of another length are refused", () => {
    const batch = randomSignatures(3, 5);
    const back = unpackSignatures(packSignatures(batch));
    expect(back.map((signature) => [hex(signature.messageHash), hex(signature.rs), signature.recovery])).to.deep.equal(batch.map((signature) => [hex(signature.messageHash), hex(signature.rs), signature.recovery]));
    expect(() => unpackSignatures(new Uint8Array(97 * 2 + 1))).to.throw(RangeError, /multiple of 97/);
    const badRecovery = packSignatures(batch);
    badRecovery[96] = 2;
    expect(() => unpackSignatures(badRecovery)).to.throw(RangeError, /recovery id 2/);
    const keys = [new Uint8Array(64).fill(7), undefined];
    expect(unpackSignerKeys(packSignerKeys(keys), 2).map(hex)).to.deep.equal(keys.map(hex));
    expect(() => unpackSignerKeys(packSignerKeys(keys), 3)).to.throw(RangeError, /130 bytes of signer keys for 3/);
  });
});
