import { expect } from "chai";
import { bigIntToUnpaddedBytes, unpadBytes } from "@ethereumjs/util";
import { bigIntToMinimalBytes, bytesToHex, bytesToUnprefixedHex, describeHexProblem, hexToBytes, storageSlotFromHex, toQuantity, withoutLeadingZeroBytes, type HexFormat } from "../../../src/common/hex.js";

const quantity: HexFormat = { kind: "quantity", maxBits: 64 };
const data: HexFormat = { kind: "data" };
const address: HexFormat = { kind: "bytes", length: 20 };

describe("common/hex", () => {
  it("reads a storage slot of up to 32 bytes as its left-padded 32-byte key", () => {
    const word = (hex: string) => bytesToHex(storageSlotFromHex(hex));
    expect(word("0x1")).to.equal(`0x${"0".repeat(63)}1`);
    expect(word("0x0abc")).to.equal(`0x${"0".repeat(61)}abc`);
    expect(word("0xABC")).to.equal(`0x${"0".repeat(61)}abc`);
    expect(word(`0x${"f".repeat(64)}`)).to.equal(`0x${"f".repeat(64)}`);
    expect(word(`0x${"0".repeat(63)}7`)).to.equal(`0x${"0".repeat(63)}7`);
  });

  describe("describeHexProblem", () => {
    const cases: [string, HexFormat, string | undefined][] = [
      ["0x0", quantity, undefined],
      ["0x1f", quantity, undefined],
      ["0xAbC", quantity, undefined],
      ["0xffffffffffffffff", quantity, undefined],
      ["0x10000000000000000", quantity, "hex number larger than 64 bits"],
      ["0x01", quantity, "hex number with leading zero digits"],
      ["0x00", quantity, "hex number with leading zero digits"],
      ["0x", quantity, 'hex number "0x" has no digits (zero is "0x0")'],
      ["12", quantity, "hex string without 0x prefix"],
      ["0X12", quantity, 'hex string with upper-case "0X" prefix (use "0x")'],
      ["0xg1", quantity, "invalid hex string"],
      ["0x", data, undefined],
      ["0x00ff", data, undefined],
      ["0xabc", data, "hex string of odd length"],
      ["0x-1", data, "invalid hex string"],
      [`0x${"ab".repeat(20)}`, address, undefined],
      [`0x${"ab".repeat(19)}`, address, "wrong length: want 20 bytes, got 19"],
      [`0x${"ab".repeat(21)}`, address, "wrong length: want 20 bytes, got 21"],
      [`0x${"ab".repeat(19)}a`, address, "hex string of odd length"],
    ];
    for (const [value, format, expected] of cases) {
      it(`${JSON.stringify(value)} as ${format.kind} -> ${expected ?? "valid"}`, () => {
        expect(describeHexProblem(value, format)).to.equal(expected);
      });
    }
  });

  it("round-trips bytes through hex, lower case", () => {
    const bytes = Uint8Array.from([0, 1, 0xab, 0xff]);
    expect(bytesToHex(bytes)).to.equal("0x0001abff");
    expect(hexToBytes("0x0001ABff")).to.deep.equal(bytes);
    expect(bytesToHex(new Uint8Array())).to.equal("0x");
    expect(hexToBytes("0x")).to.deep.equal(new Uint8Array());
    const everyByte = Uint8Array.from({ length: 256 }, (_, byte) => byte);
    expect(hexToBytes(bytesToHex(everyByte))).to.deep.equal(everyByte);
    expect(hexToBytes(bytesToHex(everyByte).toUpperCase().replace("0X", "0x"))).to.deep.equal(everyByte);
    // Short and long arrays take two ways: both give the same digits, of a view into a larger buffer too.
    for (const length of [0, 1, 63, 64, 65, 532]) {
      const backing = Uint8Array.from({ length: length + 7 }, (_, index) => (index * 37 + 11) & 0xff);
      const view = backing.subarray(3, 3 + length);
      expect(bytesToHex(view), `${length} bytes`).to.equal(`0x${[...view].map((byte) => byte.toString(16).padStart(2, "0")).join("")}`);
    }
  });

  it("writes map keys as plain lower-case digits of exactly the array's bytes: views, Buffers and empty arrays", () => {
    const digitsOf = (bytes: Uint8Array) => [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
    const backing = Uint8Array.from({ length: 300 }, (_, index) => (index * 73 + 29) & 0xff);
    for (const length of [0, 1, 20, 31, 32, 33, 64, 65, 256]) {
      for (const offset of [0, 1, 7, 300 - length]) {
        const view = backing.subarray(offset, offset + length);
        expect(bytesToUnprefixedHex(view), `${length} bytes at ${offset}`).to.equal(digitsOf(view));
        expect(bytesToUnprefixedHex(Buffer.from(view)), `a Buffer of ${length} bytes`).to.equal(digitsOf(view));
      }
    }
  });

  it("turns integers into their shortest big-endian bytes as the package does, and refuses negatives", () => {
    const integers = [0n, 1n, 0x7fn, 0x80n, 0xffn, 0x100n, 0xfffn, 0x1000n, 0x123456789n, 2n ** 64n, 2n ** 255n + 3n, 2n ** 256n - 1n];
    for (const value of integers) expect(bytesToHex(bigIntToMinimalBytes(value)), `${value}`).to.equal(bytesToHex(bigIntToUnpaddedBytes(value)));
    expect(() => bigIntToMinimalBytes(-1n)).to.throw(RangeError);
  });

  it("writes quantities minimal and lower case, and refuses negatives", () => {
    expect(toQuantity(0)).to.equal("0x0");
    expect(toQuantity(33n)).to.equal("0x21");
    expect(toQuantity(2n ** 256n - 1n)).to.equal(`0x${"f".repeat(64)}`);
    expect(() => toQuantity(-1)).to.throw(RangeError);
  });

  it("withoutLeadingZeroBytes gives what @ethereumjs/util's unpadBytes gives", () => {
    const cases = [[], [0], [0, 0, 0], [1], [0, 1], [0, 0, 0x80, 0], [0xff, 0, 0], [...new Array<number>(31).fill(0), 1], new Array<number>(32).fill(0)];
    for (const bytes of cases) {
      const input = Uint8Array.from(bytes);
      const ours = withoutLeadingZeroBytes(input);
      const theirs = unpadBytes(Uint8Array.from(bytes));
      expect([...ours], `[${bytes.join(",")}]`).to.deep.equal([...theirs]);
      // The input itself when nothing is cut, as unpadBytes; otherwise a copy the caller may not change through the input.
      expect(ours === input, `[${bytes.join(",")}]`).to.equal(input.length === 0 || input[0] !== 0);
    }
  });
});
