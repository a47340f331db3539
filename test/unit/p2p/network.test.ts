// The peer-to-peer network over libp2p's memory transport: real hosts (noise, yamux, identify) and
// the status handshake, with each node's chain status set by the test.
import { expect } from "chai";
import { lpStream } from "@libp2p/utils";
import { multiaddr } from "@multiformats/multiaddr";
import type { Stream } from "@libp2p/interface";
import type { Host } from "../../../src/p2p/libp2p.js";
import { statusProtocolId, encodeStatus } from "../../../src/p2p/status.js";
import { encodeRlp } from "../../../src/common/rlp.js";
import { hash32, memoryAddress, memoryPeers, memoryTransport, newNodeKey, regtestLikeStatus, waitUntil, type MemoryNode } from "../../helpers/p2p.js";

describe("p2p network (memory transport)", function () {
  this.timeout(20_000);
  const peers = memoryPeers();
  const node = peers.node;
  /** A bare libp2p host speaking whatever the test writes: a peer that does not follow the protocol. */
  const rogueHost = () => peers.bareHost("rogue");

  afterEach(() => peers.stopAll());

  it("two nodes exchange their status: each counts the other, with its best block", async () => {
    const a = await node({ status: { bestNumber: 5n, bestHash: hash32(5), totalDifficulty: 6n } });
    const b = await node({ options: { bootnodes: [a.address] } });
    await waitUntil(() => a.network.connectedPeers().length === 1 && b.network.connectedPeers().length === 1, "both sides past the handshake");
    const [peerOfB] = b.network.readyPeers();
    expect(peerOfB!.peerId).to.equal(a.network.peerId);
    expect(peerOfB!.status!.bestNumber).to.equal(5n);
    expect(peerOfB!.status!.totalDifficulty).to.equal(6n);
    expect(peerOfB!.events.successfulHandshake).to.equal(1);
    const [peerOfA] = a.network.readyPeers();
    expect(peerOfA!.peerId).to.equal(b.network.peerId);
    expect(peerOfA!.status!.bestNumber).to.equal(0n);
    // net_peerList's line: the first 8 hex digits of the 64-byte node id, then the address.
    const [info] = a.network.connectedPeers();
    expect(b.network.nodeId).to.match(/^[0-9a-f]{128}$/);
    expect(info!.id).to.equal(b.network.nodeId.slice(0, 8));
    expect(a.network.isListening()).to.equal(true);
  });

  it("a new head reaches the peers: their record of the node follows", async () => {
    const a = await node();
    const b = await node({ options: { bootnodes: [a.address] } });
    await waitUntil(() => a.network.readyPeers().length === 1, "the handshake");
    a.status.set({ bestNumber: 9n, bestHash: hash32(9), bestParentHash: hash32(8), totalDifficulty: 10n });
    await waitUntil(() => b.network.readyPeers()[0]?.status?.bestNumber === 9n, "b to hear a's new head");
    expect(b.network.readyPeers()[0]!.status!.bestParentHash).to.deep.equal(hash32(8));
    b.status.set({ bestNumber: 3n });
    await waitUntil(() => a.network.readyPeers()[0]?.status?.bestNumber === 3n, "a to hear b's new head");
  });

  for (const [what, status, event] of [
    ["network id", { networkId: 7772 }, "invalidNetwork"],
    ["chain id", { chainId: 34n }, "invalidChain"],
    ["genesis", { genesisHash: hash32(2) }, "unexpectedGenesis"],
  ] as const) {
    it(`a peer of another ${what} is refused and recorded on both sides`, async () => {
      const a = await node();
      const b = await node({ status, options: { bootnodes: [a.address] } });
      await waitUntil(() => a.network.peerRecord(b.network.peerId)?.events[event] === 1 && b.network.peerRecord(a.network.peerId)?.events[event] === 1, `${event} recorded`);
      expect(a.network.connectedPeers()).to.deep.equal([]);
      expect(b.network.connectedPeers()).to.deep.equal([]);
      expect(a.network.peerRecord(b.network.peerId)!.events.successfulHandshake).to.equal(undefined);
    });
  }

  it("a bootnode of another network is redialled with a doubling pause, not in a loop", async () => {
    const other = await node({ status: { networkId: 775 } });
    const started_ = performance.now();
    const b = await node({ options: { bootnodes: [other.address] }, timings: { redialFirstMs: 200, redialMaxMs: 2_000 } });
    await waitUntil(() => (b.network.peerRecord(other.network.peerId)?.events.invalidNetwork ?? 0) >= 4, "four refusals", 10_000);
    // Pauses of 200, 400 and 800 ms between the four.
    expect(performance.now() - started_).to.be.at.least(1_400);
    expect(b.network.connectedPeers()).to.deep.equal([]);
  });

  it("max-peers: N peers connect, the N+1th is refused", async () => {
    const hub = await node({ options: { maxPeers: 2 } });
    const first = await node({ options: { bootnodes: [hub.address] } });
    const second = await node({ options: { bootnodes: [hub.address] } });
    await waitUntil(() => hub.network.connectedPeers().length === 2, "two peers at max-peers 2");
    const third = await node({ options: { bootnodes: [hub.address] } });
    // The third keeps redialling (every 100-400 ms here) and is refused each time.
    await waitUntil(() => third.logs.filter((record) => record.msg === "bootnode not reached").length >= 2, "the third refused twice");
    expect(hub.network.connectedPeers().length).to.equal(2);
    expect(third.network.connectedPeers()).to.deep.equal([]);
    expect([first, second].every((each) => each.network.connectedPeers().length === 1)).to.equal(true);
    // A place frees: the third gets in at its next redial.
    await first.network.stop();
    await waitUntil(() => third.network.connectedPeers().length === 1, "the third in once a place is free");
    expect(hub.network.connectedPeers().length).to.equal(2);
  });

  it("a bootnode that is not up yet is dialled again until it is", async () => {
    const key = newNodeKey();
    const address = memoryAddress();
    const { peerIdOfKey, startPeerNetwork } = await import("../../../src/p2p/network.js");
    const late = `${address}/p2p/${peerIdOfKey(key)}`;
    const b = await node({ options: { bootnodes: [late] } });
    await waitUntil(() => b.logs.filter((record) => record.msg === "bootnode not reached").length >= 2, "two failed dials");
    const { TestStatusSource } = await import("../../helpers/p2p.js");
    const { createLogger } = await import("../../../src/common/logger.js");
    const { testTimings } = await import("../../helpers/p2p.js");
    const lateNetwork = await startPeerNetwork({
      options: { host: "127.0.0.1", port: 0, bootnodes: [], maxPeers: 30, minPeers: 1, nodeKey: undefined },
      privateKey: key,
      status: new TestStatusSource(regtestLikeStatus()),
      log: createLogger("silent"),
      userAgent: "late",
      timings: testTimings,
      transport: { factory: memoryTransport(), listen: [address] },
    });
    try {
      await waitUntil(() => b.network.connectedPeers().length === 1, "the late bootnode connected");
      expect(lateNetwork.connectedPeers().length).to.equal(1);
    } finally {
      await lateNetwork.stop();
    }
  });

  describe("untrusted status bytes", () => {
    async function sendRaw(target: MemoryNode, frame: Uint8Array): Promise<Host> {
      const rogue = await rogueHost();
      await rogue.dial(multiaddr(target.address));
      const stream = await rogue.dialProtocol(multiaddr(target.address), statusProtocolId, { signal: AbortSignal.timeout(3_000) });
      await lpStream(stream).write(frame).catch(() => undefined);
      return rogue;
    }

    const cases: [string, Uint8Array, "invalidMessage"][] = [
      ["bytes that are not RLP", Uint8Array.from([0xf9, 0xff, 0x00]), "invalidMessage"],
      ["a list of the wrong length", encodeRlp([1, 7771, 33]), "invalidMessage"],
      ["a hash of 31 bytes", encodeRlp([1, 7771, 33, new Uint8Array(31), 0, hash32(1), new Uint8Array(32), 1]), "invalidMessage"],
      ["a frame over the size limit", new Uint8Array(2_000).fill(0xc0), "invalidMessage"],
    ];
    for (const [what, frame, event] of cases) {
      it(`${what}: the peer is recorded and disconnected, the node goes on`, async () => {
        const target = await node();
        const rogue = await sendRaw(target, frame);
        await waitUntil(() => target.network.peerRecord(rogue.peerId.toString())?.events[event] === 1, `${event} recorded`);
        await waitUntil(() => rogue.getConnections().length === 0, "the rogue disconnected");
        expect(target.network.connectedPeers()).to.deep.equal([]);
        // The node still takes a good peer.
        await node({ options: { bootnodes: [target.address] } });
        await waitUntil(() => target.network.connectedPeers().length === 1, "a good peer after the bad one");
      });
    }

    it("a peer that connects and never sends its status is dropped after the handshake time", async () => {
      const target = await node({ timings: { handshakeMs: 300 } });
      const rogue = await rogueHost();
      await rogue.dial(multiaddr(target.address));
      await waitUntil(() => target.network.peerRecord(rogue.peerId.toString())?.events.failedHandshake === 1, "failedHandshake recorded", 5_000);
      await waitUntil(() => rogue.getConnections().length === 0, "the silent peer disconnected");
    });

    /**
     * A bare host past the handshake with `target` (it dials, sends a good status and reads the
     * answer), answering the target's status requests with `answer`; `silent` streams it opens
     * are kept open, unwritten, until the test ends.
     */
    async function peerPastHandshake(target: MemoryNode, answer: (stream: Stream) => Promise<void>): Promise<Host> {
      const rogue = await rogueHost();
      await rogue.handle(statusProtocolId, (stream) => answer(stream).catch(() => undefined));
      await rogue.dial(multiaddr(target.address));
      const stream = await rogue.dialProtocol(multiaddr(target.address), statusProtocolId, { signal: AbortSignal.timeout(3_000) });
      const frames = lpStream(stream);
      await frames.write(encodeStatus(regtestLikeStatus()));
      expect((await frames.read({ signal: AbortSignal.timeout(3_000) })).subarray()[0]).to.equal(0);
      await waitUntil(() => target.network.connectedPeers().length === 1, "the bare host past the handshake");
      return rogue;
    }
    /** Reads the status request and never answers (the stream stays open until the test ends). */
    const neverAnswer = async (stream: Stream) => void (await lpStream(stream).read());
    const statusMs = 300;

    it("a refresh the peer answers late is recorded as a timeout, each time, and the peer is kept", async () => {
      const target = await node({ timings: { statusMs } });
      const rogue = await peerPastHandshake(target, neverAnswer);
      const rogueId = rogue.peerId.toString();
      for (const [bestNumber, timeouts] of [[1n, 1], [2n, 2]] as const) {
        // A new head: the target sends its status to its peers.
        target.status.set({ bestNumber });
        await waitUntil(() => target.network.peerRecord(rogueId)?.events.timeout === timeouts, `timeout ${timeouts} recorded`);
      }
      await new Promise((resolve) => setTimeout(resolve, statusMs));
      expect(target.network.readyPeers().map((peer) => peer.peerId)).to.deep.equal([rogueId]);
      expect(rogue.getConnections().length).to.equal(1);
      expect(target.network.peerRecord(rogueId)!.events.failedHandshake).to.equal(undefined);
    });

    it("a refresh sent by a peer past the handshake that does not come in time is recorded as a timeout, and the peer is kept", async () => {
      const target = await node({ timings: { statusMs } });
      const rogue = await peerPastHandshake(target, neverAnswer);
      const rogueId = rogue.peerId.toString();
      // Opens a status stream and writes nothing.
      await rogue.dialProtocol(multiaddr(target.address), statusProtocolId, { signal: AbortSignal.timeout(3_000) });
      await waitUntil(() => target.network.peerRecord(rogueId)?.events.timeout === 1, "the timeout recorded");
      await new Promise((resolve) => setTimeout(resolve, statusMs));
      expect(target.network.readyPeers().map((peer) => peer.peerId)).to.deep.equal([rogueId]);
      expect(rogue.getConnections().length).to.equal(1);
    });

    it("a refresh answered with bytes that do not decode still ends the connection, on either side", async () => {
      const target = await node({ timings: { statusMs } });
      const answeredBadly = await peerPastHandshake(target, async (stream) => {
        const frames = lpStream(stream);
        await frames.read();
        await frames.write(Uint8Array.from([0, 0xf9, 0xff, 0x00]));
      });
      target.status.set({ bestNumber: 1n });
      await waitUntil(() => target.network.peerRecord(answeredBadly.peerId.toString())?.events.invalidMessage === 1, "invalidMessage recorded");
      await waitUntil(() => answeredBadly.getConnections().length === 0, "the peer disconnected");
      const sentBadly = await peerPastHandshake(target, neverAnswer);
      await lpStream(await sentBadly.dialProtocol(multiaddr(target.address), statusProtocolId, { signal: AbortSignal.timeout(3_000) })).write(encodeRlp([1, 7771, 33]));
      await waitUntil(() => target.network.peerRecord(sentBadly.peerId.toString())?.events.invalidMessage === 1, "invalidMessage recorded");
      await waitUntil(() => sentBadly.getConnections().length === 0, "the peer disconnected");
    });

    it("a status missing in the handshake still ends the connection, on either side, recorded as a timeout", async () => {
      // The node dials: its first status goes unanswered.
      const silentBootnode = await rogueHost();
      await silentBootnode.handle(statusProtocolId, (stream) => neverAnswer(stream).catch(() => undefined));
      let hungUp = 0;
      silentBootnode.addEventListener("peer:disconnect", () => hungUp++);
      const dialler = await node({ timings: { statusMs }, options: { bootnodes: [silentBootnode.getMultiaddrs()[0]!.toString()] } });
      await waitUntil(() => (dialler.network.peerRecord(silentBootnode.peerId.toString())?.events.timeout ?? 0) >= 1 && hungUp >= 1, "the timeout recorded and the bootnode hung up on");
      expect(dialler.network.connectedPeers()).to.deep.equal([]);
      // The node is dialled: the peer opens a status stream and writes nothing.
      const target = await node({ timings: { statusMs, handshakeMs: 5_000 } });
      const rogue = await rogueHost();
      await rogue.dial(multiaddr(target.address));
      await rogue.dialProtocol(multiaddr(target.address), statusProtocolId, { signal: AbortSignal.timeout(3_000) });
      await waitUntil(() => target.network.peerRecord(rogue.peerId.toString())?.events.timeout === 1, "the timeout recorded");
      await waitUntil(() => rogue.getConnections().length === 0, "the peer disconnected");
    });

    it("a status answered with a good frame is accepted from a bare host (the codec is the protocol)", async () => {
      const target = await node();
      const rogue = await rogueHost();
      await rogue.dial(multiaddr(target.address));
      const stream = await rogue.dialProtocol(multiaddr(target.address), statusProtocolId, { signal: AbortSignal.timeout(3_000) });
      const frames = lpStream(stream);
      await frames.write(encodeStatus(regtestLikeStatus({ bestNumber: 2n })));
      const response = (await frames.read({ signal: AbortSignal.timeout(3_000) })).subarray();
      expect(response[0]).to.equal(0);
      await waitUntil(() => target.network.connectedPeers().length === 1, "the bare host counted");
      expect(target.network.readyPeers()[0]!.status!.bestNumber).to.equal(2n);
    });
  });
});
