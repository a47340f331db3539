// EIP-712 hashing against ethers' TypedDataEncoder over typed data that uses every kind of field
// (structs nested two levels, ethers refusing recursive types; dynamic and fixed arrays, arrays of structs, signed integers,
// bytes, bytesN, bool), and every malformed part refused with a message naming where it is.
import { expect } from "chai";
import { hexlify, TypedDataEncoder } from "ethers";
import { TypedDataError, typedDataHash } from "../../../src/accounts/typedData.js";

const everyKind = {
  types: {
    EIP712Domain: [
      { name: "name", type: "string" },
      { name: "chainId", type: "uint256" },
      { name: "verifyingContract", type: "address" },
      { name: "salt", type: "bytes32" },
    ],
    Person: [
      { name: "name", type: "string" },
      { name: "wallets", type: "address[]" },
      { name: "friends", type: "Friend[]" },
    ],
    Friend: [
      { name: "name", type: "string" },
      { name: "since", type: "uint64" },
    ],
    Group: [
      { name: "members", type: "Person[]" },
      { name: "leader", type: "Person" },
      { name: "scores", type: "int16[2][]" },
      { name: "tag", type: "bytes4" },
      { name: "blob", type: "bytes" },
      { name: "open", type: "bool" },
      { name: "budget", type: "uint256" },
      { name: "flags", type: "bool[3]" },
    ],
  },
  primaryType: "Group",
  domain: { name: "Groups", chainId: 33, verifyingContract: "0x1111111111111111111111111111111111111111", salt: `0x${"ab".repeat(32)}` },
  message: {
    members: [
      { name: "Ann", wallets: ["0x2222222222222222222222222222222222222222"], friends: [{ name: "Cy", since: 1700000000 }] },
      { name: "Bo", wallets: [], friends: [] },
    ],
    leader: { name: "Di", wallets: ["0x3333333333333333333333333333333333333333", "0x4444444444444444444444444444444444444444"], friends: [] },
    scores: [[-32768, 32767], ["-1", "0x10"]],
    tag: "0xdeadbeef",
    blob: "0x0102030405",
    open: true,
    budget: "115792089237316195423570985008687907853269984665640564039457584007913129639935",
    flags: [true, false, true],
  },
};

function ethersHash(data: typeof everyKind): string {
  const { EIP712Domain: _domainType, ...types } = data.types as Record<string, { name: string; type: string }[]>;
  return TypedDataEncoder.hash(data.domain, types, data.message);
}

function expectRefused(change: (data: Record<string, any>) => void, message: RegExp): void {
  const data = structuredClone(everyKind) as Record<string, any>;
  change(data);
  expect(() => typedDataHash(data)).to.throw(TypedDataError, message);
}

describe("EIP-712 typed data hash", () => {
  it("equals ethers' TypedDataEncoder.hash for every kind of field", () => {
    expect(hexlify(typedDataHash(everyKind))).to.equal(ethersHash(everyKind));
  });

  it("makes the domain type from the domain's fields when EIP712Domain is not given, as ethers does", () => {
    const { EIP712Domain: _domainType, ...types } = everyKind.types;
    expect(hexlify(typedDataHash({ ...everyKind, types }))).to.equal(ethersHash(everyKind));
  });

  it("changes with any field of the message or the domain", () => {
    const base = hexlify(typedDataHash(everyKind));
    const other = structuredClone(everyKind);
    other.message.scores[1]![0] = "-2";
    expect(hexlify(typedDataHash(other))).to.not.equal(base);
    const otherDomain = structuredClone(everyKind);
    otherDomain.domain.chainId = 31;
    expect(hexlify(typedDataHash(otherDomain))).to.not.equal(base);
  });

  it("refuses malformed typed data, naming the fault and where it is", () => {
    expectRefused((data) => (data.primaryType = "Nobody"), /^primaryType: "Nobody" is not one of the struct types$/);
    expectRefused((data) => (data.types.Person[0].type = "strin"), /^types\.Person\[0\]\.type: unknown type "strin"$/);
    expectRefused((data) => (data.types.Group[7].type = "bool[0]"), /^types\.Group\[7\]\.type: "bool\[0\]" is not a valid array type$/);
    expectRefused((data) => data.types.Person.push({ name: "name", type: "string" }), /^types\.Person\[3\]\.name: the field name appears twice in Person$/);
    expectRefused((data) => delete data.message.open, /^message\.open: missing \(a bool field of Group\)$/);
    expectRefused((data) => (data.message.extra = 1), /^message\.extra: Group has no field extra$/);
    expectRefused((data) => (data.message.leader.wallets[1] = "0x12"), /^message\.leader\.wallets\[1\]: expected a 20-byte 0x-hex address, got "0x12"$/);
    expectRefused((data) => (data.message.scores[0][0] = -32769), /^message\.scores\[0\]\[0\]: -32769 is out of the range of int16$/);
    expectRefused((data) => (data.message.budget = 2 ** 60), /^message\.budget: expected an integer \(uint256\) as a safe JSON number/);
    expectRefused((data) => (data.message.tag = "0xdead"), /^message\.tag: expected 4 bytes \(bytes4\), got 2$/);
    expectRefused((data) => (data.message.flags = [true]), /^message\.flags: expected 3 elements \(bool\[3\]\), got 1$/);
    expectRefused((data) => (data.message.open = "yes"), /^message\.open: expected true or false, got "yes"$/);
    expectRefused((data) => (data.domain.chainId = "-1"), /^domain\.chainId: -1 is out of the range of uint256$/);
    expectRefused((data) => (data.message = []), /^message: expected an object, got \[\]$/);
    expectRefused((data) => (data.types = "Group"), /^types: expected an object of struct types, got "Group"$/);
  });
});
