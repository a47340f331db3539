// The merged-mining proof of work: what passes, and each refusal with the rule it names.
import { expect } from "chai";
import { Block, Transaction } from "bitcoinjs-lib";
import { compressCoinbase, decodeCompressedCoinbase, encodeCompressedCoinbase, lastIndexOfBytes, mergedMiningTag } from "../../../src/consensus/compressedCoinbase.js";
import { checkMergedMiningProof, type MergedMiningProof, type MergedMiningProofCheck } from "../../../src/consensus/mergedMiningProof.js";
import { hashToDisplayHex, sha256d } from "../../../src/consensus/parentChain.js";
import { combineMerkleNodes, foldMerkleBranch, merkleBranchOfCoinbase } from "../../../src/consensus/parentMerkleBranch.js";
import { sha256MidstateAfter } from "../../../src/consensus/sha256Midstate.js";
import { commitmentTo, createCoinbaseTransaction, opReturnScript, solveParentHeader, unsolvedParentHeader } from "../../helpers/parentChainProofs.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

const hashForMergedMining = Uint8Array.from({ length: 32 }, (_, index) => 0x40 + index);
const payToPubkey = Uint8Array.from([0x21, 0x03, ...new Uint8Array(32).fill(5), 0xac]);

/** A pool-style coinbase: `scriptSig`, a payout, then `prefix ‖ RSKBLOCK: ‖ hash ‖ suffix` as the last output's script. */
function coinbaseCommitting(options: { scriptSigLength?: number; prefix?: Uint8Array; suffix?: Uint8Array; hash?: Uint8Array } = {}): Uint8Array {
  const script = Uint8Array.from([...(options.prefix ?? []), ...commitmentTo(options.hash ?? hashForMergedMining), ...(options.suffix ?? [])]);
  const scriptSig = Uint8Array.from({ length: options.scriptSigLength ?? 8 }, (_, index) => index + 1);
  return createCoinbaseTransaction({ scriptSig, outputScripts: [payToPubkey, script] }).toBuffer();
}

/** A proof for a one-transaction parent block over `coinbase`, solved at `difficulty`. */
function proofFor(coinbase: Uint8Array, difficulty = 1n, compressedCoinbase = compressCoinbase(coinbase)): MergedMiningProof {
  return { hashForMergedMining, difficulty, parentHeader: solveParentHeader(sha256d(coinbase), difficulty), merkleProof: new Uint8Array(0), compressedCoinbase };
}

function expectRefusal(check: MergedMiningProofCheck, rule: string, reason?: string): void {
  expect(check.ok, JSON.stringify(check)).to.equal(false);
  if (check.ok) return;
  expect(check.rule).to.equal(rule);
  if (reason !== undefined) expect(check.reason).to.equal(reason);
}

