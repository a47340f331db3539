// The plain POST path (src/rpc/plainPostConnections.ts) and its hand-over to node:http, seen from a
// raw socket: exact bytes in, exact answers out.
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { startServerWithHandlers } from "../../helpers/testNode.js";

interface RawAnswer {
  statusLine: string;
  headers: [string, string][];
  body: string;
}

type Server = Awaited<ReturnType<typeof startServerWithHandlers>>;

/** Splits a byte stream into HTTP/1.1 answers (bodies with a Content-Length, chunked, or none). */
function parseAnswers(bytes: Buffer): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const headerEnd = bytes.indexOf("\r\n\r\n", offset);
    if (headerEnd < 0) throw new Error(`an answer cut short: ${JSON.stringify(bytes.subarray(offset).toString("latin1"))}`);
    const [statusLine, ...lines] = bytes.subarray(offset, headerEnd).toString("latin1").split("\r\n");
    const headers = lines.map((line): [string, string] => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]);
    const header = (wanted: string) => headers.find(([name]) => name.toLowerCase() === wanted)?.[1];
    offset = headerEnd + 4;
    if (header("transfer-encoding") === "chunked") {
      const chunks: Buffer[] = [];
      for (;;) {
        const sizeEnd = bytes.indexOf("\r\n", offset);
        if (sizeEnd < 0) throw new Error("a chunked answer cut short");
        const size = Number.parseInt(bytes.subarray(offset, sizeEnd).toString("latin1"), 16);
        chunks.push(bytes.subarray(sizeEnd + 2, sizeEnd + 2 + size));
        offset = sizeEnd + 2 + size + 2;
        if (size === 0) break;
      }
      answers.push({ statusLine: statusLine!, headers, body: Buffer.concat(chunks).toString("utf8") });
      continue;
    }
    const length = Number(header("content-length") ?? 0);
    answers.push({ statusLine: statusLine!, headers, body: bytes.subarray(offset, offset + length).toString("utf8") });
    offset += length;
  }
  return answers;
}

/**
 * Writes `pieces` on one connection (with a pause between them), then reads until `answerCount`
 * answers arrived or the server closed the connection. `closed` tells which.
 */
async function exchange(url: string, pieces: readonly (string | Buffer)[], answerCount: number): Promise<{ answers: RawAnswer[]; closed: boolean }> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), noDelay: true });
  const received: Buffer[] = [];
  let closed = false;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${answerCount} answers in time: ${Buffer.concat(received).toString("latin1")}`)), 10_000);
    const check = () => {
      try {
        if (closed || parseAnswers(Buffer.concat(received)).length >= answerCount) {
          clearTimeout(timer);
          resolve();
        }
      } catch {
        // An answer still arriving.
      }
    };
    socket.on("data", (chunk: Buffer) => {
      received.push(chunk);
      check();
    });
    socket.on("close", () => {
      closed = true;
      check();
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  for (const [index, piece] of pieces.entries()) {
    if (index > 0) await sleep(30);
    socket.write(piece);
  }
  await done;
  socket.destroy();
  return { answers: parseAnswers(Buffer.concat(received)), closed };
}

function post(body: string, extraHeaders = ""): string {
  return `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extraHeaders}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const chainId = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "eth_chainId", params: [] });
const slowHash = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "web3_sha3", params: ["0x"] });
const zeroHash = `0x${"00".repeat(32)}`;

function idsAndResults(answers: readonly RawAnswer[]): unknown[] {
  return answers.map((answer) => (answer.body === "" ? answer.statusLine : (JSON.parse(answer.body) as { id: unknown; result?: unknown; error?: unknown })));
}

