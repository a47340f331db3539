// The merged-mining server on in-memory chain services, with its clock in the test's hands: the
// template is rebuilt once it is older than the refresh interval; a template whose executed state a
// refused import dropped is executed again when it is submitted (and then lands with the right
// state); the built-in miner keeps mining beside it.
import { expect } from "chai";
import { Address } from "@ethereumjs/util";
import { Block } from "../../../src/chain/block.js";
import { BlockHeader } from "../../../src/chain/header.js";
import { proveBlock } from "../../../src/mining/blockProof.js";
import { createLogger } from "../../../src/common/logger.js";
import { MergedMiningServer, defaultMergedMiningServerOptions, type ParentChainProof } from "../../../src/mining/mergedMiningServer.js";
import { createParentCoinbase } from "../../../src/mining/parentCoinbase.js";
import { compressCoinbaseWithTxid } from "../../../src/consensus/compressedCoinbase.js";
import type { ChainServices } from "../../../src/node/index.js";
import { asReceived, openTestChain, signedTransfer } from "../../helpers/chainPair.js";
import { solveParentHeader } from "../../helpers/parentChainProofs.js";

const stranger = "0x00000000000000000000000000000000000000aa";

/** A one-transaction parent block for the template: its coinbase, header and (empty) branch. */
function proofFor(hashForMergedMining: Uint8Array, difficulty: bigint): ParentChainProof {
  const coinbase = createParentCoinbase(new Uint8Array(3), hashForMergedMining);
  return { parentHeader: solveParentHeader(compressCoinbaseWithTxid(coinbase).txid, difficulty), coinbase, merkleBranch: new Uint8Array(0) };
}

describe("mining/mergedMiningServer", () => {
  let services: ChainServices;
  let nowMs: number;
  let server: MergedMiningServer;

  beforeEach(async () => {
    services = await openTestChain({ miner: "external" });
    nowMs = 1_000_000;
    server = new MergedMiningServer(services.chain, services.pool, services.miner, services.importer, { ...defaultMergedMiningServerOptions, nowMs: () => nowMs }, createLogger("silent"));
  });
  afterEach(async () => {
    await server.close();
    await services.close();
  });

  it("hands out the same template until it is older than the refresh interval, then a new one on the same parent", async () => {
    const first = await server.getWork();
    const again = await server.getWork();
    expect(again.template).to.equal(first.template);
    expect([first.notify, again.notify]).to.deep.equal([true, false]);
    nowMs += defaultMergedMiningServerOptions.refreshIntervalMs - 1;
    expect((await server.getWork()).template).to.equal(first.template);
    nowMs += 1;
    const refreshed = await server.getWork();
    expect(refreshed.template).to.not.equal(first.template);
    expect(refreshed.template.parentHash).to.deep.equal(first.template.parentHash);
    expect(refreshed.notify, "the parent is the same").to.equal(false);
  });

  it("executes a template again when a refused import dropped its state, and lands it with the right state", async () => {
    await services.pool.add(await signedTransfer(services, "cow", 0, stranger, 7n));
    const { template } = await server.getWork();
    expect(template.block.transactions).to.have.length(1);
    expect(services.state.hasRoot(template.block.header.fields.stateRoot)).to.equal(true);

    // A block another node made on the same parent, but with a wrong state root: refused, and
    // refusing it drops every unwritten trie node, the template's among them.
    const other = await openTestChain();
    try {
      const mined = await other.miner.mineBlock([await signedTransfer(other, "cow", 0, stranger, 9n)]);
      const fields = { ...mined.header.fields, stateRoot: new Uint8Array(32).fill(1), mergedMiningHeader: new Uint8Array(), mergedMiningMerkleProof: new Uint8Array(), mergedMiningCoinbaseTransaction: new Uint8Array() };
      const tampered = proveBlock(new Block(new BlockHeader(fields), mined.transactions));
      const refused = await services.importer.importBlock(asReceived(tampered, services), "peer");
      expect(refused.status).to.equal("INVALID_BLOCK");
    } finally {
      await other.close();
    }
    expect(services.state.hasRoot(template.block.header.fields.stateRoot), "the template's state went with the refused block's").to.equal(false);

    const outcome = await server.submit(proofFor(template.hashForMergedMining, template.block.header.fields.difficulty));
    expect(outcome.kind).to.equal("imported");
    if (outcome.kind !== "imported") return;
    expect(outcome.outcome.status).to.equal("IMPORTED_BEST");
    expect(services.chain.head.hash).to.deep.equal(outcome.outcome.block.hash);
    const account = await services.state.reader(services.chain.head.header.fields.stateRoot)!.getAccount(new Address(Buffer.from(stranger.slice(2), "hex")));
    expect(account?.balance).to.equal(7n);
  });
});
