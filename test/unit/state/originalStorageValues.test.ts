// SSTORE's original values: read through once per slot, kept as first seen until cleared, and laid
// out as the package's cache (account hex -> slot hex -> value), which the struct-log tracer reads.
import { expect } from "chai";
import { Address } from "@ethereumjs/util";
import { bytesToHex } from "../../../src/common/hex.js";
import { OriginalStorageValues } from "../../../src/state/originalStorageValues.js";

function slot(index: number): Uint8Array {
  const key = new Uint8Array(32);
  key[31] = index;
  return key;
}

describe("state/originalStorageValues", () => {
  const account = new Address(new Uint8Array(20).fill(0xab));
  const other = new Address(new Uint8Array(20).fill(0xcd));

  it("reads a slot's value once and keeps it, whatever the state holds afterwards", async () => {
    const current = new Map<string, Uint8Array>([[`${account}:1`, Uint8Array.of(5)]]);
    const reads: string[] = [];
    const originals = new OriginalStorageValues(async (address, key) => {
      const name = `${address}:${key[31]}`;
      reads.push(name);
      return current.get(name) ?? new Uint8Array(0);
    });
    expect(bytesToHex(await originals.get(account, slot(1)))).to.equal("0x05");
    current.set(`${account}:1`, Uint8Array.of(9));
    expect(bytesToHex(await originals.get(account, slot(1))), "the first value stays").to.equal("0x05");
    expect(bytesToHex(await originals.get(other, slot(1))), "another account's slot").to.equal("0x");
    expect(bytesToHex(await originals.get(account, slot(2))), "another slot").to.equal("0x");
    expect(reads).to.deep.equal([`${account}:1`, `${other}:1`, `${account}:2`]);

    originals.clear();
    expect(bytesToHex(await originals.get(account, slot(1))), "read again once cleared").to.equal("0x09");
    expect(reads.length).to.equal(4);
  });

  it("keeps the first value put, in the package's layout", async () => {
    const originals = new OriginalStorageValues(async () => {
      throw new Error("no read expected");
    });
    originals.put(account, slot(3), Uint8Array.of(1));
    originals.put(account, slot(3), Uint8Array.of(2));
    expect(bytesToHex(await originals.get(account, slot(3)))).to.equal("0x01");
    const slotHex = "00".repeat(31) + "03";
    expect(bytesToHex(originals.map.get("ab".repeat(20))!.get(slotHex)!)).to.equal("0x01");
  });
});
