// Sender recovery of whole batches on a thread of their own (a peer's bodies during a long sync):
// every batch answered with exactly the main thread's keys, in order, undefined for a signature
// without a signer; batches in flight together each get their own answer; once closed (or for a
// batch the thread never answered) the main thread recovers, and nothing asked is lost.
import { expect } from "chai";
import { keccak256 } from "../../../src/common/crypto.js";
import { createLogger } from "../../../src/common/logger.js";
import { recoverSignerKeyIfAny, signRecoverable, type RecoverableSignature } from "../../../src/common/signatures.js";
import { BatchRecoveryThread } from "../../../src/node/batchRecovery.js";
import { packSignatures, packSignerKeys, unpackSignatures, unpackSignerKeys } from "../../../src/node/batchRecoveryWire.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";
import { withoutSigner } from "../../helpers/signatures.js";

const hex = (key: Uint8Array | undefined) => (key === undefined ? "none" : Buffer.from(key).toString("hex"));

function signatures(count: number, seed: number): RecoverableSignature[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const messageHash = randomBytes(next, 32);
    const signed = signRecoverable(messageHash, keccak256(randomBytes(next, 32)));
    return { messageHash, rs: signed.subarray(1), recovery: signed[0] === 0 ? 0 : 1 };
  });
}

describe("node/batchRecovery: batches of signatures recovered on their own thread", function () {
  this.timeout(20_000);
  let thread: BatchRecoveryThread;

  beforeEach(() => (thread = new BatchRecoveryThread(createLogger("error"))));
  afterEach(() => thread.close());

  it("answers a batch with the main thread's keys in order, undefined for a signature without a signer, all on the thread", async () => {
    const batch = signatures(300, 1);
    batch[17] = withoutSigner(batch[17]!);
    batch[299] = withoutSigner(batch[299]!);
    const keys = await thread.recoverAll(batch);
    expect(keys.map(hex)).to.deep.equal(batch.map((signature) => hex(recoverSignerKeyIfAny(signature))));
    expect(keys[17]).to.equal(undefined);
    expect(keys[299]).to.equal(undefined);
    expect(thread.recoveredOnMainThread).to.equal(0);
  });

  it("batches in flight together each get their own answer; an empty batch is answered at once", async () => {
    const batches = Array.from({ length: 12 }, (_, index) => signatures(1 + index * 7, 100 + index));
    const answers = await Promise.all([...batches.map((batch) => thread.recoverAll(batch)), thread.recoverAll([])]);
    expect(answers.at(-1)).to.deep.equal([]);
    batches.forEach((batch, index) => expect(answers[index]!.map(hex)).to.deep.equal(batch.map((signature) => hex(recoverSignerKeyIfAny(signature)))));
    expect(thread.recoveredOnMainThread).to.equal(0);
  });

  it("after close, and for batches the thread had not answered, the main thread recovers them", async () => {
    const unanswered = signatures(2_000, 3);
    const inFlight = thread.recoverAll(unanswered);
    await thread.close();
    const later = signatures(5, 4);
    const [inFlightKeys, laterKeys] = await Promise.all([inFlight, thread.recoverAll(later)]);
    expect(inFlightKeys.map(hex)).to.deep.equal(unanswered.map((signature) => hex(recoverSignerKeyIfAny(signature))));
    expect(laterKeys.map(hex)).to.deep.equal(later.map((signature) => hex(recoverSignerKeyIfAny(signature))));
    expect(thread.recoveredOnMainThread).to.equal(2_005);
  });

  it("the wire: signatures and keys round-trip; bytes of another length are refused", () => {
    const batch = signatures(3, 5);
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
