// What a node serves its peers straight from the store (sync/requestServer.ts): a header without
// its body, and a body in its wire form made from the stored bytes without decoding transactions.
// Read after a restart, so nothing comes from the chain's cache of recent blocks. A stored block
// damaged on disk (LevelDB changed directly) is refused by the chain and left out of the request
// server's answers.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RLP } from "@ethereumjs/rlp";
import { expect } from "chai";
import { ClassicLevel } from "classic-level";
import type { Block } from "../../../src/chain/block.js";
import { StoredDataDamagedError } from "../../../src/chain/chain.js";
import { createLogger } from "../../../src/common/logger.js";
import { defaultNodeOptions, findNetworkProfile, openChainServices, type ChainServices } from "../../../src/node/index.js";
import { storeKeys } from "../../../src/storage/keys.js";
import { decodeHeadersAnswer, encodeHashesRequest, encodeHeadersRequest, encodeItemsAnswer } from "../../../src/sync/messages.js";
import { RequestServer } from "../../../src/sync/requestServer.js";
import { asReceived, mineBlocks, openTestChain, signedTransfer } from "../../helpers/chainPair.js";

const hex = (bytes: Uint8Array | undefined) => (bytes === undefined ? "none" : Buffer.from(bytes).toString("hex"));

/** Changes the LevelDB under `directory` directly, as damage would (the chain closed). */
async function damage(directory: string, change: (db: ClassicLevel<Uint8Array, Uint8Array>) => Promise<void>): Promise<void> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(directory, { keyEncoding: "view", valueEncoding: "view" });
  await db.open();
  try {
    await change(db);
  } finally {
    await db.close();
  }
}