describe("consensus/mergedMiningProof: what passes", () => {
  it("a one-transaction parent block whose coinbase commits to the block, at difficulty 1 and 4096", () => {
    const coinbase = coinbaseCommitting();
    for (const difficulty of [1n, 4096n]) {
      const proof = proofFor(coinbase, difficulty);
      const check = checkMergedMiningProof(proof);
      expect(check).to.deep.equal({ ok: true, parentHeaderHash: sha256d(proof.parentHeader), coinbaseTxid: Transaction.fromBuffer(coinbase).getHash() });
    }
  });

  it("a coinbase folded over a parent block of seven transactions, with bitcoinjs-lib's merkle root", () => {
    const coinbase = createCoinbaseTransaction({ scriptSig: Uint8Array.of(3, 1, 2, 3), outputScripts: [payToPubkey, opReturnScript(commitmentTo(hashForMergedMining))] });
    const transactions = [coinbase];
    for (let index = 1; index < 7; index++) {
      const spend = new Transaction();
      spend.addInput(new Uint8Array(32).fill(index), index);
      spend.addOutput(payToPubkey, BigInt(index * 1000));
      transactions.push(spend);
    }
    const root = Block.calculateMerkleRoot(transactions);
    const parentHeader = solveParentHeader(root, 4096n);
    expect(Buffer.from(Block.fromBuffer(parentHeader).merkleRoot!)).to.deep.equal(Buffer.from(root));
    const merkleProof = merkleBranchOfCoinbase(transactions.map((transaction) => transaction.getHash()));
    expect(merkleProof.length).to.equal(96);
    const check = checkMergedMiningProof({ hashForMergedMining, difficulty: 4096n, parentHeader, merkleProof, compressedCoinbase: compressCoinbase(coinbase.toBuffer()) });
    expect(check.ok, JSON.stringify(check)).to.equal(true);
  });

  it("the limits themselves: tag at byte 63 of the tail, 128 bytes after the hash, a 65-byte coinbase, a 960-byte proof", () => {
    let scriptSigLength = 0;
    while (lastIndexOfBytes(coinbaseCommitting({ scriptSigLength }), mergedMiningTag) % 64 !== 63) scriptSigLength++;
    const tagAt63 = coinbaseCommitting({ scriptSigLength });
    expect(lastIndexOfBytes(compressCoinbase(tagAt63).subarray(40), mergedMiningTag)).to.equal(63);
    expect(checkMergedMiningProof(proofFor(tagAt63)).ok).to.equal(true);

    // The lock time's 4 bytes follow the last output's script.
    expect(checkMergedMiningProof(proofFor(coinbaseCommitting({ suffix: new Uint8Array(124).fill(0x61) }))).ok).to.equal(true);

    const sixtyFiveBytes = Uint8Array.from([...new Uint8Array(24).fill(1), ...commitmentTo(hashForMergedMining)]);
    expect(sixtyFiveBytes.length).to.equal(65);
    expect(checkMergedMiningProof(proofFor(sixtyFiveBytes)).ok).to.equal(true);

    const coinbase = coinbaseCommitting();
    const merkleProof = Uint8Array.from({ length: 960 }, (_, index) => (index * 37 + 11) & 0xff);
    const fold = foldMerkleBranch(sha256d(coinbase), merkleProof);
    if (fold.kind !== "root") throw new Error("the sample branch reads as a transaction");
    const proof = { ...proofFor(coinbase), parentHeader: solveParentHeader(fold.root, 1n), merkleProof };
    expect(checkMergedMiningProof(proof).ok).to.equal(true);
  });
});

