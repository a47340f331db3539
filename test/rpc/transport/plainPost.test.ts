// The plain POST path (src/rpc/plainPostConnections.ts) and its hand-over to node:http, seen from a
// raw socket: exact bytes in, exact answers out.
import { expect } from "chai";
import { exchange, type RawAnswer } from "../../helpers/rawHttp.js";
import { startServerWithHandlers } from "../../helpers/testNode.js";

type Server = Awaited<ReturnType<typeof startServerWithHandlers>>;

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

  it("is in use: node:http's connection handling could be taken over", () => {
    expect(server.logs.filter((record) => String(record.msg).includes("every request goes through node:http"))).to.deep.equal([]);
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
    const textPlain = await exchange(server.url, [`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}`], 1);
    expect(textPlain.answers[0]!.statusLine).to.equal("HTTP/1.1 415 Unsupported Media Type");
  });

  it("never reads a request two ways: ambiguous lengths and malformed lines get node:http's 400", async () => {
    const body = chainId(1);
    const malformed = [
      `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\nContent-Length: 5\r\n\r\n${body}`,
      `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: +${body.length}\r\n\r\n${body}`,
      `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length : ${body.length}\r\n\r\n${body}`,
      `POST / HTTP/1.1\r\nHost: localhost\r\n Content-Length: ${body.length}\r\n\r\n${body}`,
      `POST / HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      `POST / HTTP/1.1\r\nHost: localhost\r\nX-Bad: a\rb\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      // llhttp takes spaces after the digits, not a tab.
      `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\t\r\n\r\n${body}`,
    ];
    for (const request of malformed) {
      const { answers, closed } = await exchange(server.url, [request + post(chainId(2))], 2);
      expect(answers[0]?.statusLine, JSON.stringify(request)).to.equal("HTTP/1.1 400 Bad Request");
      expect(answers, JSON.stringify(request)).to.have.length(1);
      expect(closed, JSON.stringify(request)).to.equal(true);
    }
  });

  it("lets node:http close after the answer when asked to (HTTP/1.0, Connection: close)", async () => {
    for (const header of ["Connection: close", "Proxy-Connection: close"]) {
      const closing = await exchange(server.url, [post(chainId(1), `${header}\r\n`)], 2);
      expect(idsAndResults(closing.answers), header).to.deep.equal([{ jsonrpc: "2.0", id: 1, result: "0x21" }]);
      expect(closing.closed, header).to.equal(true);
    }
    const oldVersion = await exchange(server.url, [post(chainId(2)).replace("HTTP/1.1", "HTTP/1.0")], 2);
    expect(idsAndResults(oldVersion.answers)).to.deep.equal([{ jsonrpc: "2.0", id: 2, result: "0x21" }]);
    expect(oldVersion.closed).to.equal(true);
  });

  it("answers what was sent before the client closed its side, then closes", async () => {
    const answers = await afterClientEnd([post(slowHash(1)) + post(chainId(2))]);
    expect(idsAndResults(answers)).to.deep.equal([
      { jsonrpc: "2.0", id: 1, result: zeroHash },
      { jsonrpc: "2.0", id: 2, result: "0x21" },
    ]);
  });

  it("finishes the answers written when a request after the client's end is not plain", async () => {
    // The second piece comes while the first answer is awaited, then the client ends its side:
    // node:http can no longer take the connection, so the GET stays unanswered.
    const answers = await afterClientEnd([post(slowHash(1)), post(slowHash(2)) + "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"]);
    expect(idsAndResults(answers)).to.deep.equal([
      { jsonrpc: "2.0", id: 1, result: zeroHash },
      { jsonrpc: "2.0", id: 2, result: zeroHash },
    ]);
  });

  it("writes a large answer whole when the client ends its side before reading it", async () => {
    // The answer backs up in the socket (the client reads only after its end), so the path pauses
    // with a GET unread; once the answer drains, node:http can no longer take the connection.
    const large = await startServerWithHandlers({ web3_clientVersion: () => "x".repeat(16 * 1024 * 1024) }, { rpc: { responseLimitBytes: 64 * 1024 * 1024 } });
    try {
      const clientVersion = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "web3_clientVersion", params: [] });
      const answers = await afterClientEnd([post(clientVersion) + "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n" + post(chainId(2))], large.url, 300);
      expect(answers.map((answer) => answer.statusLine)).to.deep.equal(["HTTP/1.1 200 OK"]);
      expect((JSON.parse(answers[0]!.body) as { result: string }).result).to.have.length(16 * 1024 * 1024);
    } finally {
      await large.stop();
    }
  });

  it("answers 400 to a request cut short by the client's end", async () => {
    const answers = await afterClientEnd([post(chainId(1)) + post(chainId(2)).slice(0, 40)]);
    expect(answers.map((answer) => answer.statusLine)).to.deep.equal(["HTTP/1.1 200 OK", "HTTP/1.1 400 Bad Request"]);
  });

  /** Writes `pieces` 30 ms apart, ends the client's side with the last, and reads until the server closes. */
  async function afterClientEnd(pieces: readonly string[], url = server.url, readAfterMs?: number): Promise<RawAnswer[]> {
    const { answers, closed } = await exchange(url, pieces, "close", { endAfterLast: true, readAfterMs, timeoutMs: 5_000 });
    expect(closed, "the server closed the connection").to.equal(true);
    return answers;
  }
});
