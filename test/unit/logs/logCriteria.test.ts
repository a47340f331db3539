// Topic matching (spec 2.10's table), address sets, the logs bloom test and block ranges, as pure functions.
import { expect } from "chai";
import { Bloom } from "@ethereumjs/vm";
import type { ChainLog } from "../../../src/chain/receipts.js";
import { bloomMayContain, bloomProbe, InvalidBlockRangeError, LogMatcher, resolveBlockRange, type LogCriteria } from "../../../src/logs/index.js";

function word(value: number): Uint8Array {
  const bytes = new Uint8Array(32);
  bytes[31] = value;
  return bytes;
}

const A = word(0xa);
const B = word(0xb);
const C = word(0xc);
const emitter = new Uint8Array(20).fill(1);
const otherEmitter = new Uint8Array(20).fill(2);

function log(topics: Uint8Array[], address = emitter): ChainLog {
  return { address, topics, data: new Uint8Array() };
}

function matches(criteria: Partial<LogCriteria>, subject: ChainLog): boolean {
  return new LogMatcher({ addresses: [], topics: [], ...criteria }).matches(subject);
}

/** A bloom holding the log's address and topics, built by @ethereumjs/vm (as blocks and receipts are). */
function bloomOf(...logs: ChainLog[]): Uint8Array {
  const bloom = new Bloom();
  for (const { address, topics } of logs) for (const value of [address, ...topics]) bloom.add(value);
  return bloom.bitvector;
}

describe("logs/logCriteria", () => {
  describe("topic table for a log with topics [A, B]", () => {
    const subject = log([A, B]);
    const rows: [string, (Uint8Array[] | null)[], boolean][] = [
      ["[]", [], true],
      ["[A]", [[A]], true],
      ["[B]", [[B]], false],
      ["[null, B]", [null, [B]], true],
      ["[null, A]", [null, [A]], false],
      ["[A, B]", [[A], [B]], true],
      ["[B, A]", [[B], [A]], false],
      ["[[A, B], [A, B]]", [[A, B], [A, B]], true],
      ["[[C], [A, B]]", [[C], [A, B]], false],
      ["[A, B, C]: a third topic the log lacks", [[A], [B], [C]], false],
      ["[A, B, null]: a wildcard past the log's topics (geth and the reference)", [[A], [B], null], false],
      ["[null, null]: as many wildcards as the log has topics", [null, null], true],
      ["[[], B]: an empty list allows anything", [[], [B]], true],
    ];
    for (const [name, topics, expected] of rows) {
      it(`${name} ${expected ? "matches" : "does not match"}`, () => expect(matches({ topics }, subject)).to.equal(expected));
    }
  });

  it("an address set matches any of its addresses; an empty set matches every address", () => {
    expect(matches({ addresses: [emitter] }, log([A]))).to.equal(true);
    expect(matches({ addresses: [otherEmitter] }, log([A]))).to.equal(false);
    expect(matches({ addresses: [otherEmitter, emitter] }, log([A]))).to.equal(true);
    expect(matches({ addresses: [] }, log([], otherEmitter))).to.equal(true);
    expect(matches({ addresses: [emitter], topics: [[B]] }, log([A]))).to.equal(false);
  });

  describe("bloom", () => {
    it("sets the same three bits as @ethereumjs/vm's Bloom", () => {
      for (const value of [A, B, emitter]) {
        const bloom = new Bloom();
        bloom.add(value);
        const probe = bloomProbe(value);
        const expected = new Uint8Array(256);
        for (let bit = 0; bit < 3; bit++) expected[probe.bytes[bit]!]! |= probe.masks[bit]!;
        expect(Buffer.from(expected).equals(Buffer.from(bloom.bitvector))).to.equal(true);
        expect(bloomMayContain(bloom.bitvector, probe)).to.equal(true);
        expect(bloomMayContain(new Uint8Array(256), probe)).to.equal(false);
      }
    });

    it("passes a bloom that may hold a match and rejects one that cannot", () => {
      const bloom = bloomOf(log([A, B]));
      const mayMatch = (criteria: Partial<LogCriteria>) => new LogMatcher({ addresses: [], topics: [], ...criteria }).bloomMayMatch(bloom);
      expect(mayMatch({})).to.equal(true);
      expect(mayMatch({ addresses: [emitter], topics: [[A], [B]] })).to.equal(true);
      expect(mayMatch({ addresses: [otherEmitter, emitter] })).to.equal(true);
      expect(mayMatch({ topics: [null, [C, B]] })).to.equal(true);
      expect(mayMatch({ addresses: [otherEmitter] })).to.equal(false);
      expect(mayMatch({ topics: [[A], [C]] })).to.equal(false);
      expect(mayMatch({ topics: [[C]] })).to.equal(false);
      // A bloom cannot tell positions apart: [B, A] passes it and fails the exact test.
      expect(mayMatch({ topics: [[B], [A]] })).to.equal(true);
      expect(matches({ topics: [[B], [A]] }, log([A, B]))).to.equal(false);
      expect(new LogMatcher({ addresses: [], topics: [[A]] }).bloomMayMatch(new Uint8Array(256))).to.equal(false);
    });
  });

  describe("block ranges", () => {
    const head = { kind: "head" } as const;
    const at = (number: bigint) => ({ kind: "number", number }) as const;

    it("resolves the head bound at the head and cuts the end at the head", () => {
      expect(resolveBlockRange(head, head, 10n)).to.deep.equal({ from: 10n, to: 10n });
      expect(resolveBlockRange(at(0n), head, 10n)).to.deep.equal({ from: 0n, to: 10n });
      expect(resolveBlockRange(at(3n), at(50n), 10n)).to.deep.equal({ from: 3n, to: 10n });
    });

    it("covers nothing when it starts after the head or the head is past a fixed end", () => {
      expect(resolveBlockRange(at(11n), head, 10n)).to.equal(undefined);
      expect(resolveBlockRange(at(11n), at(20n), 10n)).to.equal(undefined);
      expect(resolveBlockRange(head, at(3n), 10n)).to.equal(undefined);
    });

    it("refuses two numbers in the wrong order", () => {
      expect(() => resolveBlockRange(at(5n), at(3n), 10n)).to.throw(InvalidBlockRangeError, "fromBlock 5 is after toBlock 3");
    });
  });
});
