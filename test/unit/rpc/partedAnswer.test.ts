// Long answers in parts: the dispatcher gives them for a request that came alone, with the same
// text a batch gets, and the plain POST path writes them a piece per turn, in request order.
import { createServer, type Server } from "node:net";
import { expect } from "chai";
import { rpcMethodTable } from "../../../generated/methodTable.js";
import { createLogger } from "../../../src/common/logger.js";
import { createDispatcher, EncodedJson, type Answer, type RpcHandlerSet } from "../../../src/rpc/dispatch.js";
import { PartedAnswer, writeInTurns } from "../../../src/rpc/partedAnswer.js";
import { PlainPostConnections } from "../../../src/rpc/plainPostConnections.js";
import { countEventLoopTurns } from "../../helpers/eventLoopTurns.js";
import { exchange } from "../../helpers/rawHttp.js";

/** A result of about 1.2 million characters in 3,000 parts, one of them not ASCII. */
const resultParts = ['{"steps":[', ...Array.from({ length: 3_000 }, (_, index) => `${index === 0 ? "" : ","}"${"ab".repeat(200)}${index === 1_500 ? "é€" : ""}"`), "]}"];

/** eth_blockNumber answers the long result, web3_clientVersion a short one encoded the same way. */
function handlers(): RpcHandlerSet {
  const entries = [...rpcMethodTable.values()].filter((entry) => entry.implemented);
  return Object.fromEntries(
    entries.map((entry) => [entry.name, async () => (entry.name === "eth_blockNumber" ? new EncodedJson(resultParts) : new EncodedJson(['"short"']))]),
  ) as unknown as RpcHandlerSet;
}

function dispatcherWithLimit(responseLimitBytes: number) {
  return createDispatcher({
    handlers: handlers(),
    enabledModules: new Set(["eth", "web3"]),
    batchLimit: 10,
    responseLimitBytes,
    jsonShapeLimits: { maxDepth: 128, maxValues: 20_000 },
    discoverDocumentJson: "{}",
    log: createLogger("silent"),
  });
}

const request = (id: number, method: string) => JSON.stringify({ jsonrpc: "2.0", id, method, params: [] });
const expectedText = (id: number) => `{"jsonrpc":"2.0","id":${id},"result":${resultParts.join("")}}`;

describe("rpc/partedAnswer", () => {
  it("answers a long encoded result alone in parts, with the text and UTF-8 length a batch answer has", async () => {
    const dispatcher = dispatcherWithLimit(10 * 1024 * 1024);
    const alone = await dispatcher.handle(request(1, "eth_blockNumber"));
    expect(alone).to.be.instanceOf(PartedAnswer);
    const parted = alone as PartedAnswer;
    expect(parted.text()).to.equal(expectedText(1));
    expect(parted.byteLength).to.equal(Buffer.byteLength(expectedText(1)));
    expect(parted.byteLength).to.equal(parted.text().length + 3); // é two bytes, € three
    const batch = await dispatcher.handle(`[${request(1, "eth_blockNumber")},${request(2, "web3_clientVersion")}]`);
    expect(batch).to.equal(`[${expectedText(1)},{"jsonrpc":"2.0","id":2,"result":"short"}]`);
    expect(await dispatcher.handle(request(3, "web3_clientVersion"))).to.equal('{"jsonrpc":"2.0","id":3,"result":"short"}');
  });

  it("refuses a parted answer past the response limit by its UTF-8 length", async () => {
    const bytes = Buffer.byteLength(expectedText(1));
    // Its characters fit the limit, its bytes do not.
    const answer = (await dispatcherWithLimit(bytes - 1).handle(request(1, "eth_blockNumber"))) as Answer;
    expect(typeof answer).to.equal("string");
    expect(JSON.parse(answer as string)).to.have.nested.property("error.code", -32011);
    expect(await dispatcherWithLimit(bytes).handle(request(1, "eth_blockNumber"))).to.be.instanceOf(PartedAnswer);
  });

  it("writes the parts joined in pieces, a turn of the event loop between two, and stops once abandoned", async () => {
    const written: string[] = [];
    const sink = (into: string[]) => ({ write: (piece: string | Uint8Array) => into.push(piece as string) > 0, onDrain: () => expect.fail("the sink never fills") });
    const turnCounter = countEventLoopTurns();
    await new Promise<void>((resolve) => writeInTurns(new PartedAnswer(resultParts, Buffer.byteLength(resultParts.join(""))), sink(written), resolve, () => false));
    const turns = turnCounter.stop();
    expect(written.join("")).to.equal(resultParts.join(""));
    // About 1.2 million characters in pieces of at most 256 Ki characters (or one longer part).
    expect(written.length).to.be.within(5, 6);
    for (const piece of written) expect(piece.length).to.be.at.most(256 * 1024);
    expect(turns).to.be.at.least(written.length - 1);

    const cut: string[] = [];
    let done = false;
    writeInTurns(new PartedAnswer(resultParts, Buffer.byteLength(resultParts.join(""))), sink(cut), () => (done = true), () => cut.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cut).to.have.length(2);
    expect(done).to.equal(false);
  });

  describe("on the plain POST path", () => {
    let server: Server;
    let url: string;
    before(async () => {
      const dispatcher = dispatcherWithLimit(10 * 1024 * 1024);
      const connections = new PlainPostConnections({
        // "sync" answers the parted answer at once, as a synchronous handler's would come.
        dispatcher: { handle: (body) => (body === "sync" ? new PartedAnswer(resultParts, Buffer.byteLength(resultParts.join(""))) : dispatcher.handle(body)) },
        log: createLogger("silent"),
        bodyLimitBytes: 1024,
        refusedContentType: () => undefined,
        hostAllowed: () => true,
        handOff: (socket) => socket.destroy(),
        internalErrorBody: "{}",
        reportConnectionError: () => undefined,
        timeouts: { keepAliveMs: 5_000, headersMs: 5_000, requestMs: 5_000, idleMs: 5_000 },
      });
      server = createServer((socket) => connections.accept(socket));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const post = (body: string) => `POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

    it("writes it whole, with its length, before the next request's answer on the connection", async () => {
      // Three requests in one write: the short answer must wait for both long ones.
      const { answers } = await exchange(url, [post(request(1, "eth_blockNumber")) + post("sync") + post(request(2, "web3_clientVersion"))], 3);
      expect(answers.map((answer) => answer.body)).to.deep.equal([expectedText(1), resultParts.join(""), '{"jsonrpc":"2.0","id":2,"result":"short"}']);
      const lengthOf = (index: number) => answers[index]!.headers.find(([name]) => name === "content-length")![1];
      expect(lengthOf(0)).to.equal(String(Buffer.byteLength(expectedText(1))));
      expect(lengthOf(1)).to.equal(String(Buffer.byteLength(resultParts.join(""))));
    });
  });
});
