// The serving side over the network (memory transport): a node whose store holds damaged blocks
// (LevelDB changed directly while it was stopped) answers a peer's headers, bodies and blocks
// requests with the damaged blocks left out, as blocks it does not hold, serves the rest, and logs
// what it found. Before, a damaged block made the whole request fail ("the node could not answer").
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RLP } from "@ethereumjs/rlp";
import { expect } from "chai";
import { ClassicLevel } from "classic-level";
import type { Block } from "../../../src/chain/block.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { createLogger } from "../../../src/common/logger.js";
import { chainStatusSource } from "../../../src/node/peerToPeer.js";
import { defaultNodeOptions, openChainServices, type ChainServices } from "../../../src/node/index.js";
import { storeKeys } from "../../../src/storage/keys.js";
import { decodeHeadersAnswer, encodeHashesRequest, encodeHeadersRequest, encodeItemsAnswer } from "../../../src/sync/messages.js";
import { mineBlocks, signedTransfer } from "../../helpers/chainPair.js";
import { startMemoryNode, testTimings, waitUntil, type MemoryNode } from "../../helpers/p2p.js";
import { startSyncNode, type SyncNode } from "../../helpers/syncNode.js";
import { createLogCapture } from "../../helpers/testNode.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("sync: serving peers from a store with damaged blocks", function () {
  this.timeout(60_000);
  let directory: string;
  let server: SyncNode | undefined;
  let asker: MemoryNode | undefined;
  const profile = findNetworkProfile(33)!;
  const open = () => openChainServices(profile, { dataDir: directory, inMemory: false }, { ...defaultNodeOptions.chain, mining: { kind: "off" }, callWorker: false }, createLogger("silent"));

  beforeEach(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-served-damage-"))));
  afterEach(async () => {
    await asker?.network.stop();
    await server?.stop();
    asker = server = undefined;
    await rm(directory, { recursive: true, force: true });
  });

  it("answers headers, bodies and blocks requests without the damaged blocks, and logs them", async () => {
    // Blocks 1-5, a transfer in 2 and in 3; the head (5) is read at the start, the others are not.
    let services: ChainServices = await open();
    let nonce = 0;
    const blocks = (await mineBlocks(services, 5, async (index) => (index === 1 || index === 2 ? [await signedTransfer(services, "cow", nonce++, "0x00000000000000000000000000000000000000aa")] : []))) as [Block, Block, Block, Block, Block];
    const [block1, block2, block3, block4, block5] = blocks;
    await services.close();
    const db = new ClassicLevel<Uint8Array, Uint8Array>(directory, { keyEncoding: "view", valueEncoding: "view" });
    await db.open();
    try {
      // Block 3 holds block 2's body (other transactions); block 4 an uncle its header does not commit to.
      await db.put(storeKeys.body(block3.hash), block2.encodeBody());
      const [raws, senders] = RLP.decode((await db.get(storeKeys.body(block4.hash)))!) as [Uint8Array[], Uint8Array[]];
      await db.put(storeKeys.body(block4.hash), RLP.encode([raws, senders, [block1.header.encoded]]));
    } finally {
      await db.close();
    }
    services = await open();
    const capture = createLogCapture();
    server = await startSyncNode({ services, timings: testTimings, log: createLogger("error", capture.stream) });

    // A bare peer at the genesis block: it follows nobody, it only asks.
    const status = chainStatusSource(profile, services.chain, createLogger("silent")).current();
    const genesis = (await services.chain.getBlockByNumber(0n))!;
    asker = await startMemoryNode({ status: { ...status, bestNumber: 0n, bestHash: genesis.hash, bestParentHash: new Uint8Array(32), totalDifficulty: genesis.header.fields.difficulty }, options: { bootnodes: [server.address] } });
    const serverId = server.network.peerId;
    await waitUntil(() => asker!.network.readyPeers().some((peer) => peer.peerId === serverId) && server!.network.readyPeers().length === 1, "the asker and the server past their status", 20_000);
    const { protocols } = server.sync;
    const ask = (protocol: (typeof protocols)[keyof typeof protocols], request: Uint8Array) => asker!.network.request(serverId, protocol, request);

    const headers = decodeHeadersAnswer(await ask(protocols.headers, encodeHeadersRequest(block5.hash, 6)), 6);
    expect(headers.map((header) => Number(header.number))).to.deep.equal([5, 4, 3, 2, 1, 0]);
    const hashes = blocks.map((block) => block.hash);
    expect(hex(await ask(protocols.bodies, encodeHashesRequest(hashes)))).to.equal(hex(encodeItemsAnswer([block1.encodeWireBody(), block2.encodeWireBody(), undefined, undefined, block5.encodeWireBody()])));
    expect(hex(await ask(protocols.blocks, encodeHashesRequest(hashes)))).to.equal(hex(encodeItemsAnswer([block1.encode(), block2.encode(), undefined, undefined, block5.encode()])));

    const damaged = capture.records.filter((record) => typeof record.msg === "string" && record.msg.startsWith("a stored block a peer asked for is damaged")).map((record) => String(record.err));
    expect(damaged).to.deep.equal([
      `the stored body of 0x${hex(block3.hash)} is damaged: its transactions do not match the header's transactions root`,
      `the stored body of 0x${hex(block4.hash)} is damaged: its uncles do not match the header's uncles hash`,
      `the stored block 0x${hex(block3.hash)} is damaged: its transactions do not match the header's transactions root`,
      `the stored block 0x${hex(block4.hash)} is damaged: its uncles do not match the header's uncles hash`,
    ]);
  });
});