describe("the plain POST path", () => {
  let server: Server;
  before(async () => {
    server = await startServerWithHandlers(
      // An answer that is awaited, so later requests on the connection must wait for it.
      { web3_sha3: () => new Promise((resolve) => setTimeout(() => resolve(zeroHash), 80)) },
      { rpc: { bodyLimitBytes: 1024 } },
    );
  });
  after(() => server.stop());

  it("answers the requests of one connection in their order, also those sent while an answer is awaited", async () => {
    const notification = JSON.stringify({ jsonrpc: "2.0", method: "eth_chainId", params: [] });
    // The second piece arrives while the first answer is awaited.
    const { answers } = await exchange(server.url, [post(slowHash(1)), post(chainId(2)) + post(slowHash(3)) + post(notification) + post(chainId(5))], 5);
    expect(idsAndResults(answers)).to.deep.equal([
      { jsonrpc: "2.0", id: 1, result: zeroHash },
      { jsonrpc: "2.0", id: 2, result: "0x21" },
      { jsonrpc: "2.0", id: 3, result: zeroHash },
      "HTTP/1.1 204 No Content",
      { jsonrpc: "2.0", id: 5, result: "0x21" },
    ]);
  });

  it("reads a request that arrives in pieces: inside the request line, the headers and the body", async () => {
    const request = post(chainId(7));
    const bodyStart = request.indexOf("\r\n\r\n") + 4;
    const { answers } = await exchange(server.url, [request.slice(0, 6), request.slice(6, 30), request.slice(30, bodyStart - 1), request.slice(bodyStart - 1, bodyStart + 5), request.slice(bodyStart + 5)], 1);
    expect(idsAndResults(answers)).to.deep.equal([{ jsonrpc: "2.0", id: 7, result: "0x21" }]);
  });

  it("reads a multi-byte UTF-8 body split inside a character", async () => {
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: "ü€", method: "eth_chainId", params: [] }));
    const head = Buffer.from(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\n\r\n`);
    const split = body.indexOf(Buffer.from("€")) + 1;
    const { answers } = await exchange(server.url, [Buffer.concat([head, body.subarray(0, split)]), body.subarray(split)], 1);
    expect(idsAndResults(answers)).to.deep.equal([{ jsonrpc: "2.0", id: "ü€", result: "0x21" }]);
  });

  it("writes the same status line and headers as node:http", async () => {
    // The second request is chunked, so node:http answers it.
    const body = chainId(1);
    const chunked = `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const { answers } = await exchange(server.url, [post(body) + chunked], 2);
    const [plain, nodeHttp] = answers.map((answer) => ({ ...answer, headers: answer.headers.map(([name, value]) => [name, name === "Date" ? "(a date)" : value]) }));
    expect(plain).to.deep.equal(nodeHttp);
    expect(answers[0]!.headers.find(([name]) => name === "Date")?.[1]).to.match(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  });

  it("hands a connection to node:http at its first other request and keeps answering in order", async () => {
    const get = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    const fromBrowser = post(chainId(3), "Origin: https://example.com\r\n");
    const { answers } = await exchange(server.url, [post(chainId(1)) + get + post(chainId(2)), fromBrowser + post(slowHash(4))], 5);
    expect(answers.map((answer) => answer.statusLine)).to.deep.equal(["HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 403 Forbidden", "HTTP/1.1 200 OK"]);
    expect(idsAndResults([answers[0]!, answers[2]!, answers[4]!])).to.deep.equal([
      { jsonrpc: "2.0", id: 1, result: "0x21" },
      { jsonrpc: "2.0", id: 2, result: "0x21" },
      { jsonrpc: "2.0", id: 4, result: zeroHash },
    ]);
    expect(answers[1]!.body).to.equal("");
  });

  it("leaves oversized bodies, refused content types and Expect to node:http's answers", async () => {
    const oversized = await exchange(server.url, [post(" ".repeat(1025))], 1);
    expect(oversized.answers[0]!.statusLine).to.equal("HTTP/1.1 413 Payload Too Large");
    const textPlain = await exchange(server.url, [`POST / HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}`], 1);
    expect(textPlain.answers[0]!.statusLine).to.equal("HTTP/1.1 415 Unsupported Media Type");
  });

  it("never reads a request two ways: ambiguous lengths and malformed lines get node:http's 400", async () => {
    const body = chainId(1);
    const malformed = [
      `POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\nContent-Length: 5\r\n\r\n${body}`,
      `POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      `POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +${body.length}\r\n\r\n${body}`,
      `POST / HTTP/1.1\r\nHost: a\r\nContent-Length : ${body.length}\r\n\r\n${body}`,
      `POST / HTTP/1.1\r\nHost: a\r\n Content-Length: ${body.length}\r\n\r\n${body}`,
      `POST / HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      `POST / HTTP/1.1\r\nHost: a\r\nX-Bad: a\rb\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    ];
    for (const request of malformed) {
      const { answers, closed } = await exchange(server.url, [request + post(chainId(2))], 2);
      expect(answers[0]?.statusLine, JSON.stringify(request)).to.equal("HTTP/1.1 400 Bad Request");
      expect(answers, JSON.stringify(request)).to.have.length(1);
      expect(closed, JSON.stringify(request)).to.equal(true);
    }
  });

  it("lets node:http close after the answer when asked to (HTTP/1.0, Connection: close)", async () => {
    const closing = await exchange(server.url, [post(chainId(1), "Connection: close\r\n")], 2);
    expect(idsAndResults(closing.answers)).to.deep.equal([{ jsonrpc: "2.0", id: 1, result: "0x21" }]);
    expect(closing.closed).to.equal(true);
    const oldVersion = await exchange(server.url, [post(chainId(2)).replace("HTTP/1.1", "HTTP/1.0")], 2);
    expect(idsAndResults(oldVersion.answers)).to.deep.equal([{ jsonrpc: "2.0", id: 2, result: "0x21" }]);
    expect(oldVersion.closed).to.equal(true);
  });

  it("answers what was sent before the client closed its side, then closes", async () => {
    const { hostname, port } = new URL(server.url);
    const socket = connect({ host: hostname, port: Number(port) });
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    socket.end(post(slowHash(1)) + post(chainId(2)));
    await new Promise<void>((resolve, reject) => {
      socket.once("close", () => resolve());
      setTimeout(() => reject(new Error("the connection stayed open")), 5_000);
    });
    expect(idsAndResults(parseAnswers(Buffer.concat(received)))).to.deep.equal([
      { jsonrpc: "2.0", id: 1, result: zeroHash },
      { jsonrpc: "2.0", id: 2, result: "0x21" },
    ]);
  });
});
