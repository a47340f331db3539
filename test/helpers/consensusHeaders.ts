// Headers and small block trees for the consensus rules' tests: a child is valid against its
// parent by default (regtest constants), and each test changes the one field it is about.
import { Block } from "../../src/chain/block.js";
import { BlockHeader, emptyBloom, emptyBytes, emptyListHash, emptyTrieRoot, unclesHashOf, zeroHash, type HeaderFields } from "../../src/chain/header.js";
import { consensusConstantsFor, type ConsensusConstants } from "../../src/consensus/constants.js";
import { calculateDifficulty } from "../../src/consensus/difficulty.js";
import { collectAncestors, type StoredFamilyView } from "../../src/consensus/familyView.js";

export const regtestConstants = consensusConstantsFor({ networkId: 33 });

export function makeHeader(fields: Partial<HeaderFields> = {}): BlockHeader {
  return new BlockHeader({
    parentHash: zeroHash, unclesHash: emptyListHash, coinbase: new Uint8Array(20), stateRoot: emptyTrieRoot, transactionsRoot: emptyTrieRoot,
    receiptsRoot: emptyTrieRoot, logsBloom: emptyBloom, difficulty: 1_000_000n, number: 0n, gasLimit: 10_000_000n, gasUsed: 0n, timestamp: 1_000n,
    extraData: emptyBytes, paidFees: 0n, minimumGasPrice: 0n, uncleCount: 0, mergedMiningHeader: emptyBytes, mergedMiningMerkleProof: emptyBytes,
    mergedMiningCoinbaseTransaction: emptyBytes, ...fields,
  });
}

/**
 * A header valid after `parent`: 5 s later, the computed difficulty, the parent's limits. `tag`
 * goes into the extra data, so siblings built alike still differ in hash.
 */
export function childHeader(parent: BlockHeader, tag = "", fields: Partial<HeaderFields> = {}, constants: ConsensusConstants = regtestConstants): BlockHeader {
  const timestamp = fields.timestamp ?? parent.fields.timestamp + 5n;
  const uncleCount = fields.uncleCount ?? 0;
  return makeHeader({
    parentHash: parent.hash, number: parent.number + 1n, timestamp, uncleCount, gasLimit: parent.fields.gasLimit,
    minimumGasPrice: parent.fields.minimumGasPrice, extraData: new TextEncoder().encode(tag),
    difficulty: calculateDifficulty({ timestamp, uncleCount }, parent.fields, constants), ...fields,
  });
}

/** A block on `parent` including `uncles` (uncles hash and count set to match). */
export function childBlock(parent: BlockHeader, tag = "", uncles: readonly BlockHeader[] = []): Block {
  return new Block(childHeader(parent, tag, { unclesHash: unclesHashOf(uncles), uncleCount: uncles.length }), [], uncles);
}

/** A store of blocks for the family view: the ancestors of a block are read through parent hashes. */
export class BlockTree {
  private readonly byHash = new Map<string, Block>();

  constructor(readonly genesis: Block = new Block(makeHeader({ extraData: new TextEncoder().encode("genesis") }), [])) {
    this.add(genesis);
  }

  add(block: Block): Block {
    this.byHash.set(Buffer.from(block.hash).toString("hex"), block);
    return block;
  }

  /** Adds `count` blocks on `from`, each named `${tag}${number}`; answers them oldest first. */
  extend(from: Block, count: number, tag: string): Block[] {
    const added: Block[] = [];
    for (let parent = from; added.length < count; ) {
      parent = this.add(childBlock(parent.header, `${tag}${parent.number + 1n}`));
      added.push(parent);
    }
    return added;
  }

  get(hash: Uint8Array): Block | undefined {
    return this.byHash.get(Buffer.from(hash).toString("hex"));
  }

  /** The view for a new block on `parent`: its ancestors within the uncle window, and every stored block by height. */
  async familyOf(parent: Block, generationLimit = regtestConstants.uncleGenerationLimit): Promise<StoredFamilyView> {
    const ancestors = await collectAncestors(parent.number + 1n, parent.hash, generationLimit, async (hash) => this.get(hash));
    return { ancestors, headersAt: (number) => [...this.byHash.values()].filter((block) => block.number === number).map((block) => block.header) };
  }
}
