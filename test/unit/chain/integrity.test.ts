// The chain's integrity walk over a store built by hand: a block with an uncle is whole (its
// uncles hash and total difficulty count the uncle), and each damage to it is named.
import { expect } from "chai";
import { RLP } from "@ethereumjs/rlp";
import { Block } from "../../../src/chain/block.js";
import { BlockHeader, emptyBloom, emptyTrieRoot, unclesHashOf, zeroHash, type HeaderFields } from "../../../src/chain/header.js";
import { findCanonicalDamage } from "../../../src/chain/integrity.js";
import { bigIntToMinimalBytes } from "../../../src/common/hex.js";
import { createMemoryStore, type KeyValueStore } from "../../../src/storage/keyValueStore.js";
import { storeKeys } from "../../../src/storage/keys.js";

function header(number: bigint, parentHash: Uint8Array, overrides: Partial<HeaderFields> = {}): BlockHeader {
  return new BlockHeader({
    parentHash,
    unclesHash: unclesHashOf([]),
    coinbase: new Uint8Array(20),
    stateRoot: emptyTrieRoot,
    transactionsRoot: emptyTrieRoot,
    receiptsRoot: emptyTrieRoot,
    logsBloom: emptyBloom,
    difficulty: 5n,
    number,
    gasLimit: 6_800_000n,
    gasUsed: 0n,
    timestamp: 1_000n + number,
    extraData: new Uint8Array(0),
    paidFees: 0n,
    minimumGasPrice: 0n,
    uncleCount: 0,
    mergedMiningHeader: new Uint8Array(0),
    mergedMiningMerkleProof: new Uint8Array(0),
    mergedMiningCoinbaseTransaction: new Uint8Array(0),
    ...overrides,
  });
}

/** Stores `block` as canonical with its total difficulty and no receipts (it has no transactions). */
async function storeCanonical(store: KeyValueStore, block: Block, totalDifficulty: bigint): Promise<void> {
  await store.write([
    { type: "put", key: storeKeys.header(block.hash), value: block.header.encoded },
    { type: "put", key: storeKeys.body(block.hash), value: block.encodeBody() },
    { type: "put", key: storeKeys.canonicalHash(block.number), value: block.hash },
    { type: "put", key: storeKeys.totalDifficulty(block.hash), value: bigIntToMinimalBytes(totalDifficulty) },
    { type: "put", key: storeKeys.receipts(block.hash), value: RLP.encode([]) },
  ]);
}

describe("chain/integrity", () => {
  const genesis = new Block(header(0n, zeroHash), []);
  const uncle = header(1n, genesis.hash, { extraData: Uint8Array.of(1), difficulty: 3n });
  const withUncle = new Block(header(2n, new Block(header(1n, genesis.hash), []).hash, { unclesHash: unclesHashOf([uncle]), uncleCount: 1 }), [], [uncle]);
  const parent = new Block(header(1n, genesis.hash), []);
  const thorough = { recoverSenders: () => undefined };
  const walk = (store: KeyValueStore) => [...findCanonicalDamage(store, { headHash: withUncle.hash, headNumber: 2n, lowest: 0n, thorough })].map(({ number, problem }) => `${number}: ${problem}`);

  it("finds a chain with an uncle whole, its total difficulty counting the uncle", async () => {
    const store = createMemoryStore();
    await storeCanonical(store, genesis, 5n);
    await storeCanonical(store, parent, 10n);
    await storeCanonical(store, withUncle, 18n);
    expect(walk(store)).to.deep.equal([]);
  });

  it("names an uncle that does not match the uncles hash, and a total difficulty that does not add up", async () => {
    const store = createMemoryStore();
    await storeCanonical(store, genesis, 5n);
    await storeCanonical(store, parent, 10n);
    await storeCanonical(store, withUncle, 15n);
    const otherUncle = header(1n, genesis.hash, { extraData: Uint8Array.of(2), difficulty: 3n });
    await store.write([{ type: "put", key: storeKeys.body(withUncle.hash), value: new Block(withUncle.header, [], [otherUncle]).encodeBody() }]);
    expect(walk(store)).to.deep.equal(["2: its uncles do not match the header's uncles hash", "1: its total difficulty 10 is not that of block 2 less that block's difficulty (7)"]);
  });
});
