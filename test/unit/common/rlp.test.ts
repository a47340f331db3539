// The node's RLP codec against @ethereumjs/rlp's: encodings byte for byte on generated nested values
// of every kind the package accepts and at the lengths where the prefix changes form; decodings
// value for value, and the same error for malformed input.
import { expect } from "chai";
import { decodeRlp, encodeRlp, packageRlpDecode, packageRlpEncode, rlpListItems, rlpListLength, type RlpInput } from "../../../src/common/rlp.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** Byte lengths around the prefix boundaries (55/56 bytes, one/two/three length bytes). */
const edgeLengths = [0, 1, 2, 55, 56, 57, 255, 256, 257, 65_535, 65_536, 70_000];

/** A generated value; choices come from the generator's high bits (an LCG's low bits repeat in short cycles). */
function randomValue(next: () => number, depth: number): RlpInput {
  const pick = (count: number) => (next() >>> 12) % count;
  switch (pick(depth > 3 ? 6 : 8)) {
    case 0:
      return randomBytes(next, pick(70));
    case 1:
      return Uint8Array.of(pick(256));
    case 2:
      return pick(2) === 0 ? BigInt(pick(300)) : BigInt(next()) * BigInt(next()) * BigInt(pick(3));
    case 3:
      return pick(300);
    case 4:
      return pick(2) === 0 ? null : undefined;
    case 5:
      return pick(2) === 0 ? `0x${hex(randomBytes(next, pick(40)))}${pick(2) === 0 ? "a" : ""}` : "plain text é";
    default:
      return Array.from({ length: pick(12) }, () => randomValue(next, depth + 1));
  }
}

describe("common/rlp", () => {
  it("encodes 2,000 generated nested values as the package does", () => {
    const next = seededRandom(11);
    for (let index = 0; index < 2_000; index++) {
      const value = randomValue(next, 0);
      expect(hex(encodeRlp(value)), `value ${index}`).to.equal(hex(packageRlpEncode(value as never)));
    }
  });

  it("encodes strings and lists at every prefix boundary, nested and alone", () => {
    const next = seededRandom(12);
    for (const length of edgeLengths) {
      const bytes = randomBytes(next, length);
      const listOfSingles = Array.from({ length: Math.min(length, 3_000) }, (_, index) => Uint8Array.of(index % 128));
      for (const value of [bytes, [bytes], [[bytes], bytes], listOfSingles, [listOfSingles, [listOfSingles]]]) {
        expect(hex(encodeRlp(value)), `${length} bytes`).to.equal(hex(packageRlpEncode(value as never)));
      }
    }
  });

  it("gives each caller its own bytes, and refuses negative numbers as the package does", () => {
    const first = encodeRlp([Uint8Array.of(1, 2, 3)]);
    const second = encodeRlp([Uint8Array.of(4, 5, 6)]);
    expect(hex(first)).to.equal("c483010203");
    expect(hex(second)).to.equal("c483040506");
    expect(() => encodeRlp(-1)).to.throw("must be unsigned");
    expect(() => packageRlpEncode(-1)).to.throw("must be unsigned");
  });

  it("decodes as the package does: generated encodings, and damaged ones to the same value or the same error", () => {
    const next = seededRandom(13);
    const outcome = (decode: () => unknown) => {
      try {
        return { value: decode() };
      } catch (error) {
        return { error: (error as Error).message };
      }
    };
    const same = (input: Uint8Array, label: string) => {
      const ours = outcome(() => decodeRlp(input));
      const theirs = outcome(() => packageRlpDecode(input));
      expect(ours, label).to.deep.equal(theirs);
    };
    let damagedErrors = 0;
    for (let index = 0; index < 2_000; index++) {
      const encoded = packageRlpEncode(randomValue(next, 0) as never);
      same(encoded, `value ${index}`);
      // One byte changed, or the end cut off: mostly errors, sometimes another valid value.
      const pick = (count: number) => (next() >>> 12) % count;
      const damaged = encoded.slice(0, pick(4) === 0 ? Math.max(0, encoded.length - 1 - pick(3)) : encoded.length);
      if (damaged.length > 0 && pick(2) === 0) damaged[pick(damaged.length)] = pick(256);
      same(damaged, `damaged value ${index}`);
      if (outcome(() => packageRlpDecode(damaged)).error !== undefined) damagedErrors++;
    }
    for (const length of edgeLengths) same(packageRlpEncode([randomBytes(next, length), [randomBytes(next, length)]]), `${length} bytes`);
    // Non-canonical lengths: a leading zero, a long form for a short string, a single byte in a prefix.
    for (const input of ["b8020102", "b90002" + "00".repeat(2), "8105", "c30102", "f800", "f90001" + "00", "80", "c0", "00"]) same(Buffer.from(input, "hex"), input);
    expect(damagedErrors, "damaged inputs the package refused").to.be.greaterThan(100);
  });

  it("gives each decoded value its own bytes, as the package's copies", () => {
    const encoded = packageRlpEncode([Uint8Array.of(1, 2, 3)]);
    const decoded = decodeRlp(encoded) as Uint8Array[];
    decoded[0]![0] = 9;
    expect(hex(encoded)).to.equal("c483010203");
  });

  it("splits a list into its items left encoded, each decoding as the package decodes it, and refuses what is not one list", () => {
    const next = seededRandom(23);
    for (let round = 0; round < 500; round++) {
      const items = Array.from({ length: (next() >>> 12) % 12 }, () => randomValue(next, 1));
      for (const length of round < edgeLengths.length ? [edgeLengths[round]!] : []) items.push(new Uint8Array(length));
      const encoded = encodeRlp(items);
      const split = rlpListItems(encoded);
      expect(rlpListLength(encoded)).to.equal(items.length);
      expect(split.map((item) => packageRlpDecode(item))).to.deep.equal(packageRlpDecode(encoded));
    }
    const list = packageRlpEncode([Uint8Array.of(1, 2), [Uint8Array.of(3)]]);
    for (const bad of [packageRlpEncode(Uint8Array.of(1, 2)), list.subarray(0, list.length - 1), Buffer.concat([list, Uint8Array.of(0)]), new Uint8Array(0), Uint8Array.of(0xc3, 0x85, 1, 2)]) {
      expect(() => rlpListItems(bad), hex(bad)).to.throw(/RLP: /);
    }
  });
});
