// The proof of work of the blocks the miner makes (blockProof.ts): every block passes the
// merged-mining rule at its difficulty, its hash covers the parent-chain header, the same chain
// mined twice has the same hashes, and the next block's difficulty follows the difficulty rule.
import { expect } from "chai";
import { Block } from "../../../src/chain/block.js";
import { BlockHeader, emptyBloom, emptyListHash } from "../../../src/chain/header.js";
import { consensusConstantsFor } from "../../../src/consensus/constants.js";
import { calculateDifficulty } from "../../../src/consensus/difficulty.js";
import { checkProofOfWork } from "../../../src/consensus/blockImporter.js";
import { checkMergedMiningProof } from "../../../src/consensus/mergedMiningProof.js";
import { blockProofPrefixLengthBound, proveBlock, seededFromBlock, type ParentMinerRandomSource } from "../../../src/mining/blockProof.js";
import { createBuiltinParentMiner, createSeededParentMinerRandom } from "../../../src/mining/builtinParentMiner.js";
import { MinerClock } from "../../../src/mining/clock.js";
import { nextBlockTemplate } from "../../../src/mining/blockTemplate.js";
import type { MinerOptions } from "../../../src/mining/miner.js";
import { minerOn } from "../../helpers/minerHarness.js";

const start = 1_800_000_000n;
const regtest = consensusConstantsFor({ networkId: 33 });

function checkBlock(block: Block) {
  const { fields } = block.header;
  return checkMergedMiningProof({
    hashForMergedMining: block.header.hashForMergedMining,
    difficulty: fields.difficulty,
    parentHeader: fields.mergedMiningHeader,
    merkleProof: fields.mergedMiningMerkleProof,
    compressedCoinbase: fields.mergedMiningCoinbaseTransaction,
  });
}

/** Mines three automine transfers, an empty block and a dev block on a clock that moves 3 s a block; answers the chain's blocks. */
async function mineSample(options: Pick<MinerOptions, "parentMinerRandom"> = {}): Promise<Block[]> {
  let wall = start;
  const harness = await minerOn({ kind: "auto" }, { clock: new MinerClock(() => wall), rules: { sameTimestampAllowed: true, difficulty: regtest }, ...options });
  for (let nonce = 0; nonce < 3; nonce++) {
    wall += 3n;
    const transaction = await harness.transfer(nonce);
    await harness.pool.add(transaction);
    expect((await harness.miner.mineUntilIncluded(transaction)).kind).to.equal("mined");
  }
  wall += 3n;
  await harness.miner.mineBlock([]);
  await harness.miner.mineStateChange(async () => undefined);
  const blocks: Block[] = [];
  for (let number = 1n; number <= harness.chain.head.number; number++) blocks.push((await harness.chain.getBlockByNumber(number))!);
  return blocks;
}

/** The parent fields nextBlockTemplate reads. */
function parentOf(difficulty: bigint, timestamp: bigint): Block {
  return { header: { fields: { difficulty, timestamp, gasLimit: 6_800_000n, minimumGasPrice: 0n } } } as unknown as Block;
}

/** A block as the miner hands it to proveBlock (no merged-mining fields), its fields fixed by its number. */
function unprovenBlock(number: bigint, difficulty: bigint): Block {
  const filled = (length: number, byte: number) => new Uint8Array(length).fill(byte);
  const header = new BlockHeader({
    parentHash: filled(32, Number(number)),
    unclesHash: emptyListHash,
    coinbase: filled(20, 0x11),
    stateRoot: filled(32, 0x22),
    transactionsRoot: filled(32, 0x33),
    receiptsRoot: filled(32, 0x44),
    logsBloom: emptyBloom,
    difficulty,
    number,
    gasLimit: 6_800_000n,
    gasUsed: 21_000n,
    timestamp: start + number,
    extraData: new Uint8Array(0),
    paidFees: 0n,
    minimumGasPrice: 0n,
    uncleCount: 0,
    mergedMiningHeader: new Uint8Array(0),
    mergedMiningMerkleProof: new Uint8Array(0),
    mergedMiningCoinbaseTransaction: new Uint8Array(0),
  });
  return new Block(header, []);
}

