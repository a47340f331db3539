// The memory-bounded cache behind the trie-node cache and the remembered trie reads: it stays within
// its budget however much goes in, answers what it holds with the values put in, and keeps entries
// in use while newer ones push the rest out.
import { expect } from "chai";
import { bytesEntryCost, entryOverheadBytes, GenerationalCache } from "../../../src/common/generationalCache.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

describe("common/generationalCache", () => {
  it("costs no more than its budget (plus one entry), whatever goes in", () => {
    const next = seededRandom(5);
    const budget = 64 * 1024;
    const cache = new GenerationalCache<Uint8Array>(budget, bytesEntryCost);
    let largest = 0;
    for (let index = 0; index < 5_000; index++) {
      const key = index.toString(16).padStart(64, "0");
      const value = randomBytes(next, 1 + (next() % 600));
      largest = Math.max(largest, bytesEntryCost(key, value));
      cache.set(key, value);
      expect(cache.cost).to.be.at.most(budget + largest);
    }
    // Far fewer entries than went in: the budget counts the per-entry overhead, not only the bytes.
    expect(cache.size).to.be.below(budget / entryOverheadBytes);
  });

  it("answers each key it still holds with the value put under it, and nothing for others", () => {
    const next = seededRandom(9);
    const cache = new GenerationalCache<Uint8Array | null>(32 * 1024, bytesEntryCost);
    const values = new Map<string, Uint8Array | null>();
    for (let index = 0; index < 2_000; index++) {
      const key = `k${next() % 500}`;
      const value = next() % 7 === 0 ? null : randomBytes(next, 1 + (next() % 100));
      // Entries never change once put (trie nodes and reads at a root): a key keeps its first value.
      if (!values.has(key)) values.set(key, value);
      cache.set(key, values.get(key)!);
      const probe = `k${next() % 600}`;
      const held = cache.get(probe);
      if (held !== undefined) expect(held).to.equal(values.get(probe));
      if (!values.has(probe)) expect(held).to.equal(undefined);
    }
  });

  it("forgets a deleted entry in either generation, and its cost with it", () => {
    const cache = new GenerationalCache<Uint8Array>(8 * 1024, bytesEntryCost);
    cache.set("aged", new Uint8Array(100));
    // Some 600 bytes of cost each: the young generation (4 KiB) turns over once, and "aged" is in the old one.
    for (let index = 0; index < 8; index++) cache.set(`filler ${index}`, new Uint8Array(100));
    cache.set("young", new Uint8Array(50));
    for (const [key, length] of [["young", 50], ["aged", 100]] as const) {
      const before = cache.cost;
      cache.delete(key);
      expect(cache.cost, `cost after deleting ${key}`).to.equal(before - bytesEntryCost(key, new Uint8Array(length)));
      expect(cache.get(key)).to.equal(undefined);
    }
    const before = cache.cost;
    cache.delete("never there");
    expect(cache.cost).to.equal(before);
    for (let index = 0; index < 8; index++) cache.delete(`filler ${index}`);
    expect(cache.size).to.equal(0);
    expect(cache.cost).to.equal(0);
  });

  it("keeps an entry that is read while newer entries push the others out", () => {
    const cache = new GenerationalCache<Uint8Array>(16 * 1024, bytesEntryCost);
    const kept = new Uint8Array(32).fill(1);
    cache.set("kept", kept);
    for (let index = 0; index < 1_000; index++) {
      cache.set(`filler ${index}`, new Uint8Array(100));
      expect(cache.get("kept"), `after ${index} fillers`).to.equal(kept);
    }
    expect(cache.get("filler 0")).to.equal(undefined);
    expect(cache.get("filler 999")).to.not.equal(undefined);
  });
});
