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

  it("answers an unbounded result alone in parts past the response limit, bytes and texts alike; in a batch or with bounded answers it is refused", async () => {
    const bytesPart = Buffer.from('"' + "cd".repeat(3_000) + '"', "latin1");
    const parts = ["[", bytesPart, ",", '"x"', "]"];
    const text = `[${bytesPart.toString("latin1")},"x"]`;
    const seen: (boolean | undefined)[] = [];
    const dispatcher = createDispatcher({
      handlers: Object.fromEntries(
        [...rpcMethodTable.values()].filter((entry) => entry.implemented).map((entry) => [entry.name, async (_params: unknown, context: { boundedAnswer?: boolean }) => {
          seen.push(context.boundedAnswer);
          return new EncodedJson(parts, true);
        }]),
      ) as unknown as RpcHandlerSet,
      enabledModules: new Set(["eth"]),
      batchLimit: 10,
      responseLimitBytes: 1_000,
      jsonShapeLimits: { maxDepth: 128, maxValues: 20_000 },
      discoverDocumentJson: "{}",
      log: createLogger("silent"),
    });
    const alone = await dispatcher.handle(request(1, "eth_blockNumber"));
    expect(alone).to.be.instanceOf(PartedAnswer);
    const answerText = `{"jsonrpc":"2.0","id":1,"result":${text}}`;
    expect((alone as PartedAnswer).byteLength).to.equal(answerText.length);
    const written: (string | Uint8Array)[] = [];
    await new Promise<void>((resolve) => writeInTurns(alone as PartedAnswer, { write: (piece) => written.push(piece) > 0, onDrain: () => expect.fail("never full") }, resolve, () => false));
    expect(written.map((piece) => (typeof piece === "string" ? piece : Buffer.from(piece).toString("latin1"))).join("")).to.equal(answerText);
    // The part in bytes goes out as it is, not copied into a text.
    expect(written).to.include(bytesPart);
    const batch = JSON.parse((await dispatcher.handle(`[${request(2, "eth_blockNumber")}]`)) as string) as { error: { code: number } }[];
    expect(batch[0]!.error.code).to.equal(-32011);
    const bounded = JSON.parse((await dispatcher.handle(request(3, "eth_blockNumber"), undefined, true)) as string) as { error: { code: number } };
    expect(bounded.error.code).to.equal(-32011);
    expect(seen).to.deep.equal([undefined, true, true]);
  });

  it("writes the next piece only once a full sink has drained", async () => {
    const pieces = Array.from({ length: 4 }, (_, index) => Buffer.alloc(1_000, 97 + index));
    const answer = new PartedAnswer(pieces, 4_000);
    const written: (string | Uint8Array)[] = [];
    let resumeWriting: (() => void) | undefined;
    let done = false;
    writeInTurns(answer, { write: (piece) => written.push(piece) % 2 === 0, onDrain: (resume) => (resumeWriting = resume) }, () => (done = true), () => false);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The first piece filled the sink: nothing more until it drains.
    expect(written).to.have.length(1);
    resumeWriting!();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(written).to.have.length(3);
    resumeWriting!();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(written).to.deep.equal(pieces);
    expect(done).to.equal(true);
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