/** What `thrown` throws: a StoredDataDamagedError's message. */
function damagedRead(thrown: () => unknown): string {
  try {
    thrown();
  } catch (error) {
    expect(error).to.be.instanceOf(StoredDataDamagedError);
    return (error as Error).message;
  }
  throw new Error("the damaged block was read");
}

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
      // What a headers answer sends: the stored bytes, with the parent link and number its walk follows.
      const served = services.chain.servedHeader(block.hash);
      expect([hex(served?.encoded), hex(served?.parentHash), served?.number]).to.deep.equal([hex(block.header.encoded), hex(block.header.fields.parentHash), block.number]);
      expect(hex(services.chain.wireBody(block.hash))).to.equal(hex(block.encodeWireBody()));
      expect(cached[index]).to.deep.equal([hex(block.header.encoded), hex(block.encodeWireBody())]);
    }
    expect(mined.at(-1)!.transactions).to.have.length(3);
    const unknown = new Uint8Array(32).fill(7);
    expect(services.chain.getHeaderByHash(unknown)).to.equal(undefined);
    expect(services.chain.servedHeader(unknown)).to.equal(undefined);
    expect(services.chain.wireBody(unknown)).to.equal(undefined);
  });

  it("refuses a stored header that does not hash to its key and a stored body that is not its header's; the request server leaves them out of its answers", async () => {
    services = await open();
    // Canonical 1-5 (the head, 5, is read into the cache at the start); blocks 2 and 3 hold one transfer each (a body can be swapped for the other's without changing the counts a start checks).
    let nonce = 0;
    const canonical = await mineBlocks(services, 5, async (index) => (index === 1 || index === 2 ? [await signedTransfer(services!, "cow", nonce++, "0x00000000000000000000000000000000000000aa")] : []));
    // A side branch 2'-3' from block 1 (the start checks only the canonical chain): 2' holds another transfer.
    const other = await openTestChain();
    let side: Block[];
    try {
      await other.importer.importBlock(asReceived(canonical[0]!, other), "peer");
      side = await mineBlocks(other, 2, async (index) => (index === 0 ? [await signedTransfer(other, "cow", 0, "0x00000000000000000000000000000000000000bb")] : []));
      for (const block of side) expect((await services.importer.importBlock(asReceived(block, services), "peer")).status).to.equal("IMPORTED_NOT_BEST");
    } finally {
      await other.close();
    }
    const [block1, block2, block3, block4, block5] = canonical as [Block, Block, Block, Block, Block];
    const [side2, side3] = side as [Block, Block];
    await services.close();
    services = undefined;
    await damage(directory, async (db) => {
      // 2' holds block 2's header bytes: a good header, but not the block 2' its key names.
      await db.put(storeKeys.header(side2.hash), block2.header.encoded);
      // Block 3 holds block 2's body: it decodes, its counts hold, its transactions are not the ones block 3's header commits to.
      await db.put(storeKeys.body(block3.hash), block2.encodeBody());
      // Block 4 holds an uncle its header's uncles hash does not commit to.
      const [raws, senders] = RLP.decode((await db.get(storeKeys.body(block4.hash)))!) as [Uint8Array[], Uint8Array[]];
      await db.put(storeKeys.body(block4.hash), RLP.encode([raws, senders, [block1.header.encoded]]));
    });
    services = await open();
    const { chain } = services;

    expect(damagedRead(() => chain.getHeaderByHash(side2.hash))).to.match(/^the stored header 0x[0-9a-f]{64} is damaged: it hashes to 0x/);
    expect(damagedRead(() => chain.servedHeader(side2.hash))).to.equal(damagedRead(() => chain.getHeaderByHash(side2.hash)));
    expect(damagedRead(() => chain.wireBody(side2.hash))).to.match(/is damaged: it hashes to 0x/);
    expect(damagedRead(() => chain.wireBody(block3.hash))).to.equal(`the stored body of 0x${hex(block3.hash)} is damaged: its transactions do not match the header's transactions root`);
    expect(damagedRead(() => chain.wireBody(block4.hash))).to.equal(`the stored body of 0x${hex(block4.hash)} is damaged: its uncles do not match the header's uncles hash`);
    // A read for the RPC (header checked, body not) puts block 3 in the cache of recent blocks: served from there, it is still refused.
    expect(hex((await chain.getBlockByHash(block3.hash))?.hash)).to.equal(hex(block3.hash));
    expect(damagedRead(() => chain.wireBody(block3.hash))).to.equal(`the stored block 0x${hex(block3.hash)} is damaged: its transactions do not match the header's transactions root`);
    let refusal: unknown;
    await chain.servedBlock(block4.hash).catch((error: unknown) => (refusal = error));
    expect(refusal).to.be.instanceOf(StoredDataDamagedError);
    expect((refusal as Error).message).to.equal(`the stored block 0x${hex(block4.hash)} is damaged: its uncles do not match the header's uncles hash`);
    // The undamaged blocks are served, from the store or the cache.
    expect(hex(chain.wireBody(side3.hash))).to.equal(hex(side3.encodeWireBody()));
    expect(hex(chain.wireBody(block2.hash))).to.equal(hex(block2.encodeWireBody()));
    expect(hex((await chain.servedBlock(block2.hash))?.encode())).to.equal(hex(block2.encode()));

    const reported: string[] = [];
    const server = new RequestServer(chain, 16, (reason) => new Error(reason), (error) => reported.push(error.message));
    // Headers walk from 3' to its parent 2', damaged: the answer stops before it.
    expect(decodeHeadersAnswer(await server.headers(encodeHeadersRequest(side3.hash, 3)), 3).map((header) => hex(header.hash))).to.deep.equal([hex(side3.hash)]);
    expect(reported).to.have.length(1);
    expect(reported[0]).to.match(/^the stored header 0x[0-9a-f]{64} is damaged/);
    // The canonical headers are whole.
    expect(decodeHeadersAnswer(await server.headers(encodeHeadersRequest(block5.hash, 6)), 6).map((header) => Number(header.number))).to.deep.equal([5, 4, 3, 2, 1, 0]);
    // Bodies: the damaged ones are empty entries, as for a block not held; the others are their blocks'. The canonical
    // ones are checked against the commitments of the headers just served (not read again), as a syncing peer asks.
    const bodies = await server.bodies(encodeHashesRequest([block1.hash, block2.hash, block3.hash, block4.hash, side2.hash, side3.hash]));
    expect(hex(bodies)).to.equal(hex(encodeItemsAnswer([block1.encodeWireBody(), block2.encodeWireBody(), undefined, undefined, undefined, side3.encodeWireBody()])));
    const blocks = await server.blocks(encodeHashesRequest([block2.hash, block3.hash, block4.hash, side3.hash]));
    expect(hex(blocks)).to.equal(hex(encodeItemsAnswer([block2.encode(), undefined, undefined, side3.encode()])));
    expect(reported.slice(1)).to.deep.equal([
      `the stored block 0x${hex(block3.hash)} is damaged: its transactions do not match the header's transactions root`,
      // Block 4 is in the cache since servedBlock read it.
      `the stored block 0x${hex(block4.hash)} is damaged: its uncles do not match the header's uncles hash`,
      `the stored header 0x${hex(side2.hash)} is damaged: it hashes to 0x${hex(block2.hash)}`,
      `the stored block 0x${hex(block3.hash)} is damaged: its transactions do not match the header's transactions root`,
      `the stored block 0x${hex(block4.hash)} is damaged: its uncles do not match the header's uncles hash`,
    ]);
  });

  it("a body asked for after its header was served (a syncing peer's order) is checked against that header's commitments: a damaged one is still left out", async () => {
    services = await open();
    let nonce = 0;
    // Blocks 1-4 hold one transfer each; block 5 is the head (read into the cache at the start).
    const mined = await mineBlocks(services, 5, async (index) => (index < 4 ? [await signedTransfer(services!, "cow", nonce++, "0x00000000000000000000000000000000000000aa")] : []));
    const [block1, block2, block3, block4, block5] = mined as [Block, Block, Block, Block, Block];
    await services.close();
    services = undefined;
    await damage(directory, async (db) => {
      // Block 3 holds block 2's body; block 4 an uncle its header does not commit to.
      await db.put(storeKeys.body(block3.hash), block2.encodeBody());
      const [raws, senders] = RLP.decode((await db.get(storeKeys.body(block4.hash)))!) as [Uint8Array[], Uint8Array[]];
      await db.put(storeKeys.body(block4.hash), RLP.encode([raws, senders, [block1.header.encoded]]));
    });
    services = await open();
    const reported: string[] = [];
    const server = new RequestServer(services.chain, 16, (reason) => new Error(reason), (error) => reported.push(error.message));
    expect(decodeHeadersAnswer(await server.headers(encodeHeadersRequest(block5.hash, 6)), 6).map((header) => hex(header.hash))).to.deep.equal([...mined].reverse().map((block) => hex(block.hash)).concat(hex(services.chain.genesis.hash)));
    const bodies = await server.bodies(encodeHashesRequest(mined.map((block) => block.hash)));
    expect(hex(bodies)).to.equal(hex(encodeItemsAnswer([block1.encodeWireBody(), block2.encodeWireBody(), undefined, undefined, block5.encodeWireBody()])));
    expect(reported).to.deep.equal([
      `the stored body of 0x${hex(block3.hash)} is damaged: its transactions do not match the header's transactions root`,
      `the stored body of 0x${hex(block4.hash)} is damaged: its uncles do not match the header's uncles hash`,
    ]);
  });

  it("the batch-check thread exists with the recovery worker on a machine of several cores, and not with it off", async () => {
    services = await open();
    expect(services.batchChecks).to.not.equal(undefined);
    await services.close();
    services = await openChainServices(findNetworkProfile(33)!, { dataDir: directory, inMemory: false }, { ...defaultNodeOptions.chain, mining: { kind: "off" }, callWorker: false, recoveryWorker: false }, createLogger("silent"));
    expect(services.batchChecks).to.equal(undefined);
  });
});
