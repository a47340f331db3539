// What a node serves its peers straight from the store (sync/requestServer.ts): a header without
// its body, and a body in its wire form made from the stored bytes without decoding transactions.
// Read after a restart, so nothing comes from the chain's cache of recent blocks.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { Block } from "../../../src/chain/block.js";
import { createLogger } from "../../../src/common/logger.js";
import { defaultNodeOptions, findNetworkProfile, openChainServices, type ChainServices } from "../../../src/node/index.js";
import { mineBlocks, signedTransfer } from "../../helpers/chainPair.js";

const hex = (bytes: Uint8Array | undefined) => (bytes === undefined ? "none" : Buffer.from(bytes).toString("hex"));

describe("chain: headers and wire bodies served from the store", function () {
  this.timeout(30_000);
  let directory: string;
  let services: ChainServices | undefined;
  const open = () => openChainServices(findNetworkProfile(33)!, { dataDir: directory, inMemory: false }, { ...defaultNodeOptions.chain, mining: { kind: "off" }, callWorker: false }, createLogger("silent"));

  beforeEach(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-served-"))));
  afterEach(async () => {
    await services?.close();
    services = undefined;
    await rm(directory, { recursive: true, force: true });
  });

  it("a header and a wire body read from disk are the block's own; an unknown hash gives none", async () => {
    services = await open();
    let nonce = 0;
    const mined: Block[] = await mineBlocks(services, 4, async (index) => Promise.all(Array.from({ length: index }, () => signedTransfer(services!, "cow", nonce++, "0x00000000000000000000000000000000000000aa"))));
    const cached = mined.map((block) => [hex(services!.chain.getHeaderByHash(block.hash)?.encoded), hex(services!.chain.wireBody(block.hash))]);
    await services.close();
    services = await open();
    for (const [index, block] of mined.entries()) {
      const header = services.chain.getHeaderByHash(block.hash);
      expect(hex(header?.hash)).to.equal(hex(block.hash));
      expect(hex(header?.encoded)).to.equal(hex(block.header.encoded));
      expect(hex(services.chain.wireBody(block.hash))).to.equal(hex(block.encodeWireBody()));
      expect(cached[index]).to.deep.equal([hex(block.header.encoded), hex(block.encodeWireBody())]);
    }
    expect(mined.at(-1)!.transactions).to.have.length(3);
    const unknown = new Uint8Array(32).fill(7);
    expect(services.chain.getHeaderByHash(unknown)).to.equal(undefined);
    expect(services.chain.wireBody(unknown)).to.equal(undefined);
  });

  it("the batch-check thread exists with the recovery worker on a machine of several cores, and not with it off", async () => {
    services = await open();
    expect(services.batchChecks).to.not.equal(undefined);
    await services.close();
    services = await openChainServices(findNetworkProfile(33)!, { dataDir: directory, inMemory: false }, { ...defaultNodeOptions.chain, mining: { kind: "off" }, callWorker: false, recoveryWorker: false }, createLogger("silent"));
    expect(services.batchChecks).to.equal(undefined);
  });
});
