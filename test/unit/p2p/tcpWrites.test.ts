// Two libp2p hosts over real TCP on loopback (127.0.0.2 and 127.0.0.3), as p2p/libp2p.ts builds
// them: what a turn of the event loop hands a connection's socket leaves it in one system call, and
// requests and answers still arrive whole (a large answer, written while the socket is corked,
// waits for the socket's drain and is not cut).
import { Socket } from "node:net";
import { expect } from "chai";
import { multiaddr } from "@multiformats/multiaddr";
import type { RequestProtocol } from "../../../src/p2p/interface.js";
import { createHost, type Host } from "../../../src/p2p/libp2p.js";
import { handleRequests, sendRequest } from "../../../src/p2p/reqResp.js";
import { newNodeKey } from "../../helpers/p2p.js";

const networkId = 7772;
const sized: RequestProtocol = { name: "sized-test", maxRequestBytes: 8, maxResponseBytes: 1024 * 1024, timeoutMs: 10_000 };

/** The first four bytes of a request: the answer's length; the answer's bytes count up from it. */
function answerFor(request: Uint8Array): Uint8Array {
  const length = new DataView(request.buffer, request.byteOffset, 4).getUint32(0);
  return Uint8Array.from({ length }, (_, index) => (index * 7 + length) & 0xff);
}

function requestOf(length: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, length);
  return bytes;
}

function tcpHost(address: string): Promise<Host> {
  return createHost({ privateKey: newNodeKey(), listen: [`/ip4/${address}/tcp/0`], transport: undefined, dialFrom: address, maxConnections: 10, userAgent: "tcp-writes-test", gossipHeartbeatMs: 1_000 });
}

/** Counts, while `run` runs, the buffers handed to sockets and the writes the sockets made of them (one per _write or _writev). */
async function countingSocketWrites(run: () => Promise<void>): Promise<{ buffers: number; writes: number }> {
  const counts = { buffers: 0, writes: 0 };
  const prototype = Socket.prototype as unknown as Record<"write" | "_write" | "_writev", (...args: unknown[]) => unknown>;
  const originals = { write: prototype.write, _write: prototype._write, _writev: prototype._writev };
  prototype.write = function (this: Socket, ...args: unknown[]) {
    counts.buffers++;
    return originals.write.apply(this, args);
  };
  prototype._write = function (this: Socket, ...args: unknown[]) {
    counts.writes++;
    return originals._write.apply(this, args);
  };
  prototype._writev = function (this: Socket, ...args: unknown[]) {
    counts.writes++;
    return originals._writev.apply(this, args);
  };
  try {
    await run();
  } finally {
    Object.assign(prototype, originals);
  }
  return counts;
}

describe("p2p over TCP: a turn's writes leave in one system call", function () {
  this.timeout(30_000);
  const hosts: Host[] = [];

  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((host) => host.stop()));
  });

  async function connectedPair(): Promise<{ server: Host; client: Host }> {
    const server = await tcpHost("127.0.0.2");
    const client = await tcpHost("127.0.0.3");
    hosts.push(server, client);
    const hooks = { started: () => undefined, finished: () => undefined, badRequest: () => undefined };
    await handleRequests(server, networkId, sized, async (_peer, request) => answerFor(request), hooks);
    await client.dial(multiaddr(server.getMultiaddrs()[0]!.toString()));
    return { server, client };
  }

  it("20 small requests: fewer than half as many socket writes as buffers handed to the sockets, every answer whole", async () => {
    const { server, client } = await connectedPair();
    const answers: Uint8Array[] = [];
    const counts = await countingSocketWrites(async () => {
      for (let index = 0; index < 20; index++) answers.push(await sendRequest(client, networkId, server.peerId, sized, requestOf(100 + index)));
    });
    answers.forEach((answer, index) => expect(answer).to.deep.equal(answerFor(requestOf(100 + index))));
    // Uncorked, each buffer (noise's length prefix, ciphertext and tag; every yamux frame) is a write.
    expect(counts.buffers).to.be.greaterThan(100);
    expect(counts.writes).to.be.lessThan(counts.buffers / 2);
  });

  it("answers of 1 MiB and several in flight arrive whole", async () => {
    const { server, client } = await connectedPair();
    const lengths = [1024 * 1024, 300_000, 65_535, 65_536, 1, 700_001];
    const answers = await Promise.all(lengths.map((length) => sendRequest(client, networkId, server.peerId, sized, requestOf(length))));
    answers.forEach((answer, index) => expect(answer).to.deep.equal(answerFor(requestOf(lengths[index]!))));
  });
});
