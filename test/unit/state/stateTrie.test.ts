import { expect } from "chai";
import { BranchMPTNode, MerklePatriciaTrie } from "@ethereumjs/mpt";
import { bytesToHex, ValueEncoding } from "@ethereumjs/util";
import { StateTrie } from "../../../src/state/stateTrie.js";
import { createMemoryStore } from "../../../src/storage/keyValueStore.js";
import { TrieNodeStore } from "../../../src/storage/trieNodeStore.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

async function expectRejection(promise: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection as Error,
  );
  expect(error?.message, "a rejection").to.match(message);
}

describe("state/stateTrie", () => {
  it("gives the package's roots, values and paths over random puts and deletes, hashed keys or not", async () => {
    for (const useKeyHashing of [true, false]) {
      const next = seededRandom(useKeyHashing ? 7 : 11);
      const options = { useKeyHashing, valueEncoding: ValueEncoding.Bytes, useNodePruning: false } as const;
      const reference = new MerklePatriciaTrie({ ...options, db: new TrieNodeStore(createMemoryStore()) });
      const fast = new StateTrie({ ...options, db: new TrieNodeStore(createMemoryStore()) });
      // Short keys with shared prefixes force extensions and branch values; 20-byte keys are the accounts' case.
      const keys = Array.from({ length: 120 }, (_, index) => randomBytes(next, index % 3 === 0 ? 1 + (next() % 3) : 20));
      for (let step = 0; step < 600; step++) {
        const key = keys[next() % keys.length]!;
        if (next() % 4 === 0) {
          await reference.del(key);
          await fast.del(key);
        } else {
          const value = randomBytes(next, 1 + (next() % 40));
          await reference.put(key, value);
          await fast.put(key, value);
        }
        expect(bytesToHex(fast.root()), `root after step ${step}`).to.equal(bytesToHex(reference.root()));
      }
      for (const key of keys) {
        const [expected, actual] = [await reference.get(key), await fast.get(key)];
        expect(actual === null ? null : bytesToHex(actual)).to.equal(expected === null ? null : bytesToHex(expected));
        const probe = useKeyHashing ? reference["hash"](key) : key;
        const [expectedPath, actualPath] = [await reference.findPath(probe), await fast.findPath(probe)];
        expect(actualPath.remaining).to.deep.equal(expectedPath.remaining);
        expect(actualPath.stack.map((node) => bytesToHex(node.serialize()))).to.deep.equal(expectedPath.stack.map((node) => bytesToHex(node.serialize())));
        expect(actualPath.node?.serialize()).to.deep.equal(expectedPath.node?.serialize());
      }
    }
  });

  it("reads at any earlier root without moving its own, as a trie at that root would", async () => {
    const next = seededRandom(23);
    const options = { useKeyHashing: true, valueEncoding: ValueEncoding.Bytes, useNodePruning: false } as const;
    const writer = new StateTrie({ ...options, db: new TrieNodeStore(createMemoryStore()) });
    const keys = Array.from({ length: 40 }, () => randomBytes(next, 20));
    const history: { root: Uint8Array; values: Map<Uint8Array, Uint8Array | null> }[] = [];
    const current = new Map<Uint8Array, Uint8Array | null>(keys.map((key) => [key, null]));
    for (let round = 0; round < 15; round++) {
      for (let change = 0; change < 8; change++) {
        const key = keys[next() % keys.length]!;
        const value = next() % 5 === 0 ? null : randomBytes(next, 1 + (next() % 40));
        if (value === null) await writer.del(key);
        else await writer.put(key, value);
        current.set(key, value);
      }
      history.push({ root: writer.root(), values: new Map(current) });
    }
    const reader = new StateTrie({ ...options, db: writer["_db"].db });
    const readerRoot = bytesToHex(reader.root());
    // All reads at once, at every root: each answers its own root's value.
    const reads = history.flatMap(({ root, values }) => keys.map(async (key) => [await reader.getAt(root, key), values.get(key) ?? null] as const));
    for (const [actual, expected] of await Promise.all(reads)) expect(actual === null ? null : bytesToHex(actual)).to.equal(expected === null ? null : bytesToHex(expected));
    expect(bytesToHex(reader.root())).to.equal(readerRoot);
    await expectRejection(reader.getAt(new Uint8Array(32).fill(9), keys[0]!), /Missing node/);
  });

  it("hands out each looked-up node as a copy of its own: changing one leaves the next lookup as stored", async () => {
    const trie = new StateTrie({ useKeyHashing: true, valueEncoding: ValueEncoding.Bytes, db: new TrieNodeStore(createMemoryStore()) });
    for (let index = 0; index < 40; index++) await trie.put(Uint8Array.of(index), Uint8Array.of(index, 1));
    const root = trie.root();
    const before = bytesToHex((await trie.lookupNode(root)).serialize());
    // The first lookup decoded the node; the next ones find it decoded.
    for (let lookup = 0; lookup < 2; lookup++) {
      const node = (await trie.lookupNode(root)) as BranchMPTNode;
      expect(node).to.be.instanceOf(BranchMPTNode);
      expect(bytesToHex(node.serialize())).to.equal(before);
      node.setBranch(0, new Uint8Array(32).fill(7));
      node.value(Uint8Array.of(9));
    }
    const missing = new Uint8Array(32).fill(0xee);
    await expectRejection(trie.lookupNode(missing), /Missing node in DB/);
  });

  it("copies (the storage tries) are StateTries on the same nodes", async () => {
    const trie = new StateTrie({ useKeyHashing: true, valueEncoding: ValueEncoding.Bytes, db: new TrieNodeStore(createMemoryStore()) });
    await trie.put(new Uint8Array([1]), new Uint8Array([2]));
    const copy = trie.shallowCopy(false);
    expect(copy).to.be.instanceOf(StateTrie);
    expect(await copy.get(new Uint8Array([1]))).to.deep.equal(new Uint8Array([2]));
  });
});
