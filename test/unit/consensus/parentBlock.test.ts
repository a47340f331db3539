// Parent-chain blocks and transactions read from bytes: txids, coinbase and merkle root against
// bitcoinjs-lib on generated blocks (legacy and segwit transactions, a segwit coinbase with its
// witness commitment), and a refusal with a reason, never an exception, for every malformed input.
import { expect } from "chai";
import { Block, Transaction } from "bitcoinjs-lib";
import { parseParentBlock, parseParentTransaction, type ParentBlockParse } from "../../../src/consensus/parentBlock.js";
import { encodeParentHeader, sha256d } from "../../../src/consensus/parentChain.js";
import { merkleRootOfTxids } from "../../../src/consensus/parentMerkleBranch.js";
import { commitmentTo, createCoinbaseTransaction, opReturnScript, serializeWithoutWitness } from "../../helpers/parentChainProofs.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

type Random = () => number;

const payToPubkey = Uint8Array.from([0x21, 0x02, ...new Uint8Array(32).fill(7), 0xac]);

/** A length from 0 to `max`, now and then one that needs a 3-byte compact size. */
function scriptLength(next: Random, max: number): number {
  return next() % 16 === 0 ? 253 + (next() % 200) : next() % (max + 1);
}

function randomOutputs(next: Random, transaction: Transaction): void {
  const count = 1 + (next() % 4);
  for (let index = 0; index < count; index++) transaction.addOutput(randomBytes(next, scriptLength(next, 40)), BigInt(next()));
}

function legacyTransaction(next: Random): Transaction {
  const transaction = new Transaction();
  transaction.version = 1 + (next() % 2);
  const inputs = 1 + (next() % 3);
  for (let index = 0; index < inputs; index++) transaction.addInput(randomBytes(next, 32), next() % 8, next(), randomBytes(next, scriptLength(next, 110)));
  randomOutputs(next, transaction);
  transaction.locktime = next() % 3 === 0 ? next() : 0;
  return transaction;
}

/** Witness stacks on its inputs (the first never empty; others may be, as spends of legacy outputs). */
function segwitTransaction(next: Random): Transaction {
  const transaction = new Transaction();
  transaction.version = 2;
  const inputs = 1 + (next() % 3);
  for (let index = 0; index < inputs; index++) transaction.addInput(randomBytes(next, 32), next() % 8, next(), next() % 4 === 0 ? randomBytes(next, 23) : new Uint8Array(0));
  randomOutputs(next, transaction);
  for (let index = 0; index < inputs; index++) {
    const items = index === 0 ? 1 + (next() % 3) : next() % 4;
    transaction.setWitness(index, Array.from({ length: items }, () => randomBytes(next, scriptLength(next, 80))));
  }
  return transaction;
}

interface GeneratedBlock {
  bytes: Uint8Array;
  transactions: Transaction[];
  /** Where each transaction starts in `bytes`. */
  offsets: number[];
}

/**
 * A block of `count` transactions: a coinbase with the merged-mining tag in its last output, then
 * legacy and segwit transactions mixed. With any segwit transaction (or `segwitCoinbase`) the
 * coinbase carries the witness reserved value and the witness commitment, as Bitcoin requires.
 */
function generateBlock(next: Random, count: number, options: { segwitShare?: number; segwitCoinbase?: boolean } = {}): GeneratedBlock {
  const segwitShare = options.segwitShare ?? 0.5;
  const others = Array.from({ length: count - 1 }, () => ((next() % 1000) / 1000 < segwitShare ? segwitTransaction(next) : legacyTransaction(next)));
  const segwit = options.segwitCoinbase === true || others.some((transaction) => transaction.hasWitnesses());
  const witnessCommitment = Uint8Array.from([0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed, ...new Uint8Array(32)]);
  const coinbase = createCoinbaseTransaction({
    scriptSig: randomBytes(next, 4 + (next() % 60)),
    outputScripts: [payToPubkey, ...(segwit ? [witnessCommitment] : []), opReturnScript(commitmentTo(randomBytes(next, 32)))],
    witness: segwit,
  });
  const transactions = [coinbase, ...others];
  // The coinbase's wtxid counts as zero in the witness tree, so its own outputs do not change the commitment.
  if (segwit) coinbase.outs[1]!.script = Uint8Array.from([...witnessCommitment.subarray(0, 6), ...Block.calculateMerkleRoot(transactions, true)]);
  const block = new Block();
  block.version = 0x20000000;
  block.prevHash = randomBytes(next, 32);
  block.merkleRoot = Block.calculateMerkleRoot(transactions);
  block.timestamp = 1_700_000_000 + (next() % 100_000);
  block.bits = 0x207fffff;
  block.nonce = next();
  block.transactions = transactions;
  const bytes = block.toBuffer();
  expect(Block.fromBuffer(bytes).checkTxRoots(), "a consistent generated block").to.equal(true);
  const offsets: number[] = [];
  let offset = 80 + compactSizeLength(count);
  for (const transaction of transactions) {
    offsets.push(offset);
    offset += transaction.byteLength();
  }
  expect(offset).to.equal(bytes.length);
  return { bytes, transactions, offsets };
}

