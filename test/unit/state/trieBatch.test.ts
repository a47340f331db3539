import { expect } from "chai";
import { MerklePatriciaTrie, type MPTOpts } from "@ethereumjs/mpt";
import { bytesToHex, ValueEncoding } from "@ethereumjs/util";
import { StateTrie } from "../../../src/state/stateTrie.js";
import { applyTrieChanges, appliedTrieKey, type TrieChange } from "../../../src/state/trieBatch.js";
import { createMemoryStore, type KeyValueStore, type StoreOperation } from "../../../src/storage/keyValueStore.js";
import { TrieNodeStore } from "../../../src/storage/trieNodeStore.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

function hexOrNull(value: Uint8Array | null): string | null {
  return value === null ? null : bytesToHex(value);
}

/**
 * Keys that make every kind of node (without key hashing): 1-3 byte keys; keys sharing 18 bytes and
 * then one of three bytes (long extensions, extensions under branches that merge when a branch
 * folds); prefixes of those (values in branches inside extensions); random 20-byte keys.
 */
function keyUniverse(next: () => number): Uint8Array[] {
  const sharedPrefix = randomBytes(next, 18);
  const forks = [0x11, 0x12, 0x21];
  return Array.from({ length: 100 }, (_, index) => {
    if (index % 4 === 0) return randomBytes(next, 1 + (next() % 3));
    if (index % 4 === 1) return Uint8Array.from([...sharedPrefix, forks[next() % forks.length]!, next() & 0xff]);
    if (index % 4 === 2) return sharedPrefix.slice(0, 10 + (next() % 9));
    return randomBytes(next, 20);
  });
}

/** A batch of changes (unhashed keys): puts, deletes (of present and absent keys), same-value rewrites, a key twice. */
function randomBatch(next: () => number, keys: readonly Uint8Array[], current: Map<string, Uint8Array>, round: number): [Uint8Array, Uint8Array | null][] {
  if (round % 9 === 8) return keys.map((key) => [key, null]);
  const changes: [Uint8Array, Uint8Array | null][] = [];
  const size = 1 + (next() % (round % 4 === 0 ? 60 : 12));
  for (let index = 0; index < size; index++) {
    const key = keys[next() % keys.length]!;
    const kind = next() % 10;
    if (kind < 3) changes.push([key, null]);
    else if (kind === 3) changes.push([key, current.get(bytesToHex(key)) ?? randomBytes(next, 1 + (next() % 40))]);
    else if (kind === 4) changes.push([key, new Uint8Array(0)]);
    else changes.push([key, randomBytes(next, 1 + (next() % 40))]);
  }
  return changes;
}

async function expectRejection(promise: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection as Error,
  );
  expect(error?.message, "a rejection").to.match(message);
}

