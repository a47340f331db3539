// node/peerToPeer.ts afterStartingSync, as the node starts its call worker with bootnodes: nodes
// over the memory transport, each a chain in memory with its sync (test/helpers/syncNode.ts). The
// call comes once the long sync the node began on its bootnode's status has ended; soon after the
// first status when that status starts none; at the time limit when no peer answers; never once
// cancelled.
import { expect } from "chai";
import { afterStartingSync } from "../../../src/node/peerToPeer.js";
import { memoryAddress, newNodeKey, testTimings, waitUntil } from "../../helpers/p2p.js";
import { startSyncNode, type SyncNode } from "../../helpers/syncNode.js";
import { peerIdOfKey } from "../../../src/p2p/network.js";

describe("node/peerToPeer: afterStartingSync, what a node with bootnodes waits for before its call worker", function () {
  this.timeout(60_000);
  const nodes: SyncNode[] = [];

  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((node) => node.stop()));
  });

  /** When `then` ran, in ms from the call, and what the node's sync was doing then. */
  function watch(node: SyncNode, timings = { settleMs: 100, limitMs: 10_000 }) {
    const started = performance.now();
    const seen: { atMs?: number; head?: bigint; syncing?: boolean } = {};
    let progressSeen = false;
    const unsubscribe = node.sync.subscribeProgress((progress) => (progressSeen ||= progress !== undefined));
    const cancel = afterStartingSync(node.network, node.sync, () => {
      seen.atMs = performance.now() - started;
      seen.head = node.services.chain.head.number;
      seen.syncing = node.sync.syncProgress() !== undefined;
      unsubscribe();
    }, timings);
    return { seen, cancel, progressSeen: () => progressSeen };
  }

  it("runs once the long sync begun on the bootnode's status has ended, not before", async () => {
    const source = await startSyncNode({ timings: testTimings });
    nodes.push(source);
    for (let count = 0; count < 60; count++) await source.services.miner.mineBlock([]);
    const syncing = await startSyncNode({ timings: testTimings, bootnodes: [source.address] });
    nodes.push(syncing);
    const { seen, progressSeen } = watch(syncing);
    await waitUntil(() => seen.atMs !== undefined, "the call", 30_000);
    expect(progressSeen(), "a long sync ran").to.equal(true);
    expect(seen.syncing).to.equal(false);
    expect(seen.head).to.equal(60n);
  });

  it("runs soon after the bootnode's status when that status begins no long sync (the same head)", async () => {
    const source = await startSyncNode({ timings: testTimings });
    nodes.push(source);
    const peer = await startSyncNode({ timings: testTimings, bootnodes: [source.address] });
    nodes.push(peer);
    const { seen, progressSeen } = watch(peer);
    await waitUntil(() => seen.atMs !== undefined, "the call", 30_000);
    expect(progressSeen()).to.equal(false);
    // The settle time after the status, far from the 10-second limit.
    expect(seen.atMs).to.be.below(5_000);
  });

  it("runs at the time limit when no bootnode answers, and never once cancelled", async () => {
    const absent = `${memoryAddress()}/p2p/${peerIdOfKey(newNodeKey())}`;
    const alone = await startSyncNode({ timings: testTimings, bootnodes: [absent] });
    nodes.push(alone);
    const { seen } = watch(alone, { settleMs: 100, limitMs: 400 });
    const cancelled = watch(alone, { settleMs: 100, limitMs: 400 });
    cancelled.cancel();
    await waitUntil(() => seen.atMs !== undefined, "the call", 10_000);
    expect(seen.atMs).to.be.at.least(390);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(cancelled.seen.atMs).to.equal(undefined);
  });
});
