// Bounded work per request (issue 34): nesting and size of the body before it is parsed, storage
// keys of eth_getProof, state-override accounts and slots, each at N and N+1; a refused body read
// to its end so that node:http clients receive the 413; a second Host header answered 400.
import { request as httpRequest } from "node:http";
import { expect } from "chai";
import { postJson, postRaw } from "../../helpers/http.js";
import { exchange } from "../../helpers/rawHttp.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

type Answer = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

/** A request whose params hold `depth - 2` nested arrays: the body nests `depth` levels. */
function nestedRequest(depth: number): string {
  return `{"jsonrpc":"2.0","id":1,"method":"web3_clientVersion","params":[${"[".repeat(depth - 2)}${"]".repeat(depth - 2)}]}`;
}

/** A request of exactly `values` array elements and object members (4 members, params' one element, `values - 5` numbers). */
function requestOfValues(values: number): string {
  return `{"jsonrpc":"2.0","id":1,"method":"web3_clientVersion","params":[[${Array.from({ length: values - 5 }, () => "0").join(",")}]]}`;
}

const word = (value: number) => `0x${value.toString(16).padStart(64, "0")}`;
const account = (index: number) => `0x${(index + 1).toString(16).padStart(40, "0")}`;

describe("bounded work per request", () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it("parses a body nested 128 levels and refuses 129 with -32600, unparsed", async () => {
    const atLimit = (await postRaw(node.url, nestedRequest(128))).json as Answer;
    expect(atLimit.id).to.equal(1);
    expect(atLimit.error?.message).to.not.match(/nested/);
    const over = (await postRaw(node.url, nestedRequest(129))).json as Answer;
    expect(over).to.deep.equal({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "invalid request: JSON nested deeper than 128 levels" } });
  });

  it("refuses 5 MB of nested brackets at once, and does not count brackets inside strings", async () => {
    const started = performance.now();
    const refused = (await postRaw(node.url, "[".repeat(5_000_000))).json as Answer;
    expect(refused.error).to.deep.equal({ code: -32600, message: "invalid request: JSON nested deeper than 128 levels" });
    expect(performance.now() - started, "a 5 MB refusal, loopback").to.be.below(5_000);
    const inString = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "web3_sha3", params: [`\\"[${"[".repeat(500)}`] });
    const answer = (await postRaw(node.url, inString)).json as Answer;
    expect(answer.id).to.equal(2);
    expect(answer.error?.code).to.equal(-32602);
  });

  it("parses 20,000 array elements and object members and refuses 20,001", async () => {
    const atLimit = (await postRaw(node.url, requestOfValues(20_000))).json as Answer;
    expect(atLimit.id).to.equal(1);
    expect(atLimit.error?.message).to.equal("too many arguments, want at most 0");
    const over = (await postRaw(node.url, requestOfValues(20_001))).json as Answer;
    expect(over).to.deep.equal({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "invalid request: more than 20000 array elements and object members" } });
  });

  it("proves 1,024 storage keys and refuses 1,025 with -32602", async () => {
    const proof = async (count: number) =>
      (await postJson(node.url, { jsonrpc: "2.0", id: 1, method: "eth_getProof", params: [account(0), Array.from({ length: count }, (_, index) => word(index)), "latest"] })).json as Answer;
    expect((await proof(1_024)).result).to.have.property("storageProof").with.length(1_024);
    expect((await proof(1_025)).error).to.deep.equal({ code: -32602, message: "invalid argument 1: 1025 storage keys, more than the limit of 1024" });
  });

  it("calls with 1,000 overridden accounts and 10,000 slots, and refuses one more of either with -32602", async () => {
    const call = async (accounts: number, slots: number) => {
      const overrides: Record<string, { balance: string; state?: Record<string, string>; stateDiff?: Record<string, string> }> = {};
      for (let index = 0; index < accounts; index++) overrides[account(index)] = { balance: "0x1" };
      // Slots in both kinds of field, on two accounts: the limit counts them all.
      const half = Math.floor(slots / 2);
      overrides[account(0)]!.state = Object.fromEntries(Array.from({ length: half }, (_, index) => [word(index), word(1)]));
      overrides[account(1)]!.stateDiff = Object.fromEntries(Array.from({ length: slots - half }, (_, index) => [word(index), word(2)]));
      return (await postJson(node.url, { jsonrpc: "2.0", id: 1, method: "eth_call", params: [{ to: account(0) }, "latest", overrides] })).json as Answer;
    };
    expect(await call(1_000, 10_000)).to.deep.include({ result: "0x" });
    expect((await call(1_001, 0)).error).to.deep.equal({ code: -32602, message: "invalid argument 2: the state override names 1001 accounts, more than the limit of 1000" });
    expect((await call(2, 10_001)).error).to.deep.equal({ code: -32602, message: "invalid argument 2: the state override sets 10001 storage slots, more than the limit of 10000" });
  });
});

describe("refusals a node:http client receives", () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ rpc: { bodyLimitBytes: 64 * 1024 } });
  });
  after(() => node.stop());

  /** Posts `body` with node:http, as ethers' and web3's Node transports do, and reads the answer. */
  function nodeHttpPost(body: Buffer): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(node.url, { method: "POST", headers: { "content-type": "application/json", "content-length": body.length }, timeout: 10_000 });
      request.on("response", (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
      });
      request.on("timeout", () => request.destroy(new Error("timed out")));
      request.on("error", reject);
      request.end(body);
    });
  }

  it("receives the 413 of an oversized body every time, not EPIPE or ECONNRESET", async () => {
    // 2 MiB against 64 KiB: the node refuses after the first 64 KiB while the client still writes.
    const body = Buffer.alloc(2 * 1024 * 1024, 0x20);
    for (let attempt = 0; attempt < 20; attempt++) {
      const answer = await nodeHttpPost(body);
      expect(answer.status, `attempt ${attempt}`).to.equal(413);
      expect(JSON.parse(answer.body)).to.deep.equal({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "request body larger than the limit of 65536 bytes" } });
    }
    expect(await node.client.eth_chainId()).to.equal("0x21");
  });

  it("answers a request with two Host headers 400, and runs nothing", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    const twoHosts = `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: rebinding.example\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const { answers, closed } = await exchange(node.url, [twoHosts], "close");
    expect(answers).to.have.length(1);
    expect(answers[0]!.statusLine).to.equal("HTTP/1.1 400 Bad Request");
    expect(JSON.parse(answers[0]!.body)).to.deep.equal({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "more than one Host header" } });
    expect(closed).to.equal(true);
    const oneHost = `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const served = await exchange(node.url, [oneHost], 1);
    expect(JSON.parse(served.answers[0]!.body)).to.deep.equal({ jsonrpc: "2.0", id: 1, result: "0x21" });
  });
});