describe("state/trieBatch", () => {
  const configurations: { name: string; options: Partial<MPTOpts>; seed: number }[] = [
    { name: "hashed keys", options: { useKeyHashing: true }, seed: 5 },
    { name: "plain keys", options: { useKeyHashing: false }, seed: 13 },
    { name: "hashed keys under a key prefix", options: { useKeyHashing: true, keyPrefix: Uint8Array.from([0xab, 0xcd]) }, seed: 29 },
  ];

  // On a state trie the batch reads the nodes it keeps decoded, without waiting; on the package's
  // trie it keeps none, and every stored node is read from the database in passes, a level a pass.
  const batchedTries = [
    { trieName: "state trie", create: (trieOptions: MPTOpts) => new StateTrie(trieOptions) },
    { trieName: "package trie", create: (trieOptions: MPTOpts) => new MerklePatriciaTrie(trieOptions) },
  ];

  for (const { name, options, seed } of configurations) {
    for (const { trieName, create } of batchedTries) {
      it(`gives the roots of one put or delete at a time, and a trie whose every key reads back (${name}, ${trieName})`, async () => {
        const next = seededRandom(seed);
        const trieOptions = { ...options, valueEncoding: ValueEncoding.Bytes, useNodePruning: false } as const;
        const reference = new MerklePatriciaTrie({ ...trieOptions, db: new TrieNodeStore(createMemoryStore()) });
        const batched = create({ ...trieOptions, db: new TrieNodeStore(createMemoryStore()) });
        const keys = keyUniverse(next);
        const current = new Map<string, Uint8Array>();
        for (let round = 0; round < 120; round++) {
          const changes = randomBatch(next, keys, current, round);
          for (const [key, value] of changes) {
            if (value === null) await reference.del(key);
            else await reference.put(key, value);
            if (value === null || value.length === 0) current.delete(bytesToHex(key));
            else current.set(bytesToHex(key), value);
          }
          await applyTrieChanges(
            batched,
            changes.map(([key, value]): TrieChange => [appliedTrieKey(batched, key), value]),
          );
          expect(bytesToHex(batched.root()), `root after round ${round}`).to.equal(bytesToHex(reference.root()));
          if (current.size === 0) expect(bytesToHex(batched.root())).to.equal(bytesToHex(batched.EMPTY_TRIE_ROOT));
          // A fresh trie on the batch's nodes: every node on every path was written (a missing one
          // throws; the empty trie has no node to find). The batched trie reads them back too (a
          // state trie from the nodes it keeps).
          const fresh = new MerklePatriciaTrie({ ...trieOptions, db: batched["_db"].db, root: batched.root() });
          for (const key of keys) {
            const expected = hexOrNull(current.get(bytesToHex(key)) ?? null);
            expect(hexOrNull(await fresh.get(key, current.size > 0)), `value of ${bytesToHex(key)} after round ${round}`).to.equal(expected);
            expect(hexOrNull(await batched.get(key)), `value of ${bytesToHex(key)} read from the batched trie after round ${round}`).to.equal(expected);
          }
        }
      });
    }
  }

  it("leaves the trie alone for no changes, without even reading its root", async () => {
    const store = new TrieNodeStore(createMemoryStore());
    const trie = new StateTrie({ useKeyHashing: true, valueEncoding: ValueEncoding.Bytes, db: store });
    const missingRoot = new Uint8Array(32).fill(7);
    trie.root(missingRoot); // a root with no node: any read would throw
    await applyTrieChanges(trie, []);
    expect(bytesToHex(trie.root())).to.equal(bytesToHex(missingRoot));
    await expectRejection(applyTrieChanges(trie, [[Uint8Array.from([1]), null]]), /Missing node/);
  });

  it("has the nodes it replaced leave the memory caches a block later (reads at the old root then find them in the store), and keeps those rebuilt as they were", async () => {
    const next = seededRandom(57);
    const memory = createMemoryStore();
    let storeReads = 0;
    const counted: KeyValueStore = {
      ...memory,
      getSync: (key) => {
        storeReads++;
        return memory.getSync(key);
      },
    };
    const nodes = new TrieNodeStore(counted);
    const trie = new StateTrie({ useKeyHashing: true, valueEncoding: ValueEncoding.Bytes, db: nodes });
    // As a block's write: the nodes go to the store, then into the node cache.
    const writeBlock = async () => {
      const operations: StoreOperation[] = [];
      const batch = nodes.takeWrites(operations);
      await memory.write(operations);
      nodes.writeFinished(batch);
    };
    const keys = Array.from({ length: 300 }, () => randomBytes(next, 20));
    const values = keys.map(() => randomBytes(next, 8));
    await applyTrieChanges(trie, keys.map((key, index): TrieChange => [appliedTrieKey(trie, key), values[index]!]));
    await writeBlock();
    const firstRoot = trie.root();

    // The same value again: every node of the path is rebuilt with the same hash, and stays.
    await applyTrieChanges(trie, [[appliedTrieKey(trie, keys[5]!), values[5]!]]);
    await writeBlock();
    expect(bytesToHex(trie.root())).to.equal(bytesToHex(firstRoot));
    storeReads = 0;
    expect(hexOrNull(await trie.getAt(firstRoot, keys[5]!))).to.equal(bytesToHex(values[5]!));
    expect(storeReads, "store reads for a path rebuilt as it was").to.equal(0);

    const changed = randomBytes(next, 8);
    await applyTrieChanges(trie, [[appliedTrieKey(trie, keys[6]!), changed]]);
    await writeBlock();
    storeReads = 0;
    expect(hexOrNull(await trie.getAt(trie.root(), keys[6]!))).to.equal(bytesToHex(changed));
    expect(storeReads, "store reads for the new path").to.equal(0);
    // The block's parent state (a trace of its transactions replays it) is still in memory.
    expect(hexOrNull(await trie.getAt(firstRoot, keys[8]!))).to.equal(bytesToHex(values[8]!));
    expect(storeReads, "store reads at the parent state, within a block").to.equal(0);
    await writeBlock(); // the next block, empty
    expect(hexOrNull(await trie.getAt(firstRoot, keys[6]!))).to.equal(bytesToHex(values[6]!));
    // The old root, the branches under it on the key's path and the old leaf.
    expect(storeReads, "store reads for the replaced path").to.be.at.least(3);
    storeReads = 0;
    expect(hexOrNull(await trie.getAt(firstRoot, keys[7]!))).to.equal(bytesToHex(values[7]!));
    // The nodes read back from the store are cached again; the rest of the old trie never left.
    expect(storeReads, "store reads for another key at the old root").to.equal(0);
  });

  it("after deletes that fold a branch into the extension above it and into the leaf under it, each root still reads as written", async () => {
    const memory = createMemoryStore();
    const nodes = new TrieNodeStore(memory);
    const options = { useKeyHashing: false, valueEncoding: ValueEncoding.Bytes } as const;
    const trie = new StateTrie({ ...options, db: nodes });
    const reference = new MerklePatriciaTrie({ ...options, db: new TrieNodeStore(createMemoryStore()) });
    const writeBlock = async () => {
      const operations: StoreOperation[] = [];
      const batch = nodes.takeWrites(operations);
      await memory.write(operations);
      nodes.writeFinished(batch);
    };
    // Nibbles 1234 and 1235 under a branch, over an extension 2 from the root's 1; 12abcdef beside
    // them; 56 under the root. Values of 40 bytes: every node is stored by hash, none embedded.
    const keys = { a: [0x12, 0x34], b: [0x12, 0x35], c: [0x12, 0xab, 0xcd, 0xef], d: [0x56] };
    const value = (name: string) => new TextEncoder().encode(name.repeat(40));
    const key = (name: keyof typeof keys) => Uint8Array.from(keys[name]);
    const steps: { changes: [keyof typeof keys, Uint8Array | null][] }[] = [
      { changes: (["a", "b", "c", "d"] as const).map((name) => [name, value(name)]) },
      // The branch under 12 keeps only the branch of a and b: it becomes part of the extension above.
      { changes: [["c", null]] },
      // The branch of a and b keeps only a: it folds into a's leaf, which takes the nibble above it.
      { changes: [["b", null]] },
    ];
    const roots: { root: Uint8Array; values: Map<string, string | null> }[] = [];
    const current = new Map<string, string | null>();
    for (const { changes } of steps) {
      await applyTrieChanges(trie, changes.map(([name, changed]): TrieChange => [key(name), changed]));
      for (const [name, changed] of changes) {
        if (changed === null) await reference.del(key(name));
        else await reference.put(key(name), changed);
        current.set(name, changed === null ? null : bytesToHex(changed));
      }
      await writeBlock();
      expect(bytesToHex(trie.root())).to.equal(bytesToHex(reference.root()));
      roots.push({ root: trie.root(), values: new Map(current) });
    }
    for (const [index, { root, values }] of roots.entries()) {
      for (const name of Object.keys(keys) as (keyof typeof keys)[]) {
        expect(hexOrNull(await trie.getAt(root, key(name))), `${name} at root ${index}`).to.equal(values.get(name) ?? null);
      }
    }
  });

  it("writes through a checkpoint: a revert leaves the old root and nothing written, a commit writes the new nodes", async () => {
    const next = seededRandom(41);
    const options = { useKeyHashing: true, valueEncoding: ValueEncoding.Bytes, useNodePruning: false } as const;
    const store = new TrieNodeStore(createMemoryStore());
    const trie = new StateTrie({ ...options, db: store });
    const reference = new MerklePatriciaTrie({ ...options, db: new TrieNodeStore(createMemoryStore()) });
    const keys = Array.from({ length: 50 }, () => randomBytes(next, 20));
    const before = keys.map((key): [Uint8Array, Uint8Array] => [key, randomBytes(next, 1 + (next() % 40))]);
    for (const [key, value] of before) {
      await trie.put(key, value);
      await reference.put(key, value);
    }
    const oldRoot = trie.root();
    const changes = keys.map((key, index): [Uint8Array, Uint8Array | null] => [key, index % 4 === 0 ? null : randomBytes(next, 1 + (next() % 40))]);
    for (const [key, value] of changes) {
      if (value === null) await reference.del(key);
      else await reference.put(key, value);
    }
    const batch = changes.map(([key, value]): TrieChange => [appliedTrieKey(trie, key), value]);

    trie.checkpoint();
    await applyTrieChanges(trie, batch);
    expect(bytesToHex(trie.root())).to.equal(bytesToHex(reference.root()));
    await trie.revert();
    expect(bytesToHex(trie.root())).to.equal(bytesToHex(oldRoot));
    for (const [key, value] of before) expect(hexOrNull(await trie.get(key))).to.equal(bytesToHex(value));
    expect(store.getNode(reference.root()), "the reverted root node in the store").to.equal(undefined);

    trie.checkpoint();
    await applyTrieChanges(trie, batch);
    await trie.commit();
    expect(bytesToHex(trie.root())).to.equal(bytesToHex(reference.root()));
    const fresh = new MerklePatriciaTrie({ ...options, db: store, root: reference.root() });
    for (const [key, value] of changes) expect(hexOrNull(await fresh.get(key, true))).to.equal(hexOrNull(value));
  });
});