function compactSizeLength(value: number): number {
  return value < 0xfd ? 1 : value <= 0xffff ? 3 : 5;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

function expectMatchesBitcoinjs(answer: ParentBlockParse, generated: GeneratedBlock): void {
  if (!answer.ok) expect.fail(answer.reason);
  expect(hex(answer.header)).to.equal(hex(generated.bytes.subarray(0, 80)));
  expect(hex(answer.coinbase)).to.equal(hex(serializeWithoutWitness(generated.transactions[0]!)));
  expect(answer.txids.map((txid) => Buffer.from(txid).reverse().toString("hex"))).to.deep.equal(generated.transactions.map((transaction) => transaction.getId()));
  expect(hex(merkleRootOfTxids(answer.txids))).to.equal(hex(answer.header.subarray(36, 68)));
}

function expectRefusal(answer: { ok: boolean; reason?: string }, pattern: RegExp): void {
  if (answer.ok) expect.fail(`accepted; expected a refusal matching ${pattern}`);
  expect(answer.reason).to.match(pattern);
}

function splice(bytes: Uint8Array, at: number, removed: number, inserted: number[] = []): Uint8Array {
  return Uint8Array.from([...bytes.subarray(0, at), ...inserted, ...bytes.subarray(at + removed)]);
}

const maxCompactSize = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];

/**
 * A segwit transaction laid out at known offsets: version 0-3, marker 4, flag 5, input count 6,
 * outpoint 7-42, script length 43, sequence 44-47, output count 48, value 49-56, script length 57,
 * script 58-59, witness item count 60, item length 61, item 62-64, lock time 65-68.
 */
function smallSegwitTransaction(): Uint8Array {
  const transaction = new Transaction();
  transaction.version = 2;
  transaction.addInput(new Uint8Array(32).fill(0x11), 1, 0xfffffffe);
  transaction.addOutput(Uint8Array.of(0x51, 0x52), 5000n);
  transaction.setWitness(0, [Uint8Array.of(1, 2, 3)]);
  const bytes = transaction.toBuffer();
  expect(bytes.length).to.equal(69);
  return bytes;
}

/** The same without witness: version 0-3, input count 4, outpoint 5-40, script length 41, sequence 42-45, output count 46, value 47-54, script length 55, script 56-57, lock time 58-61. */
function smallLegacyTransaction(): Uint8Array {
  const bytes = serializeWithoutWitness(Transaction.fromBuffer(smallSegwitTransaction()));
  expect(bytes.length).to.equal(62);
  return bytes;
}

function blockOf(transactions: Uint8Array[]): Uint8Array {
  const header = encodeParentHeader({ version: 1, prevHash: new Uint8Array(32), merkleRoot: new Uint8Array(32), time: 0, bits: 0x207fffff, nonce: 0 });
  return Uint8Array.from([...header, transactions.length, ...transactions.flatMap((transaction) => [...transaction])]);
}

