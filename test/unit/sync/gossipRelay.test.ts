// Block gossip through a node that is still importing: three nodes in a line over the memory
// transport (miner - relay - end), each a chain in memory with its sync (test/helpers/syncNode.ts).
// The miner makes blocks back to back, so each reaches the relay while the one before it waits for
// the relay's importer: the relay must take it (checked against that parent, imported after it)
// and relay it, not hold it as an orphan and leave the end to fetch it by request after a status.
// (Before main's ce92bd6 the relay passed on 4 of the 30.)
import { expect } from "chai";
import { signedTransfer } from "../../helpers/chainPair.js";
import { testTimings, waitUntil } from "../../helpers/p2p.js";
import { startSyncNode, type SyncNode } from "../../helpers/syncNode.js";

describe("block gossip through a node that is importing", function () {
  this.timeout(60_000);
  const nodes: SyncNode[] = [];

  after(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  });

  function sameHead(a: SyncNode, b: SyncNode): boolean {
    return Buffer.compare(a.services.chain.head.hash, b.services.chain.head.hash) === 0;
  }

  it("a burst of 30 blocks reaches the end of a line of three by gossip alone: the middle node takes each block while its parent still waits for the importer, and relays it", async () => {
    const miner = await startSyncNode({ timings: testTimings });
    nodes.push(miner);
    const relay = await startSyncNode({ timings: testTimings, bootnodes: [miner.address] });
    nodes.push(relay);
    const end = await startSyncNode({ timings: testTimings, bootnodes: [relay.address] });
    nodes.push(end);
    await waitUntil(() => relay.network.readyPeers().length === 2 && end.network.readyPeers().length === 1, "the line connected", 20_000);
    // First blocks, one at a time, until one arrives by gossip: the gossip meshes have formed.
    let nonce = 0;
    const transfer = () => signedTransfer(miner.services, "cow", nonce++, "0x00000000000000000000000000000000000000aa");
    for (let attempt = 0; attempt < 20 && end.sync.counters.gossipBlocks.accept === 0; attempt++) {
      await miner.services.miner.mineBlock([await transfer()]);
      await waitUntil(() => sameHead(miner, end), "the end on the miner's head", 20_000);
    }
    expect(end.sync.counters.gossipBlocks.accept).to.be.above(0);

    const relayed = relay.sync.counters.gossipBlocks.accept;
    const received = end.sync.counters.gossipBlocks.accept;
    const ignored = end.sync.counters.gossipBlocks.ignore;
    const transfers: Awaited<ReturnType<typeof transfer>>[] = [];
    for (let index = 0; index < 30; index++) transfers.push(await transfer());
    for (const each of transfers) await miner.services.miner.mineBlock([each]);
    await waitUntil(() => sameHead(miner, end) && sameHead(miner, relay), "every node on the miner's head", 30_000);

    expect(relay.sync.counters.gossipBlocks.accept - relayed).to.equal(30);
    expect(end.sync.counters.gossipBlocks.accept - received).to.equal(30);
    expect(end.sync.counters.gossipBlocks.ignore - ignored).to.equal(0);
    expect(relay.sync.orphanCount + end.sync.orphanCount).to.equal(0);
  });
});
