// The node's RLP encoder against @ethereumjs/rlp's, byte for byte, on generated nested values of
// every kind the package accepts and at the lengths where the prefix changes form.
import { expect } from "chai";
import { encodeRlp, packageRlpEncode, type RlpInput } from "../../../src/common/rlp.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** Byte lengths around the prefix boundaries (55/56 bytes, one/two/three length bytes). */
const edgeLengths = [0, 1, 2, 55, 56, 57, 255, 256, 257, 65_535, 65_536, 70_000];

function randomValue(next: () => number, depth: number): RlpInput {
  const kind = next() % (depth > 3 ? 6 : 8);
  switch (kind) {
    case 0:
      return randomBytes(next, next() % 70);
    case 1:
      return Uint8Array.of(next() % 256);
    case 2:
      return BigInt(next()) * BigInt(next()) * BigInt(next() % 3);
    case 3:
      return next() % 300;
    case 4:
      return next() % 2 === 0 ? null : undefined;
    case 5:
      return next() % 2 === 0 ? `0x${hex(randomBytes(next, next() % 40))}${next() % 2 === 0 ? "a" : ""}` : "plain text é";
    default:
      return Array.from({ length: next() % 12 }, () => randomValue(next, depth + 1));
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
});
