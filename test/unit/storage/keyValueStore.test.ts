// Store keys as map strings (keyOf) and back (keyFromString): one character per byte, for every
// byte value, of views into larger buffers and of Buffers alike.
import { expect } from "chai";
import { keyFromString, keyOf } from "../../../src/storage/keyValueStore.js";

describe("storage/keyValueStore keys", () => {
  it("gives one character per byte, the byte's code, and reads back the same bytes", () => {
    const backing = Uint8Array.from({ length: 300 }, (_, index) => (index * 131 + 17) & 0xff);
    const everyByte = Uint8Array.from({ length: 256 }, (_, byte) => byte);
    for (const bytes of [new Uint8Array(0), everyByte, backing.subarray(5, 38), backing.subarray(299), Buffer.from(backing.subarray(40, 72))]) {
      const key = keyOf(bytes);
      expect(key).to.have.length(bytes.length);
      expect([...key].map((character) => character.charCodeAt(0))).to.deep.equal([...bytes]);
      expect(keyFromString(key)).to.deep.equal(new Uint8Array(bytes));
    }
    // Distinct bytes, distinct keys; equal bytes in other arrays, the same key.
    expect(keyOf(Uint8Array.of(1, 2))).to.not.equal(keyOf(Uint8Array.of(1, 3)));
    expect(keyOf(backing.subarray(10, 20))).to.equal(keyOf(backing.slice(10, 20)));
  });
});