describe("consensus/mergedMiningProof: each refusal names its rule", () => {
  const coinbase = coinbaseCommitting();
  const valid = proofFor(coinbase);

  it("a merkle proof over 960 bytes, or not whole 32-byte hashes", () => {
    expectRefusal(checkMergedMiningProof({ ...valid, merkleProof: new Uint8Array(992) }), "merkleProofTooLong", "merkle proof of 992 bytes, more than 960");
    // The length limit is checked first, as the reference does.
    expectRefusal(checkMergedMiningProof({ ...valid, merkleProof: new Uint8Array(961) }), "merkleProofTooLong");
    expectRefusal(checkMergedMiningProof({ ...valid, merkleProof: new Uint8Array(33) }), "merkleProofNotWholeHashes", "merkle proof of 33 bytes, not a multiple of 32");
    expectRefusal(checkMergedMiningProof({ ...valid, merkleProof: new Uint8Array(31) }), "merkleProofNotWholeHashes");
  });

  it("a compressed coinbase shorter than its 40-byte state (absent included)", () => {
    expectRefusal(checkMergedMiningProof({ ...valid, compressedCoinbase: new Uint8Array(39) }), "coinbaseStateMissing", "compressed coinbase of 39 bytes, shorter than its 40-byte SHA-256 state");
    expectRefusal(checkMergedMiningProof({ ...valid, compressedCoinbase: new Uint8Array(0) }), "coinbaseStateMissing");
  });

  it("a parent header of other than 80 bytes", () => {
    for (const length of [0, 79, 81]) {
      const parentHeader = Uint8Array.from({ length }, (_, index) => valid.parentHeader[index] ?? 0);
      expectRefusal(checkMergedMiningProof({ ...valid, parentHeader }), "parentHeaderSize", `parent-chain header of ${length} bytes, not 80`);
    }
  });

  it("a parent header whose hash is above the target", () => {
    const parentHeader = unsolvedParentHeader(sha256d(coinbase), 1n);
    const check = checkMergedMiningProof({ ...valid, parentHeader });
    expectRefusal(check, "parentHashAboveTarget", `parent-chain header hash ${hashToDisplayHex(sha256d(parentHeader))} above the target ${"5".repeat(64)}`);
    // A header good for difficulty 1 rarely holds at 2^40: this one does not.
    expectRefusal(checkMergedMiningProof({ ...valid, difficulty: 1n << 40n }), "parentHashAboveTarget");
  });

  it("a coinbase without the tag followed by this block's hash", () => {
    const other = coinbaseCommitting({ hash: new Uint8Array(32).fill(9) });
    expectRefusal(checkMergedMiningProof(proofFor(other)), "tagMissing", "coinbase does not contain RSKBLOCK: followed by the block's hash for merged mining");
    const noTag = createCoinbaseTransaction({ scriptSig: new Uint8Array(8), outputScripts: [payToPubkey, hashForMergedMining] }).toBuffer();
    expectRefusal(checkMergedMiningProof(proofFor(noTag)), "tagMissing");
  });

  it("a tag at byte 64 or more of the tail: one 64-byte block too few in the state", () => {
    let scriptSigLength = 0;
    while (lastIndexOfBytes(coinbaseCommitting({ scriptSigLength }), mergedMiningTag) % 64 !== 0) scriptSigLength++;
    const late = coinbaseCommitting({ scriptSigLength });
    const tagPosition = lastIndexOfBytes(late, mergedMiningTag);
    const cut = tagPosition - 64;
    const compressedCoinbase = encodeCompressedCoinbase({ byteCountBefore: BigInt(cut), midstate: sha256MidstateAfter(late.subarray(0, cut)), tail: late.subarray(cut) });
    expect(checkMergedMiningProof(proofFor(late)).ok).to.equal(true);
    expectRefusal(checkMergedMiningProof(proofFor(late, 1n, compressedCoinbase)), "tagNotInFirstBlock", "RSKBLOCK: tag at byte 64 of the coinbase tail, not within its first 64");
  });

  it("another tag after the block's", () => {
    // Both tags in the tail: the block's at a 64-byte boundary, the other right after its hash.
    let scriptSigLength = 0;
    while (lastIndexOfBytes(coinbaseCommitting({ scriptSigLength }), mergedMiningTag) % 64 !== 0) scriptSigLength++;
    const secondTag = Uint8Array.from([...mergedMiningTag, ...new Uint8Array(32).fill(7)]);
    const twoTags = coinbaseCommitting({ scriptSigLength, suffix: secondTag });
    expectRefusal(checkMergedMiningProof(proofFor(twoTags)), "tagNotLast", "another RSKBLOCK: tag at byte 41 of the coinbase tail, after the block's at 0");
    // Further on, the later tag decides the cut and the block's own goes into the state unseen.
    const farApart = coinbaseCommitting({ scriptSigLength, suffix: Uint8Array.from([...new Uint8Array(60), ...secondTag]) });
    expectRefusal(checkMergedMiningProof(proofFor(farApart)), "tagMissing");
    // A later tag followed by the same hash is the block's, and passes.
    const sameTwice = coinbaseCommitting({ suffix: commitmentTo(hashForMergedMining) });
    expect(checkMergedMiningProof(proofFor(sameTwice)).ok).to.equal(true);
  });

  it("more than 128 bytes after the hash", () => {
    const long = coinbaseCommitting({ suffix: new Uint8Array(125).fill(0x61) });
    expectRefusal(checkMergedMiningProof(proofFor(long)), "tooManyBytesAfterHash", "129 coinbase bytes after the hash for merged mining, more than 128");
  });

  it("a coinbase of 64 bytes or less, including a byte count that a Java long reads as negative", () => {
    const sixtyFour = Uint8Array.from([...new Uint8Array(23).fill(1), ...commitmentTo(hashForMergedMining)]);
    expectRefusal(checkMergedMiningProof(proofFor(sixtyFour)), "coinbaseTooShort", "coinbase of 64 bytes, not more than 64");
    const { midstate, tail } = decodeCompressedCoinbase(valid.compressedCoinbase)!;
    for (const byteCountBefore of [1n << 63n, (1n << 63n) - 10n]) {
      const compressedCoinbase = encodeCompressedCoinbase({ byteCountBefore, midstate, tail });
      expectRefusal(checkMergedMiningProof({ ...valid, compressedCoinbase }), "coinbaseTooShort");
    }
  });

  it("merkle nodes that read as a 64-byte transaction", () => {
    // A coinbase whose txid, in display order, has 1 at byte 4 (the input count's place) ...
    let scriptSigLength = 1;
    while (sha256d(coinbaseCommitting({ scriptSigLength })).slice().reverse()[4] !== 1) scriptSigLength++;
    const shaped = coinbaseCommitting({ scriptSigLength });
    // ... and a sibling that is the second half of a 64-byte transaction, in display order.
    const secondHalf = Uint8Array.from([...new Uint8Array(5), 0, 0, 0, 0, 2, 0x51, 0x51, 0xff, 0xff, 0xff, 0xff, 1, 0xe8, 3, 0, 0, 0, 0, 0, 0, 2, 0x51, 0x51, 0, 0, 0, 0]);
    const sibling = secondHalf.slice().reverse();
    const root = combineMerkleNodes(sha256d(shaped), sibling);
    const proof = { ...proofFor(shaped), parentHeader: solveParentHeader(root, 1n), merkleProof: sibling };
    expectRefusal(checkMergedMiningProof(proof), "merkleNodesFormTransaction", "merkle nodes at level 0 read as a 64-byte transaction");
  });

  it("a merkle branch that does not lead to the header's root", () => {
    const transactions = [coinbase, Uint8Array.of(1, 2, 3)].map((bytes) => sha256d(bytes));
    const merkleProof = merkleBranchOfCoinbase(transactions);
    expect(checkMergedMiningProof({ ...valid, merkleProof }).ok).to.equal(false);
    const withSibling = { ...valid, parentHeader: solveParentHeader(combineMerkleNodes(transactions[0]!, transactions[1]!), 1n), merkleProof };
    expect(checkMergedMiningProof(withSibling).ok).to.equal(true);
    const changed = merkleProof.slice();
    changed[0]! ^= 1;
    const check = checkMergedMiningProof({ ...withSibling, merkleProof: changed });
    expectRefusal(check, "merkleRootMismatch");
    expect(!check.ok && check.reason).to.match(/^coinbase [0-9a-f]{64} and merkle proof lead to root [0-9a-f]{64}, not the header's [0-9a-f]{64}$/);
  });
});

describe("consensus/mergedMiningProof: untrusted bytes", () => {
  const rules = ["merkleProofTooLong", "merkleProofNotWholeHashes", "coinbaseStateMissing", "parentHeaderSize", "parentHashAboveTarget", "tagMissing", "tagNotInFirstBlock", "tagNotLast", "tooManyBytesAfterHash", "coinbaseTooShort", "merkleNodesFormTransaction", "merkleRootMismatch"];

  it("names the first broken rule in the reference's order", () => {
    const everythingWrong = { hashForMergedMining, difficulty: 1n, parentHeader: new Uint8Array(3), merkleProof: new Uint8Array(1000), compressedCoinbase: new Uint8Array(2) };
    expectRefusal(checkMergedMiningProof(everythingWrong), "merkleProofTooLong");
    expectRefusal(checkMergedMiningProof({ ...everythingWrong, merkleProof: new Uint8Array(0) }), "coinbaseStateMissing");
    expectRefusal(checkMergedMiningProof({ ...everythingWrong, merkleProof: new Uint8Array(0), compressedCoinbase: new Uint8Array(40) }), "parentHeaderSize");
  });

  it("answers a refusal, never an exception, for random fields, for a valid proof with one bit changed and with a stray sibling", () => {
    const next = seededRandom(35);
    const bytes = (length: number) => randomBytes(next, length);
    for (let round = 0; round < 300; round++) {
      const proof = { hashForMergedMining: bytes(32), difficulty: BigInt(next() % 5000), parentHeader: bytes([80, 80, 79, 0][round % 4]!), merkleProof: bytes(32 * (next() % 4) + (round % 7 === 0 ? 5 : 0)), compressedCoinbase: bytes(next() % 200) };
      const check = checkMergedMiningProof(proof);
      expect(check.ok).to.equal(false);
      if (!check.ok) expect(rules).to.include(check.rule);
    }
    const valid = proofFor(coinbaseCommitting());
    const fields = ["parentHeader", "merkleProof", "compressedCoinbase"] as const;
    let refused = 0;
    for (let round = 0; round < 300; round++) {
      const field = fields[round % 3]!;
      const changed = { ...valid };
      if (field === "merkleProof") {
        changed.merkleProof = bytes(32);
      } else {
        const copy = valid[field].slice();
        copy[next() % copy.length]! ^= 1 << next() % 8;
        changed[field] = copy;
      }
      const check = checkMergedMiningProof(changed);
      if (!check.ok) {
        refused++;
        expect(rules).to.include(check.rule);
      }
    }
    // Only a change to a header field the rule does not read (version, prevHash, time, bits, nonce)
    // can keep the proof valid, and then only when the new hash still meets the target.
    expect(refused).to.be.above(200);
  });
});
