// The plain POST path's time limits, with short limits on a bare socket server (the node uses
// node:http's: 5 s keep-alive, 20 s for headers, 60 s for a request, 120 s idle).
import { createServer, type Server, type Socket } from "node:net";
import { expect } from "chai";
import { createLogger } from "../../../src/common/logger.js";
import { PlainPostConnections, type PlainPostTimeouts } from "../../../src/rpc/plainPostConnections.js";
import { exchange } from "../../helpers/rawHttp.js";

const timeouts: PlainPostTimeouts = { keepAliveMs: 300, headersMs: 400, requestMs: 800, idleMs: 1_500 };

describe("rpc/plainPostConnections time limits", () => {
  let server: Server;
  let url: string;
  const handedOff: Socket[] = [];
  before(async () => {
    const connections = new PlainPostConnections({
      // Echoes the body; "big" answers 8 MiB.
      dispatcher: { handle: (body) => (body === "big" ? JSON.stringify("x".repeat(8 * 1024 * 1024)) : body) },
      log: createLogger("silent"),
      bodyLimitBytes: 1024,
      refusedContentType: (value) => (value === "" || value.trim() === "application/json" ? undefined : value.trim()),
      hostAllowed: (value) => value.trim() !== "refused.test",
      handOff: (socket) => {
        handedOff.push(socket);
        socket.destroy();
      },
      internalErrorBody: "{}",
      reportConnectionError: () => undefined,
      timeouts,
    });
    server = createServer((socket) => connections.accept(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address() as { port: number };
    url = `http://127.0.0.1:${address.port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = (body: string) => `POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

  it("closes a connection idle for the keep-alive limit after its answer", async () => {
    const started = performance.now();
    const { answers, closed } = await exchange(url, [post("1")], 2);
    expect(answers.map((answer) => answer.body)).to.deep.equal(["1"]);
    expect(closed).to.equal(true);
    expect(performance.now() - started).to.be.within(timeouts.keepAliveMs - 50, timeouts.idleMs);
  });

  it("answers 408 and closes when a header block takes longer than its limit", async () => {
    // The second piece comes after the header limit, though within the idle limit.
    const request = post("1");
    const { answers, closed } = await exchange(url, [request.slice(0, 10), ...Array.from({ length: 20 }, () => "")], 1);
    expect(answers.map((answer) => answer.statusLine)).to.deep.equal(["HTTP/1.1 408 Request Timeout"]);
    expect(closed).to.equal(true);
  });

  it("lets a body arrive slowly within the request limit, and answers 408 past it", async () => {
    const body = "0123456789";
    const head = post(body).slice(0, -body.length);
    // 30 ms between pieces: 10 pieces of the body take about 330 ms, within 800 ms.
    const inTime = await exchange(url, [head, ...body.split("")], 1);
    expect(inTime.answers.map((answer) => answer.body)).to.deep.equal([body]);
    const tooSlow = await exchange(url, [head, ...body.split("").flatMap((character) => [character, "", "", ""])], 1);
    expect(tooSlow.answers.map((answer) => answer.statusLine)).to.deep.equal(["HTTP/1.1 408 Request Timeout"]);
    expect(tooSlow.closed).to.equal(true);
  });

  it("does not cut an answer the client reads later than the keep-alive limit", async () => {
    const { hostname, port } = new URL(url);
    const { connect } = await import("node:net");
    const socket = connect({ host: hostname, port: Number(port) });
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    socket.pause();
    socket.write(post("big"));
    await new Promise((resolve) => setTimeout(resolve, timeouts.keepAliveMs * 2));
    // Counted as it comes, not joined at each chunk: joining 8 MiB again per chunk made enough
    // garbage for a collection pause in a full test run to pass the 1.5 s idle limit.
    let head: Buffer = Buffer.alloc(0);
    let bodyStart = -1;
    let bytes = 0;
    const expected = 8 * 1024 * 1024 + 2;
    await new Promise<void>((resolve, reject) => {
      socket.on("data", (chunk: Buffer) => {
        if (bodyStart < 0) {
          head = Buffer.concat([head, chunk]);
          const end = head.indexOf("\r\n\r\n");
          if (end >= 0) bodyStart = end + 4;
        }
        bytes += chunk.length;
        if (bodyStart >= 0 && bytes - bodyStart >= expected) resolve();
      });
      socket.on("close", () => reject(new Error(`closed after ${bytes} bytes`)));
      socket.resume();
    });
    socket.destroy();
  });

  it("hands the connection over at a request that is not plain", async () => {
    const before = handedOff.length;
    await exchange(url, [post("1") + "GET / HTTP/1.1\r\nHost: a\r\n\r\n"], 2);
    expect(handedOff.length).to.equal(before + 1);
  });

  it("hands the connection over at a Host it does not answer, without answering it", async () => {
    const before = handedOff.length;
    const refusedHost = post("2").replace("Host: a", "Host: refused.test");
    const { answers } = await exchange(url, [post("1") + refusedHost], "close");
    expect(answers.map((answer) => answer.body)).to.deep.equal(["1"]);
    expect(handedOff.length).to.equal(before + 1);
  });
});