describe("mining/blockProof", () => {
  it("every block the miner makes carries a proof of work that passes the merged-mining rule", async () => {
    const blocks = await mineSample();
    expect(blocks).to.have.length(5);
    for (const block of blocks) {
      const check = checkBlock(block);
      expect(check.ok, `block ${block.number}: ${JSON.stringify(check)}`).to.equal(true);
      expect(block.header.fields.mergedMiningHeader).to.have.length(80);
      expect(block.header.fields.mergedMiningCoinbaseTransaction.length).to.be.greaterThan(40);
      // RSKIP92: the block hash covers the parent header, so it is not the hash for merged mining.
      expect(Buffer.from(block.hash).equals(Buffer.from(block.header.hashForMergedMining))).to.equal(false);
      // The header the store keeps decodes to the same hashes.
      const decoded = BlockHeader.decode(block.header.encoded);
      expect(Buffer.from(decoded.hash).equals(Buffer.from(block.hash))).to.equal(true);
      expect(Buffer.from(decoded.hashForMergedMining).equals(Buffer.from(block.header.hashForMergedMining))).to.equal(true);
      expect(Buffer.from(decoded.encodedForHash).equals(Buffer.from(block.header.encodedForHash))).to.equal(true);
    }
  });

  it("keeps the proof-of-work verdict per header object: the importer's check after the merged-mining server's is a lookup, another proof is checked anew", async () => {
    const [first, second] = await mineSample();
    const header = first!.header;
    const verdict = checkProofOfWork(header);
    expect(verdict.ok).to.equal(true);
    expect(checkProofOfWork(header)).to.equal(verdict);
    // The same block under the next block's parent-chain proof: its hash for merged mining is the
    // same, the proof is not of it.
    const { mergedMiningHeader, mergedMiningMerkleProof, mergedMiningCoinbaseTransaction } = second!.header.fields;
    const borrowed = header.withMergedMining({ mergedMiningHeader, mergedMiningMerkleProof, mergedMiningCoinbaseTransaction });
    expect(Buffer.from(borrowed.hashForMergedMining).equals(Buffer.from(header.hashForMergedMining))).to.equal(true);
    const refusal = checkProofOfWork(borrowed);
    expect(refusal.ok).to.equal(false);
    expect(checkProofOfWork(borrowed)).to.deep.equal(refusal);
    expect(checkProofOfWork(header).ok).to.equal(true);
  });

  it("gives the same block hashes when the same chain is mined twice, other hashes with another random source", async () => {
    const hashes = (blocks: Block[]) => blocks.map((block) => Buffer.from(block.hash).toString("hex"));
    const first = await mineSample();
    const second = await mineSample();
    expect(hashes(second)).to.deep.equal(hashes(first));
    const other = await mineSample({ parentMinerRandom: () => createSeededParentMinerRandom(Uint8Array.of(7)) });
    for (const block of other) expect(checkBlock(block).ok).to.equal(true);
    expect(hashes(other)[0]).to.not.equal(hashes(first)[0]);
  });

  it("proves a given block as it always has: the block hashes of a chain do not change with the miner's code", () => {
    // Hashes from the first implementation (node:crypto SHA-256d for every nonce, the coinbase hashed whole).
    const expected: [bigint, bigint, string][] = [
      [1n, 1n, "49f8626c3af7844d0415ff7bfa8801a524b6c66113b0b9c2b3c5c9bce8acbad5"],
      [2n, 1n, "7a046c623df7280ce3d255c4c5225985130b2b69713273685ba0974f16b831bb"],
      [3n, 5000n, "734c20cf663c96700920cd55ff7ff08d121ebe6b4c8dad3ddc7ce1d57853d2f6"],
      [4n, 3n, "f9597f790691740bfae5eaa53c02a1b9807f630b93852d071454c2c4ca495409"],
    ];
    for (const [number, difficulty, hash] of expected) {
      const proven = proveBlock(unprovenBlock(number, difficulty));
      expect(Buffer.from(proven.hash).toString("hex"), `block ${number}`).to.equal(hash);
      expect(checkBlock(proven).ok).to.equal(true);
    }
  });

  it("writes in place the header the built-in miner's full search gives: the same encoding, fields and hashes", () => {
    const fromSearch = (block: Block, randomFor: ParentMinerRandomSource) => {
      const time = Number(block.header.fields.timestamp);
      const miner = createBuiltinParentMiner({ random: randomFor(block.header.hashForMergedMining), nowSeconds: () => time, prefixLengthBound: blockProofPrefixLengthBound });
      return block.header.withMergedMining(miner.mine(block.header.hashForMergedMining, block.header.fields.difficulty).fields);
    };
    const otherRandom: ParentMinerRandomSource = (hash) => createSeededParentMinerRandom(hash.subarray(0, 4));
    const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
    const prefixLengths = new Set<number>();
    for (const [difficulty, count] of [[1n, 500], [3n, 100], [4096n, 10]] as const) {
      for (let index = 0; index < count; index++) {
        const block = unprovenBlock(BigInt(index + 1) * 7919n, difficulty);
        for (const randomFor of [seededFromBlock, otherRandom]) {
          const proven = proveBlock(block, randomFor).header;
          const expected = fromSearch(block, randomFor);
          const what = `block ${index} at difficulty ${difficulty}`;
          expect(hex(proven.encoded), what).to.equal(hex(expected.encoded));
          expect(hex(proven.hash), what).to.equal(hex(expected.hash));
          expect(hex(proven.encodedForHash), what).to.equal(hex(expected.encodedForHash));
          expect(hex(proven.hashForMergedMining), what).to.equal(hex(block.header.hashForMergedMining));
          for (const field of ["mergedMiningHeader", "mergedMiningMerkleProof", "mergedMiningCoinbaseTransaction"] as const) {
            expect(hex(proven.fields[field]), `${what}: ${field}`).to.equal(hex(expected.fields[field]));
          }
          expect(hex(BlockHeader.decode(proven.encoded).hash), what).to.equal(hex(proven.hash));
          prefixLengths.add(proven.fields.mergedMiningCoinbaseTransaction.length);
        }
      }
    }
    // Prefixes of every length the bound allows: coinbases of 28 lengths.
    expect(prefixLengths.size).to.equal(blockProofPrefixLengthBound);
  });

  it("meets each block's own difficulty when it changes from block to block (nothing kept from the last block's target)", () => {
    const difficulties = [1n, 5000n, 5000n, 1n, 4096n, 3n, 100_000n, 2n, 5000n];
    difficulties.forEach((difficulty, index) => {
      const proven = proveBlock(unprovenBlock(BigInt(index + 10), difficulty));
      const check = checkBlock(proven);
      expect(check.ok, `block ${index} at difficulty ${difficulty}: ${JSON.stringify(check)}`).to.equal(true);
    });
  });

  it("takes the next block's difficulty from the difficulty rule (regtest: divisor 2048, 10 s, reset after 600 s)", () => {
    const fields = { coinbase: new Uint8Array(20), extraData: new Uint8Array(0) };
    const rules = { sameTimestampAllowed: true, difficulty: regtest };
    const parent = parentOf(4096n, start);
    const difficultyAt = (seconds: bigint) => nextBlockTemplate(parent, fields, start + seconds, rules).difficulty;
    expect(difficultyAt(0n)).to.equal(4098n); // sooner than 10 s: up by 4096 / 2048
    expect(difficultyAt(1n)).to.equal(4098n);
    expect(difficultyAt(10n)).to.equal(4096n); // on time: unchanged
    expect(difficultyAt(11n)).to.equal(4094n); // later: down by as much
    expect(difficultyAt(600n)).to.equal(1n); // ten minutes: back to the minimum
    for (const seconds of [0n, 5n, 10n, 30n, 599n, 600n]) {
      expect(difficultyAt(seconds)).to.equal(calculateDifficulty({ timestamp: start + seconds, uncleCount: 0 }, { difficulty: 4096n, timestamp: start }, regtest));
    }
    // Without the rule's constants the block copies its parent's difficulty.
    expect(nextBlockTemplate(parent, fields, start + 1n, { sameTimestampAllowed: true }).difficulty).to.equal(4096n);
  });
});
