// The parent-chain header, its hash and the proof-of-work target, against bitcoinjs-lib.
import { expect } from "chai";
import { Block } from "bitcoinjs-lib";
import {
  decodeParentHeader,
  difficultyToParentTarget,
  encodeParentHeader,
  hashToDisplayHex,
  isHashWithinTarget,
  isHashWithinTargetBytes,
  littleEndianToBigInt,
  ParentHeaderHasher,
  parentRegtestMaxTarget,
  sha256d,
  targetToCompact,
  targetToLittleEndian,
} from "../../../src/consensus/parentChain.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

// Bitcoin's block 1 header, as bitcoind serializes it.
const block1Header = Buffer.from(
  "010000006fe28c0ab6f1b372c1a6a246ae63f74f931e8365e15a089c68d6190000000000982051fd1e4ba744bbbe680e1fee14677ba1a3c3540bf7b1cdb606e857233e0e61bc6649ffff001d01e36299",
  "hex",
);

describe("consensus/parentChain: header and proof of work", () => {
  it("reads the six fields of an 80-byte header as bitcoinjs-lib does, and writes them back", () => {
    const header = decodeParentHeader(block1Header)!;
    const block = Block.fromBuffer(block1Header);
    expect(header.version).to.equal(block.version);
    expect(Buffer.from(header.prevHash)).to.deep.equal(Buffer.from(block.prevHash!));
    expect(Buffer.from(header.merkleRoot)).to.deep.equal(Buffer.from(block.merkleRoot!));
    expect([header.time, header.bits, header.nonce]).to.deep.equal([block.timestamp, block.bits, block.nonce]);
    expect(Buffer.from(encodeParentHeader(header))).to.deep.equal(block1Header);
  });

  it("answers no header for 79 or 81 bytes", () => {
    expect(decodeParentHeader(block1Header.subarray(0, 79))).to.equal(undefined);
    expect(decodeParentHeader(Buffer.concat([block1Header, Buffer.of(0)]))).to.equal(undefined);
  });

  it("hashes a header with double SHA-256, as Bitcoin names block 1", () => {
    const hash = sha256d(block1Header);
    expect(hashToDisplayHex(hash)).to.equal("00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048");
    expect(Buffer.from(hash)).to.deep.equal(Buffer.from(Block.fromBuffer(block1Header).getHash()));
  });

  it("hashes a header at any nonce from the state after its first 64 bytes as sha256d hashes it whole", () => {
    const hasher = new ParentHeaderHasher(block1Header);
    const hash = new Uint8Array(32);
    hasher.hashWithNonce(block1Header.readUInt32LE(76), hash);
    expect(hashToDisplayHex(hash)).to.equal("00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048");
    const random = seededRandom(11);
    for (let round = 0; round < 50; round++) {
      const header = randomBytes(random, 80);
      const headerHasher = new ParentHeaderHasher(header);
      for (const nonce of [0, 1, 0xff, 0x100, 0x12345678, 0xfffffffe, 0xffffffff, random()]) {
        // The header's own nonce bytes are not read: the hash is of the header with `nonce`.
        const withNonce = Buffer.from(header);
        withNonce.writeUInt32LE(nonce, 76);
        headerHasher.hashWithNonce(nonce, hash);
        expect(Buffer.from(hash), `round ${round}, nonce ${nonce}`).to.deep.equal(Buffer.from(sha256d(withNonce)));
      }
    }
    expect(() => new ParentHeaderHasher(block1Header.subarray(0, 79))).to.throw(RangeError);
  });

  it("takes 2^256 / difficulty as the target, with difficulties below 3 counted as 3", () => {
    const oneThird = (1n << 256n) / 3n;
    expect(oneThird.toString(16)).to.equal("5".repeat(64));
    for (const difficulty of [-1n, 0n, 1n, 2n, 3n]) expect(difficultyToParentTarget(difficulty)).to.equal(oneThird);
    expect(difficultyToParentTarget(4096n)).to.equal(1n << 244n);
    expect(difficultyToParentTarget(7n)).to.equal((1n << 256n) / 7n);
  });

  it("reads a hash little-endian and accepts it at the target, not one above", () => {
    const target = difficultyToParentTarget(4096n);
    const atTarget = Uint8Array.from(Buffer.from(target.toString(16).padStart(64, "0"), "hex").reverse());
    expect(littleEndianToBigInt(atTarget)).to.equal(target);
    expect(isHashWithinTarget(atTarget, target)).to.equal(true);
    const above = atTarget.slice();
    above[0] = 1;
    expect(isHashWithinTarget(above, target)).to.equal(false);
    // The same byte at the other end weighs nothing: byte 31 is the most significant.
    const small = new Uint8Array(32);
    small[0] = 0xff;
    expect(isHashWithinTarget(small, 1n)).to.equal(false);
    expect(isHashWithinTarget(small, 0xffn)).to.equal(true);
  });

  it("compares hashes with target bytes as with the number, at the boundary and for random hashes", () => {
    const next = seededRandom(8);
    for (const difficulty of [1n, 5n, 4096n, 1n << 40n]) {
      const target = difficultyToParentTarget(difficulty);
      const targetBytes = targetToLittleEndian(target);
      expect(littleEndianToBigInt(targetBytes)).to.equal(target);
      const justAbove = targetToLittleEndian(target + 1n);
      expect([isHashWithinTargetBytes(targetBytes, targetBytes), isHashWithinTargetBytes(justAbove, targetBytes)]).to.deep.equal([true, false]);
      for (let round = 0; round < 200; round++) {
        const hash = randomBytes(next, 32);
        // Shorten the number now and then so that hashes fall on both sides of small targets.
        hash.fill(0, 32 - (round % 33));
        expect(isHashWithinTargetBytes(hash, targetBytes)).to.equal(isHashWithinTarget(hash, target));
      }
    }
  });

  it("encodes targets in compact form as Bitcoin does, and bitcoinjs-lib reads them back", () => {
    expect(targetToCompact(parentRegtestMaxTarget).toString(16)).to.equal("207fffff");
    expect(targetToCompact(0xffffn << 208n).toString(16)).to.equal("1d00ffff");
    // A top bit set in the mantissa moves it one byte down (it would read as a sign).
    expect(targetToCompact(0x80n).toString(16)).to.equal("2008000");
    expect(targetToCompact(0x123456n).toString(16)).to.equal("3123456");
    expect(targetToCompact(0x12n).toString(16)).to.equal("1120000");
    for (const target of [parentRegtestMaxTarget, 0xffffn << 208n, 0x80n, 0x123456n, 0x12n, 0x7fn << 100n]) {
      const decoded = BigInt(`0x${Buffer.from(Block.calculateTarget(targetToCompact(target))).toString("hex")}`);
      expect(decoded, target.toString(16)).to.equal(target);
    }
  });
});
