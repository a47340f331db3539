// Request/response and gossip between real libp2p hosts over the memory transport (p2p/reqResp.ts,
// p2p/network.ts): the size limits hold at N and break at N + 1 on both sides, a refusal, a server
// error, a silent server and an absent peer each give the asker its own failure, and gossip
// validators' verdicts decide what is delivered and relayed.
import { expect } from "chai";
import { lpStream } from "@libp2p/utils";
import { multiaddr } from "@multiformats/multiaddr";
import type { GossipTopic, GossipVerdict, RequestProtocol } from "../../../src/p2p/interface.js";
import { InvalidRequestError, PeerRequestError, handleRequests, protocolIdOf, resultOk, resultUnavailable, sendRequest } from "../../../src/p2p/reqResp.js";
import { memoryPeers, waitUntil, type MemoryNode } from "../../helpers/p2p.js";

const networkId = 7771;
/** Small limits so that N and N + 1 are cheap to build. */
const echo: RequestProtocol = { name: "echo-test", maxRequestBytes: 100, maxResponseBytes: 200, timeoutMs: 600 };

// What the test server does with a request, by its first byte.
const commandEcho = 0;
/** Answers as many bytes as bytes 1-2 say (big-endian). */
const commandSized = 1;
const commandRefuse = 2;
const commandSilent = 3;
const commandFail = 4;

function request(command: number, length = 1): Uint8Array {
  const bytes = new Uint8Array(length);
  bytes[0] = command;
  return bytes;
}

function sizedRequest(answerBytes: number): Uint8Array {
  return Uint8Array.of(commandSized, answerBytes >> 8, answerBytes & 0xff);
}