describe("consensus/parentBlock", () => {
  describe("generated blocks, against bitcoinjs-lib", () => {
    for (const count of [1, 2, 3, 5, 8, 13, 300]) {
      it(`a block of ${count} transaction${count === 1 ? "" : "s"}: header, coinbase without witness, txids and merkle root`, () => {
        const next = seededRandom(0x5eed + count);
        for (let round = 0; round < (count > 100 ? 2 : 4); round++) {
          const generated = generateBlock(next, count, { segwitCoinbase: round % 2 === 1 });
          expectMatchesBitcoinjs(parseParentBlock(generated.bytes), generated);
        }
      });
    }

    it("a segwit coinbase with the witness commitment: the coinbase answered is its txid's serialization, not the one sent", () => {
      const generated = generateBlock(seededRandom(7), 6, { segwitShare: 1 });
      const coinbase = generated.transactions[0]!;
      expect(coinbase.hasWitnesses()).to.equal(true);
      const answer = parseParentBlock(generated.bytes);
      expectMatchesBitcoinjs(answer, generated);
      if (!answer.ok) return;
      expect(answer.coinbase.length).to.be.below(coinbase.byteLength());
      expect(hex(sha256d(answer.coinbase))).to.equal(hex(coinbase.getHash()));
    });

    it("a block of legacy transactions only, and one of segwit transactions only", () => {
      const next = seededRandom(11);
      for (const segwitShare of [0, 1]) {
        const generated = generateBlock(next, 9, { segwitShare });
        expect(generated.transactions.slice(1).every((transaction) => transaction.hasWitnesses() === (segwitShare === 1))).to.equal(true);
        expectMatchesBitcoinjs(parseParentBlock(generated.bytes), generated);
      }
    });

    it("parseParentTransaction reads each transaction at its offset: its end, form, serialization without witness and txid", () => {
      const generated = generateBlock(seededRandom(23), 40);
      generated.transactions.forEach((transaction, index) => {
        const answer = parseParentTransaction(generated.bytes, generated.offsets[index]);
        if (!answer.ok) expect.fail(answer.reason);
        expect(answer.end).to.equal(generated.offsets[index]! + transaction.byteLength());
        expect(answer.segwit).to.equal(transaction.hasWitnesses());
        expect(hex(answer.withoutWitness)).to.equal(hex(serializeWithoutWitness(transaction)));
        expect(Buffer.from(answer.txid).reverse().toString("hex")).to.equal(transaction.getId());
      });
    });

    it("a script of 70,000 bytes (a 5-byte compact size) and a witness item of 300 (3 bytes)", () => {
      const transaction = new Transaction();
      transaction.addInput(new Uint8Array(32).fill(3), 0);
      transaction.addOutput(new Uint8Array(70_000).fill(0x6a), 1n);
      transaction.setWitness(0, [new Uint8Array(300).fill(9)]);
      const bytes = transaction.toBuffer();
      const answer = parseParentTransaction(bytes);
      if (!answer.ok) expect.fail(answer.reason);
      expect(answer.end).to.equal(bytes.length);
      expect(Buffer.from(answer.txid).reverse().toString("hex")).to.equal(transaction.getId());
    });

    it("the answer shares no memory with the bytes given: overwriting them after parsing changes nothing", () => {
      const generated = generateBlock(seededRandom(31), 4, { segwitShare: 0 });
      const bytes = generated.bytes.slice();
      const answer = parseParentBlock(bytes);
      const single = parseParentTransaction(bytes, generated.offsets[1]);
      bytes.fill(0xee);
      expectMatchesBitcoinjs(answer, generated);
      if (!single.ok) expect.fail(single.reason);
      expect(hex(single.withoutWitness)).to.equal(hex(serializeWithoutWitness(generated.transactions[1]!)));
    });

    it("a block inside a larger buffer (a view with a byte offset) parses the same", () => {
      const generated = generateBlock(seededRandom(37), 7);
      const larger = new Uint8Array(generated.bytes.length + 100);
      larger.set(generated.bytes, 50);
      expectMatchesBitcoinjs(parseParentBlock(larger.subarray(50, 50 + generated.bytes.length)), generated);
    });

    it("a 1 MB block of about 2,000 transactions parses correctly in well under a second", () => {
      const next = seededRandom(1_000_000);
      const generated = generateBlock(next, 2_000);
      expect(generated.bytes.length).to.be.within(700_000, 1_500_000);
      const started = performance.now();
      const answer = parseParentBlock(generated.bytes);
      const elapsed = performance.now() - started;
      expectMatchesBitcoinjs(answer, generated);
      expect(elapsed).to.be.below(500);
    });
  });

  describe("refusals: a reason, never an exception", () => {
    it("every prefix of a small block (segwit coinbase and transactions) is refused with the byte where it ends", () => {
      const generated = generateBlock(seededRandom(41), 3, { segwitShare: 0.5, segwitCoinbase: true });
      expect(parseParentBlock(generated.bytes).ok).to.equal(true);
      for (let length = 0; length < generated.bytes.length; length++) {
        const answer = parseParentBlock(generated.bytes.subarray(0, length));
        // Cut inside a part, it is missing bytes; cut after a count or length, that count claims more than is left.
        expectRefusal(answer, length < 80 ? /^truncated: block of \d+ bytes/ : /^(transaction \d+: )?(truncated: .* at byte \d+ needs \d+ bytes?, \d+ left|.* at byte \d+ claims \d+, more than the \d+ bytes left could hold)$/);
      }
    });

    it("every prefix of a segwit and of a legacy transaction is refused", () => {
      for (const bytes of [smallSegwitTransaction(), smallLegacyTransaction()]) {
        expect(parseParentTransaction(bytes).ok).to.equal(true);
        for (let length = 0; length < bytes.length; length++) {
          expectRefusal(parseParentTransaction(bytes.subarray(0, length)), /^(truncated: .* at byte \d+ needs|.* at byte \d+ claims \d+, more than)/);
        }
      }
    });

    it("a byte after the last transaction", () => {
      const generated = generateBlock(seededRandom(43), 2);
      const bytes = Uint8Array.from([...generated.bytes, 0]);
      expectRefusal(parseParentBlock(bytes), new RegExp(`^1 bytes after the last of 2 transactions, from byte ${generated.bytes.length}$`));
    });

    it("an empty block: no bytes, a header alone, a transaction count of 0", () => {
      expectRefusal(parseParentBlock(new Uint8Array(0)), /^truncated: block of 0 bytes, shorter than its 80-byte header$/);
      const block = blockOf([]);
      expectRefusal(parseParentBlock(block.subarray(0, 80)), /^truncated: transaction count at byte 80 needs 1 byte, 0 left$/);
      expectRefusal(parseParentBlock(block), /^transaction count 0 at byte 80: a block has at least its coinbase$/);
    });

    it("a transaction count of 2^64 - 1, and counts the bytes left could not hold", () => {
      const transaction = smallLegacyTransaction();
      const block = blockOf([transaction]);
      expectRefusal(parseParentBlock(splice(block, 80, 1, maxCompactSize)), /^transaction count at byte 80 claims 18446744073709551615, more than the 62 bytes left could hold$/);
      expectRefusal(parseParentBlock(splice(block, 80, 1, [0xfe, 0xff, 0xff, 0xff, 0xff])), /^transaction count at byte 80 claims 4294967295/);
      // 2 transactions need at least 102 bytes; 62 are left.
      expectRefusal(parseParentBlock(splice(block, 80, 1, [2])), /^transaction count at byte 80 claims 2, more than the 62 bytes left could hold$/);
    });

    it("oversized counts and lengths inside a transaction, each named with its byte", () => {
      const segwit = smallSegwitTransaction();
      const legacy = smallLegacyTransaction();
      const cases: [Uint8Array, RegExp][] = [
        [splice(segwit, 6, 1, maxCompactSize), /^input count at byte 6 claims 18446744073709551615/],
        [splice(legacy, 4, 1, maxCompactSize), /^input count at byte 4 claims 18446744073709551615/],
        [splice(legacy, 4, 1, [2]), /^input count at byte 4 claims 2, more than the 57 bytes left could hold$/],
        [splice(legacy, 41, 1, [0xfd, 0xff, 0xff]), /^input 0 script length at byte 41 claims 65535/],
        [splice(legacy, 46, 1, maxCompactSize), /^output count at byte 46 claims 18446744073709551615/],
        [splice(legacy, 55, 1, [0xfe, 0, 0, 0, 1]), /^output 0 script length at byte 55 claims 16777216/],
        [splice(segwit, 60, 1, maxCompactSize), /^input 0 witness item count at byte 60 claims 18446744073709551615/],
        [splice(segwit, 61, 1, [0xfc]), /^input 0 witness item 0 length at byte 61 claims 252, more than the 7 bytes left could hold$/],
      ];
      for (const [bytes, pattern] of cases) {
        expectRefusal(parseParentTransaction(bytes), pattern);
        expectRefusal(parseParentBlock(blockOf([bytes])), new RegExp(`^transaction 0: ${pattern.source.slice(1).replace(/at byte (\d+)/, (_, at: string) => `at byte ${Number(at) + 81}`)}`));
      }
    });

    it("compact sizes not in their shortest form", () => {
      const legacy = smallLegacyTransaction();
      expectRefusal(parseParentTransaction(splice(legacy, 4, 1, [0xfd, 1, 0])), /^input count at byte 4: 1 written in 3 bytes, not in its shortest form$/);
      expectRefusal(parseParentTransaction(splice(legacy, 55, 1, [0xfe, 2, 0, 0, 0])), /^output 0 script length at byte 55: 2 written in 5 bytes/);
      expectRefusal(parseParentTransaction(splice(legacy, 46, 1, [0xff, 1, 0, 0, 0, 0, 0, 0, 0])), /^output count at byte 46: 1 written in 9 bytes/);
      expectRefusal(parseParentTransaction(splice(legacy, 41, 1, [0xfd, 0xfc, 0])), /^input 0 script length at byte 41: 252 written in 3 bytes/);
      expectRefusal(parseParentBlock(splice(blockOf([legacy]), 80, 1, [0xfd, 1, 0])), /^transaction count at byte 80: 1 written in 3 bytes/);
    });

    it("no inputs without the segwit form, a segwit flag other than 1, segwit without inputs or without witness items", () => {
      const legacy = smallLegacyTransaction();
      // A legacy transaction without inputs: no outputs either, or one output, whose count reads as the
      // segwit flag (BIP144's ambiguity), so the value's first byte (5000 = 0x1388) is read as the input count.
      expectRefusal(parseParentTransaction(Uint8Array.from([...legacy.subarray(0, 4), 0, 0, ...legacy.subarray(58)])), /^input count 0 at byte 4: not a segwit marker, the flag after it is 0x00, not 0x01$/);
      expectRefusal(parseParentTransaction(Uint8Array.from([...legacy.subarray(0, 4), 0, ...legacy.subarray(46)])), /^input count at byte 6 claims 136, more than the 14 bytes left could hold$/);
      const segwit = smallSegwitTransaction();
      expectRefusal(parseParentTransaction(splice(segwit, 5, 1, [0x02])), /^input count 0 at byte 4: not a segwit marker, the flag after it is 0x02, not 0x01$/);
      expectRefusal(parseParentTransaction(Uint8Array.from([...segwit.subarray(0, 6), 0, ...segwit.subarray(48, 60), ...segwit.subarray(65)])), /^segwit transaction at byte 0 with no inputs \(input count at byte 6\)$/);
      expectRefusal(parseParentTransaction(splice(segwit, 60, 5, [0])), /^segwit transaction at byte 0 with no witness items$/);
      expectRefusal(parseParentBlock(blockOf([legacy, splice(segwit, 5, 1, [0x03])])), /^transaction 1: input count 0 at byte 147: not a segwit marker, the flag after it is 0x03, not 0x01$/);
    });

    it("an offset outside the bytes", () => {
      const legacy = smallLegacyTransaction();
      expectRefusal(parseParentTransaction(legacy, 63), /^transaction offset 63 outside the 62 bytes given$/);
      expectRefusal(parseParentTransaction(legacy, -1), /^transaction offset -1 outside/);
      expectRefusal(parseParentTransaction(legacy, 1.5), /^transaction offset 1.5 outside/);
      expectRefusal(parseParentTransaction(legacy, 62), /^truncated: transaction version at byte 62 needs 4 bytes, 0 left$/);
    });

    it("random damage to a block: never an exception; whatever is accepted, bitcoinjs-lib reads with the same txids", () => {
      const next = seededRandom(0xdead);
      const generated = generateBlock(next, 4, { segwitCoinbase: true });
      let accepted = 0;
      for (let round = 0; round < 2_000; round++) {
        let bytes: Uint8Array = generated.bytes.slice();
        const edits = 1 + (next() % 3);
        for (let edit = 0; edit < edits; edit++) {
          const at = next() % bytes.length;
          const kind = next() % 4;
          if (kind === 0) bytes = splice(bytes, at, 1);
          else if (kind === 1) bytes = splice(bytes, at, 0, [next() & 0xff]);
          else bytes[at] = kind === 2 ? next() & 0xff : [0x00, 0xfd, 0xfe, 0xff][next() % 4]!;
        }
        const answer = parseParentBlock(bytes);
        if (!answer.ok) {
          expect(answer.reason).to.be.a("string").and.not.equal("");
          continue;
        }
        accepted++;
        const block = Block.fromBuffer(bytes);
        expect(answer.txids.map((txid) => Buffer.from(txid).reverse().toString("hex"))).to.deep.equal(block.transactions!.map((transaction) => transaction.getId()));
        expect(hex(answer.coinbase)).to.equal(hex(serializeWithoutWitness(block.transactions![0]!)));
      }
      // Damage inside scripts, values and hashes keeps the block readable: both sides are exercised.
      expect(accepted).to.be.within(100, 1_900);
    });
  });
});
