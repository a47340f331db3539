// The verdict on a gossiped block before import (network brief 6.5), on blocks of a real chain:
// accepted when it follows a stored block by the rules, held as an orphan without its parent,
// ignored when known, too old or too far ahead, rejected for its own header or against its parent.
import { expect } from "chai";
import { Block } from "../../../src/chain/block.js";
import { BlockHeader, type HeaderFields } from "../../../src/chain/header.js";
import { consensusConstantsFor } from "../../../src/consensus/constants.js";
import { proveBlock } from "../../../src/mining/blockProof.js";
import type { ChainServices } from "../../../src/node/index.js";
import { judgeGossipBlock, type GossipBlockContext } from "../../../src/sync/gossipBlockVerdict.js";
import { asReceived, mineBlocks, openTestChain } from "../../helpers/chainPair.js";

describe("sync/gossipBlockVerdict", function () {
  this.timeout(30_000);
  let source: ChainServices;
  let local: ChainServices;
  let blocks: Block[];

  beforeEach(async () => {
    source = await openTestChain();
    local = await openTestChain();
    blocks = (await mineBlocks(source, 12)).map((block) => asReceived(block, local));
    for (const block of blocks.slice(0, 10)) await local.importer.importBlock(block, "peer");
  });
  afterEach(async () => {
    await source.close();
    await local.close();
  });

  function contextOf(services: ChainServices, bestNumber = services.chain.head.number): GossipBlockContext {
    return {
      rules: { constants: consensusConstantsFor({ networkId: 33 }), now: BigInt(Math.floor(Date.now() / 1000)) },
      bestNumber,
      isKnown: (hash) => services.chain.hasBlock(hash),
      parentOf: async (block) => (await services.chain.getBlockByHash(block.header.fields.parentHash))?.header,
    };
  }

  /** Block 11 with `change` applied and the proof of work made again (or not). */
  function altered(change: (fields: HeaderFields) => Partial<HeaderFields>, prove = true): Block {
    const block = blocks[10]!;
    const fields = { ...block.header.fields, mergedMiningHeader: new Uint8Array(), mergedMiningMerkleProof: new Uint8Array(), mergedMiningCoinbaseTransaction: new Uint8Array() };
    const unproven = new Block(new BlockHeader({ ...fields, ...change(fields) }), block.transactions, block.uncles);
    return prove ? proveBlock(unproven) : unproven;
  }

  it("accepts the best block's child, holds one whose parent is not stored", async () => {
    expect(await judgeGossipBlock(blocks[10]!, contextOf(local))).to.deep.equal({ kind: "accept" });
    expect(await judgeGossipBlock(blocks[11]!, contextOf(local))).to.deep.equal({ kind: "orphan" });
  });

  it("ignores a known block, one too old to be an uncle and one too far ahead", async () => {
    expect(await judgeGossipBlock(blocks[9]!, contextOf(local))).to.deep.equal({ kind: "ignore", reason: "known" });
    expect(await judgeGossipBlock(blocks[1]!, contextOf(local, 10n))).to.deep.equal({ kind: "ignore", reason: "block 2 is more than 7 behind the best 10" });
    // 3 + 7 = 10: not too old (known, here).
    expect(await judgeGossipBlock(blocks[2]!, contextOf(local, 10n))).to.deep.equal({ kind: "ignore", reason: "known" });
    expect(await judgeGossipBlock(blocks[11]!, contextOf(local, 12n - 3841n))).to.deep.equal({ kind: "ignore", reason: "block 12 is more than 3840 ahead of the best -3829" });
  });

  it("rejects a block without a valid proof of work, with too much extra data, or wrong against its parent", async () => {
    expect(await judgeGossipBlock(altered(() => ({}), false), contextOf(local))).to.include({ kind: "reject", rule: "coinbaseStateMissing" });
    expect(await judgeGossipBlock(altered(() => ({ extraData: new Uint8Array(33) })), contextOf(local))).to.include({ kind: "reject", rule: "extraData" });
    expect(await judgeGossipBlock(altered((fields) => ({ difficulty: fields.difficulty + 1n })), contextOf(local))).to.include({ kind: "reject", rule: "difficulty" });
    expect(await judgeGossipBlock(altered((fields) => ({ number: fields.number + 1n })), contextOf(local))).to.include({ kind: "reject", rule: "parentNumber" });
  });
});