/** What `promise` rejects with; fails if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

async function expectFailure(promise: Promise<unknown>, failure: PeerRequestError["failure"], pattern: RegExp): Promise<PeerRequestError> {
  const error = await rejection(promise);
  expect(error, error.stack).to.be.instanceOf(PeerRequestError);
  expect((error as PeerRequestError).failure).to.equal(failure);
  expect(error.message).to.match(pattern);
  return error as PeerRequestError;
}

describe("p2p request/response and gossip (memory transport)", function () {
  this.timeout(30_000);
  const peers = memoryPeers();
  const node = peers.node;
  /** A bare libp2p host: no status protocol, no limits of its own; writes whatever the test says. */
  const bareHost = () => peers.bareHost("bare");

  afterEach(() => peers.stopAll());

  describe("requests", () => {
    let server: MemoryNode;
    let asker: MemoryNode;
    /** Requests the server's handler got. */
    let served: Uint8Array[];

    async function serveTestProtocol(target: MemoryNode): Promise<void> {
      await target.network.serve(echo, async (_peer, bytes) => {
        served.push(bytes);
        switch (bytes[0]) {
          case commandEcho:
            return bytes;
          case commandSized:
            return new Uint8Array((bytes[1]! << 8) | bytes[2]!).fill(7);
          case commandRefuse:
            throw new InvalidRequestError("command 2 is never answered");
          case commandSilent:
            return new Promise<Uint8Array>(() => undefined);
          default:
            throw new Error("the handler broke");
        }
      });
    }

    beforeEach(async () => {
      served = [];
      server = await node();
      await serveTestProtocol(server);
      asker = await node({ options: { bootnodes: [server.address] } });
      await waitUntil(() => asker.network.readyPeers().length === 1 && server.network.readyPeers().length === 1, "the handshake");
    });

    it("a request is answered with the handler's bytes", async () => {
      const answer = await asker.network.request(server.network.peerId, echo, Uint8Array.of(commandEcho, 1, 2, 3));
      expect([...answer]).to.deep.equal([commandEcho, 1, 2, 3]);
      expect(served).to.have.length(1);
      expect(server.network.peerRecord(asker.network.peerId)!.events.invalidMessage).to.equal(undefined);
    });

    it("a request of exactly maxRequestBytes is served; one byte more is refused before it is sent (RangeError)", async () => {
      const answer = await asker.network.request(server.network.peerId, echo, request(commandEcho, echo.maxRequestBytes));
      expect(answer.length).to.equal(echo.maxRequestBytes);
      const error = await rejection(asker.network.request(server.network.peerId, echo, request(commandEcho, echo.maxRequestBytes + 1)));
      expect(error).to.be.instanceOf(RangeError);
      expect(error.message).to.equal("a echo-test request of 101 bytes is over its 100-byte limit");
      // Nothing reached the server: one request served, no fault recorded.
      const check = await asker.network.request(server.network.peerId, echo, Uint8Array.of(commandEcho));
      expect(check.length).to.equal(1);
      expect(served.map((bytes) => bytes.length)).to.deep.equal([echo.maxRequestBytes, 1]);
      expect(server.network.peerRecord(asker.network.peerId)!.events.invalidMessage).to.equal(undefined);
    });

    it("a bare peer's frame over maxRequestBytes: the stream is aborted unread and the server records invalidMessage", async () => {
      const bare = await bareHost();
      const stream = await bare.dialProtocol(multiaddr(server.address), protocolIdOf(echo, networkId), { signal: AbortSignal.timeout(3_000) });
      const frames = lpStream(stream);
      await frames.write(request(commandEcho, echo.maxRequestBytes + 1));
      // No answer comes: the stream ends with an error, well before the protocol's time limit would.
      const started_ = performance.now();
      const error = await rejection(frames.read({ signal: AbortSignal.timeout(5_000) }));
      expect(error.name).to.not.equal("TimeoutError");
      expect(error.name).to.not.equal("AbortError");
      expect(performance.now() - started_).to.be.below(echo.timeoutMs);
      await waitUntil(() => server.network.peerRecord(bare.peerId.toString())?.events.invalidMessage === 1, "invalidMessage recorded for the bare peer");
      expect(server.network.peerRecord(bare.peerId.toString())!.lastEvent).to.equal("invalidMessage");
      // Refused by its announced length, not by a read that failed otherwise.
      expect(server.logs.some((record) => record.msg === "peer event" && record.peer === bare.peerId.toString() && record.reason === "request over 100 bytes")).to.equal(true);
      expect(served).to.deep.equal([]);
      // A frame of exactly the limit from the same bare peer is read, and answered "unavailable":
      // it never sent its status, and only peers past the handshake are served (no blame for it).
      const again = lpStream(await bare.dialProtocol(multiaddr(server.address), protocolIdOf(echo, networkId), { signal: AbortSignal.timeout(3_000) }));
      await again.write(request(commandEcho, echo.maxRequestBytes));
      const answer = (await again.read({ signal: AbortSignal.timeout(3_000) })).subarray();
      expect(answer[0]).to.equal(resultUnavailable);
      expect(Buffer.from(answer.subarray(1)).toString("utf8")).to.equal("status handshake first");
      expect(served).to.deep.equal([]);
      expect(server.network.peerRecord(bare.peerId.toString())!.events.invalidMessage).to.equal(1);
    });

    it("an answer of maxResponseBytes is delivered; one byte more is not sent: the server answers result 2, over the limit", async () => {
      const answer = await asker.network.request(server.network.peerId, echo, sizedRequest(echo.maxResponseBytes));
      expect(answer.length).to.equal(echo.maxResponseBytes);
      await expectFailure(asker.network.request(server.network.peerId, echo, sizedRequest(echo.maxResponseBytes + 1)), "unavailable", /the peer could not answer: answer of 201 bytes over the 200-byte limit/);
      // The asker is not at fault for the server's answer.
      expect(server.network.peerRecord(asker.network.peerId)!.events.invalidMessage).to.equal(undefined);
    });

    it("a handler's InvalidRequestError: the asker gets refused with its reason, the server records invalidMessage", async () => {
      await expectFailure(asker.network.request(server.network.peerId, echo, request(commandRefuse)), "refused", /echo-test: the peer refused the request: command 2 is never answered/);
      expect(server.network.peerRecord(asker.network.peerId)!.events.invalidMessage).to.equal(1);
    });

    it("a handler that fails otherwise: the asker gets unavailable, the reason not leaked, nobody blamed", async () => {
      const error = await expectFailure(asker.network.request(server.network.peerId, echo, request(commandFail)), "unavailable", /the peer could not answer: the node could not answer/);
      expect(error.message).to.not.match(/the handler broke/);
      expect(server.network.peerRecord(asker.network.peerId)!.events.invalidMessage).to.equal(undefined);
    });

    it("a handler that never answers: timeout within the protocol's timeoutMs", async () => {
      const started_ = performance.now();
      await expectFailure(asker.network.request(server.network.peerId, echo, request(commandSilent)), "timeout", /echo-test: no answer within 600 ms/);
      const elapsed = performance.now() - started_;
      expect(elapsed).to.be.at.least(echo.timeoutMs - 50);
      expect(elapsed).to.be.below(echo.timeoutMs + 1_500);
      // The server gives up on its handler too: the request no longer counts as in progress.
      await waitUntil(() => server.network.inboundQueueSize() === 0, "the server's request queue empty again", 3_000);
      // The connection serves the next request.
      expect((await asker.network.request(server.network.peerId, echo, Uint8Array.of(commandEcho, 9)))[1]).to.equal(9);
    });

    it("a peer that is not ready gives unavailable: never connected, a protocol it does not serve, then gone", async () => {
      const stranger = await node();
      await expectFailure(asker.network.request(stranger.network.peerId, echo, request(commandEcho)), "unavailable", /is not a connected peer/);
      const other: RequestProtocol = { ...echo, name: "not-served" };
      await expectFailure(asker.network.request(server.network.peerId, other, request(commandEcho)), "unavailable", /^not-served: /);
      await server.network.stop();
      await waitUntil(() => asker.network.readyPeers().length === 0, "the server gone");
      await expectFailure(asker.network.request(server.network.peerId, echo, request(commandEcho)), "unavailable", /is not a connected peer/);
    });

    it("the asking side bounds the answer: a server writing maxResponseBytes + 2 bytes (result byte and all) gives badAnswer", async () => {
      // Two bare hosts: the rogue server writes what it likes; the asker uses sendRequest as the network does.
      const rogue = await bareHost();
      await rogue.handle(protocolIdOf(echo, networkId), async (stream) => {
        const frames = lpStream(stream);
        const asked = (await frames.read()).subarray();
        const answer = new Uint8Array(1 + (asked[0] === commandSized ? echo.maxResponseBytes : echo.maxResponseBytes + 1));
        answer[0] = resultOk;
        await frames.write(answer);
        await stream.close();
      });
      const askerHost = await bareHost();
      await askerHost.dial(rogue.getMultiaddrs()[0]!);
      const payload = await sendRequest(askerHost, networkId, rogue.peerId, echo, Uint8Array.of(commandSized));
      expect(payload.length).to.equal(echo.maxResponseBytes);
      await expectFailure(sendRequest(askerHost, networkId, rogue.peerId, echo, Uint8Array.of(commandEcho)), "badAnswer", /echo-test: an answer over 200 bytes/);
    });

    it("an empty answer or an unknown result byte is a bad answer", async () => {
      const rogue = await bareHost();
      await rogue.handle(protocolIdOf(echo, networkId), async (stream) => {
        const frames = lpStream(stream);
        const asked = (await frames.read()).subarray();
        await frames.write(asked[0] === 0 ? new Uint8Array(0) : Uint8Array.of(9, 1));
        await stream.close();
      });
      const askerHost = await bareHost();
      await askerHost.dial(rogue.getMultiaddrs()[0]!);
      await expectFailure(sendRequest(askerHost, networkId, rogue.peerId, echo, Uint8Array.of(0)), "badAnswer", /an empty answer/);
      await expectFailure(sendRequest(askerHost, networkId, rogue.peerId, echo, Uint8Array.of(1)), "badAnswer", /an answer with result byte 9/);
    });

    it("handleRequests alone: a request that never arrives is recorded as a bad request after timeoutMs", async () => {
      const serving = await bareHost();
      const bad: string[] = [];
      await handleRequests(serving, networkId, echo, async (_peer, bytes) => bytes, { started: () => undefined, finished: () => undefined, badRequest: (_peer, _protocol, reason) => bad.push(reason) });
      const client = await bareHost();
      const stream = await client.dialProtocol(serving.getMultiaddrs()[0]!, protocolIdOf(echo, networkId), { signal: AbortSignal.timeout(3_000) });
      // Half a length prefix (a varint that says more follows), then nothing.
      stream.send(Uint8Array.of(0x80));
      await waitUntil(() => bad.length === 1, "the silent request recorded", echo.timeoutMs + 3_000);
    });
  });

  describe("gossip", () => {
    const small: GossipTopic = { name: "gossip-test", maxMessageBytes: 100 };

    /** Publishes a message made by `make(attempt)` until `delivered` holds: gossipsub learns its peers' subscriptions shortly after connecting. */
    async function publishUntil(from: MemoryNode, topic: GossipTopic, make: (attempt: number) => Uint8Array, delivered: () => boolean, what: string): Promise<void> {
      const deadline = Date.now() + 10_000;
      for (let attempt = 0; !delivered(); attempt++) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await from.network.publish(topic, make(attempt));
        await waitUntil(delivered, what, 300).catch(() => undefined);
      }
    }

    function message(first: number, attempt: number, length = 8): Uint8Array {
      const bytes = new Uint8Array(length);
      bytes[0] = first;
      bytes[1] = attempt;
      return bytes;
    }

    it("a message over the topic's maxMessageBytes is rejected before the validator and recorded as invalidMessage; one of exactly the limit is delivered", async () => {
      const receiver = await node();
      const sender = await node({ options: { bootnodes: [receiver.address] } });
      await waitUntil(() => receiver.network.readyPeers().length === 1, "the handshake");
      const seen: { peerId: string; length: number }[] = [];
      receiver.network.subscribe(small, async (peerId, data) => {
        seen.push({ peerId, length: data.length });
        return "accept";
      });
      sender.network.subscribe(small, async () => "accept");
      await publishUntil(sender, small, (attempt) => message(1, attempt), () => seen.length > 0, "a first message through");
      seen.length = 0;
      const exact = new Uint8Array(small.maxMessageBytes).fill(2);
      await sender.network.publish(small, exact);
      await waitUntil(() => seen.some((entry) => entry.length === small.maxMessageBytes), "the message of exactly the limit");
      expect(seen[0]!.peerId).to.equal(sender.network.peerId);
      expect(receiver.network.peerRecord(sender.network.peerId)!.events.invalidMessage).to.equal(undefined);
      expect(await sender.network.publish(small, new Uint8Array(small.maxMessageBytes + 1).fill(3))).to.equal(1);
      await waitUntil(() => receiver.network.peerRecord(sender.network.peerId)!.events.invalidMessage === 1, "invalidMessage recorded");
      expect(seen.map((entry) => entry.length)).to.deep.equal([small.maxMessageBytes]);
    });

    it("three nodes in a line: what the middle accepts reaches the far end; what it rejects does not", async () => {
      const first = await node();
      const middle = await node({ options: { bootnodes: [first.address] } });
      const last = await node({ options: { bootnodes: [middle.address] } });
      await waitUntil(() => middle.network.readyPeers().length === 2, "the middle connected to both ends");
      // Not joined to each other: whatever the last gets came through the middle.
      expect(first.network.readyPeers().map((peer) => peer.peerId)).to.deep.equal([middle.network.peerId]);
      expect(last.network.readyPeers().map((peer) => peer.peerId)).to.deep.equal([middle.network.peerId]);

      const judged: { first: number; verdict: GossipVerdict }[] = [];
      const atLast: { from: string; first: number }[] = [];
      first.network.subscribe(small, async () => "accept");
      // The middle rejects messages that start with 0xff.
      middle.network.subscribe(small, async (_peer, data) => {
        const verdict: GossipVerdict = data[0] === 0xff ? "reject" : "accept";
        judged.push({ first: data[0]!, verdict });
        return verdict;
      });
      last.network.subscribe(small, async (peerId, data) => {
        atLast.push({ from: peerId, first: data[0]! });
        return "accept";
      });
      await publishUntil(first, small, (attempt) => message(1, attempt), () => atLast.length > 0, "an accepted message relayed to the last");
      expect(atLast[0]!.from).to.equal(middle.network.peerId);

      await first.network.publish(small, message(0xff, 0));
      await waitUntil(() => judged.some((entry) => entry.verdict === "reject"), "the middle's rejection");
      // A later accepted message overtakes nothing: once it has arrived, the rejected one would have too.
      await first.network.publish(small, message(2, 0));
      await waitUntil(() => atLast.some((entry) => entry.first === 2), "the later accepted message at the last");
      expect(atLast.map((entry) => entry.first)).to.not.include(0xff);
      expect(atLast.every((entry) => entry.from === middle.network.peerId)).to.equal(true);
    });
  });
});
