// HTTP rules: verbs, content types, body limit, CORS, Host names, module gate, and internal errors.
import { request as httpRequest } from "node:http";
import { expect } from "chai";
import { rpcNamespaces } from "../../../generated/methods.js";
import { postJson, postRaw } from "../../helpers/http.js";
import { exchange } from "../../helpers/rawHttp.js";
import { startServerWithHandlers, startTestNode, type TestNode } from "../../helpers/testNode.js";

const chainIdRequest = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });

describe("HTTP transport", () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ rpc: { bodyLimitBytes: 1024 } });
  });
  after(() => node.stop());

  it("accepts application/json, application/json-rpc, a charset, and no content type", async () => {
    for (const type of ["application/json", "application/json-rpc", "application/jsonrequest", "application/json; charset=utf-8", "Application/JSON"]) {
      const response = await postRaw(node.url, chainIdRequest, { "content-type": type });
      expect(response.status, type).to.equal(200);
      expect(response.json, type).to.deep.include({ result: "0x21" });
    }
    const untyped = await fetch(node.url, { method: "POST", body: new Blob([chainIdRequest]) });
    expect(untyped.status).to.equal(200);
  });

  it("refuses other content types with 415 and a JSON-RPC error body", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      const response = await postRaw(node.url, chainIdRequest, { "content-type": type });
      expect(response.status, type).to.equal(415);
      expect(response.json, type).to.deep.equal({ jsonrpc: "2.0", id: null, error: { code: -32600, message: `content type ${type} is not accepted: use application/json` } });
    }
  });

  it("answers GET with 200 as a health check, and refuses other verbs with 405", async () => {
    expect((await postRaw(node.url, "", {}, "GET")).status).to.equal(200);
    for (const verb of ["PUT", "DELETE", "PATCH"]) {
      const response = await postRaw(node.url, chainIdRequest, { "content-type": "application/json" }, verb);
      expect(response.status, verb).to.equal(405);
      expect(response.headers.get("allow")).to.equal("POST, GET, OPTIONS");
      expect((response.json as { error: { code: number } }).error.code, verb).to.equal(-32600);
    }
  });

  it("serves a body at the limit and refuses one byte more with 413 and a clear error", async () => {
    const request = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "web3_sha3", params: ["0x"] });
    const atLimit = request + " ".repeat(1024 - request.length);
    expect((await postRaw(node.url, atLimit)).json).to.deep.include({ id: 1 });
    const overLimit = await postRaw(node.url, `${atLimit} `);
    expect(overLimit.status).to.equal(413);
    expect(overLimit.json).to.deep.equal({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "request body larger than the limit of 1024 bytes" } });
  });

  it("refuses an oversized chunked body without a declared length", async () => {
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let index = 0; index < 8; index++) controller.enqueue(new TextEncoder().encode(" ".repeat(512)));
        controller.close();
      },
    });
    const response = await fetch(node.url, { method: "POST", headers: { "content-type": "application/json" }, body: chunks, duplex: "half" } as RequestInit);
    expect(response.status).to.equal(413);
    expect(((await response.json()) as { error: { message: string } }).error.message).to.match(/larger than the limit/);
  });

  it("keeps serving after refusing an oversized body (the refused connection is closed)", async () => {
    const refused = await postRaw(node.url, " ".repeat(2048));
    expect(refused.headers.get("connection")).to.equal("close");
    expect(await node.client.eth_chainId()).to.equal("0x21");
  });

  it("allows no cross-origin caller by default", async () => {
    const response = await postRaw(node.url, chainIdRequest, { "content-type": "application/json", origin: "http://evil.test" });
    expect(response.status).to.equal(403);
    expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "origin http://evil.test is not allowed (see --cors)" } });
    const plain = await postRaw(node.url, chainIdRequest);
    expect(plain.headers.get("access-control-allow-origin")).to.equal(null);
  });
});

describe("CORS with configured origins", () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ rpc: { corsOrigins: ["http://app.test"] } });
  });
  after(() => node.stop());

  it("answers a preflight and the call from an allowed origin", async () => {
    const preflight = await fetch(node.url, {
      method: "OPTIONS",
      headers: { origin: "http://app.test", "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get("access-control-allow-origin")).to.equal("http://app.test");
    expect(preflight.headers.get("access-control-allow-methods")).to.include("POST");
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).to.include("content-type");
    const call = await postRaw(node.url, chainIdRequest, { "content-type": "application/json", origin: "http://app.test" });
    expect(call.status).to.equal(200);
    expect(call.headers.get("access-control-allow-origin")).to.equal("http://app.test");
  });

  it("still refuses other origins", async () => {
    const response = await postRaw(node.url, chainIdRequest, { "content-type": "application/json", origin: "http://other.test" });
    expect(response.status).to.equal(403);
  });
});

describe("default limits", () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it("serves a batch of 100 and refuses 101", async () => {
    const batch = (size: number) => Array.from({ length: size }, (_, index) => ({ jsonrpc: "2.0", id: index, method: "eth_chainId", params: [] }));
    expect((await postJson(node.url, batch(100))).json).to.have.length(100);
    const refused = (await postJson(node.url, batch(101))).json as { error: { message: string } }[];
    expect(refused).to.have.length(1);
    expect(refused[0]!.error.message).to.equal("invalid request: batch of 101 requests exceeds the limit of 100");
  });

  it("serves a body of 5 MiB and refuses one byte more", async () => {
    const request = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    const limit = 5 * 1024 * 1024;
    const atLimit = request + " ".repeat(limit - request.length);
    expect((await postRaw(node.url, atLimit)).json).to.deep.equal({ jsonrpc: "2.0", id: 1, result: "0x21" });
    const overLimit = await postRaw(node.url, `${atLimit} `);
    expect(overLimit.status).to.equal(413);
    expect((overLimit.json as { error: { message: string } }).error.message).to.equal(`request body larger than the limit of ${limit} bytes`);
  });
});

describe("CORS for any origin", () => {
  it("answers every origin with a wildcard when configured with *", async () => {
    const node = await startTestNode({ rpc: { corsOrigins: ["*"] } });
    try {
      const response = await postRaw(node.url, chainIdRequest, { "content-type": "application/json", origin: "http://anywhere.test" });
      expect(response.status).to.equal(200);
      expect(response.headers.get("access-control-allow-origin")).to.equal("*");
    } finally {
      await node.stop();
    }
  });
});

describe("module selection", () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ rpc: { modules: "eth,net" } });
  });
  after(() => node.stop());

  it("answers a disabled module's methods as not available, and keeps rpc.discover", async () => {
    const response = await postJson(node.url, { jsonrpc: "2.0", id: 1, method: "web3_sha3", params: ["0x"] });
    expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: "the method web3_sha3 does not exist/is not available" } });
    expect(await node.client.eth_chainId()).to.equal("0x21");
    expect((await node.client.rpcDiscover()).openrpc).to.be.a("string");
  });

  it("reports the enabled modules", () => {
    expect([...node.node.enabledModules].sort()).to.deep.equal(["eth", "net"]);
    expect(rpcNamespaces).to.include("web3");
  });
});

describe("work the node must not do", () => {
  let calls = 0;
  let server: Awaited<ReturnType<typeof startServerWithHandlers>>;
  const sha3 = (id?: number) => ({ jsonrpc: "2.0", ...(id === undefined ? {} : { id }), method: "web3_sha3", params: ["0x"] });
  before(async () => {
    server = await startServerWithHandlers(
      {
        web3_sha3: () => {
          calls++;
          return `0x${"00".repeat(32)}`;
        },
      },
      { rpc: { batchLimit: 3, responseLimitBytes: 300_000 } },
    );
  });
  after(() => server.stop());
  beforeEach(() => (calls = 0));

  it("runs none of a batch over the limit", async () => {
    await postJson(server.url, [sha3(1), sha3(2), sha3(3), sha3(4)]);
    expect(calls).to.equal(0);
  });

  it("runs notifications, alone and in a batch", async () => {
    expect((await postJson(server.url, sha3())).status).to.equal(204);
    expect((await postJson(server.url, [sha3(), sha3()])).status).to.equal(204);
    expect(calls).to.equal(3);
  });

  it("stops a batch at the response size limit: the rest answer -32011 and do not run", async () => {
    // rpc.discover answers about 190 KB: the second one passes the 300,000-byte limit.
    const discover = (id: number) => ({ jsonrpc: "2.0", id, method: "rpc.discover", params: [] });
    const response = await postJson(server.url, [discover(1), discover(2), sha3(3)]);
    const answers = response.json as { id: number; result?: unknown; error?: { code: number; message: string } }[];
    expect(answers.map((answer) => answer.id)).to.deep.equal([1, 2, 3]);
    expect(answers[0]!.result).to.be.an("object");
    const tooLarge = { code: -32011, message: "Response size limit of 300000 bytes exceeded" };
    expect(answers[1]!.error).to.deep.equal(tooLarge);
    expect(answers[2]!.error).to.deep.equal(tooLarge);
    expect(calls, "the call after the limit did not run").to.equal(0);
    expect(response.text.length).to.be.lessThan(300_000);
  });

  it("refuses a single answer over the limit", async () => {
    const tight = await startServerWithHandlers({}, { rpc: { responseLimitBytes: 1000 } });
    try {
      const response = await postJson(tight.url, { jsonrpc: "2.0", id: 1, method: "rpc.discover", params: [] });
      expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: 1, error: { code: -32011, message: "Response size limit of 1000 bytes exceeded" } });
    } finally {
      await tight.stop();
    }
  });

  it("counts an answer's size in UTF-8 bytes, not characters", async () => {
    // The answer's JSON text is 400 + 39 characters either way; "é" takes two bytes, "e" one.
    const answerOf = (letter: string) => startServerWithHandlers({ web3_clientVersion: () => letter.repeat(400) }, { rpc: { responseLimitBytes: 600 } });
    for (const [letter, fits] of [
      ["e", true],
      ["é", false],
    ] as const) {
      const tight = await answerOf(letter);
      try {
        const response = await postJson(tight.url, { jsonrpc: "2.0", id: 1, method: "web3_clientVersion", params: [] });
        if (fits) expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: 1, result: letter.repeat(400) });
        else expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: 1, error: { code: -32011, message: "Response size limit of 600 bytes exceeded" } });
      } finally {
        await tight.stop();
      }
    }
  });

  it("refuses an oversized body announced with Expect: 100-continue before the client sends it", async () => {
    const outcome = await new Promise<{ status: number; continued: boolean; body: string }>((resolve, reject) => {
      let continued = false;
      const request = httpRequest(server.url, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(6 * 1024 * 1024), expect: "100-continue" },
        timeout: 10_000,
      });
      request.on("continue", () => (continued = true));
      request.on("response", (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, continued, body }));
      });
      request.on("timeout", () => request.destroy(new Error("timed out")));
      request.on("error", reject);
      request.flushHeaders();
    });
    expect(outcome.status).to.equal(413);
    expect(outcome.continued, "no 100 Continue was sent").to.equal(false);
    expect(JSON.parse(outcome.body)).to.deep.equal({ jsonrpc: "2.0", id: null, error: { code: -32600, message: `request body larger than the limit of ${5 * 1024 * 1024} bytes` } });
  });

  it("lets a body within the limit through after 100 Continue", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(server.url, { method: "POST", headers: { "content-type": "application/json", "content-length": String(body.length), expect: "100-continue" }, timeout: 10_000 });
      request.on("continue", () => request.end(body));
      request.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on("timeout", () => request.destroy(new Error("timed out")));
      request.on("error", reject);
      request.flushHeaders();
    });
    expect(status).to.equal(200);
  });
});

describe("stopping", () => {
  it("lets a request in flight finish, then closes", async () => {
    let release!: () => void;
    const started = new Promise<void>((resolve) => (release = resolve));
    const server = await startServerWithHandlers({
      web3_sha3: () => {
        release();
        return new Promise((resolve) => setTimeout(() => resolve(`0x${"00".repeat(32)}`), 300));
      },
    });
    const inFlight = postJson(server.url, { jsonrpc: "2.0", id: 1, method: "web3_sha3", params: ["0x"] });
    await started;
    const stopped = server.stop();
    const response = await inFlight;
    expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: 1, result: `0x${"00".repeat(32)}` });
    await stopped;
    const afterStop = await postJson(server.url, { jsonrpc: "2.0", id: 2, method: "eth_chainId", params: [] }).catch((error: unknown) => error);
    expect(afterStop, "the port no longer answers").to.be.instanceOf(Error);
  });
});

describe("a failing handler", () => {
  it("answers -32603 Internal error without a stack trace, logs the stack, and keeps serving", async () => {
    const server = await startServerWithHandlers({
      web3_sha3: () => {
        throw new Error("secret detail of the failure");
      },
    });
    try {
      const response = await postJson(server.url, { jsonrpc: "2.0", id: 9, method: "web3_sha3", params: ["0x"] });
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: 9, error: { code: -32603, message: "Internal error" } });
      expect(response.text).to.not.include("secret detail");
      expect(response.text).to.not.match(/at .*\.js:\d+/);
      const logged = server.logs.find((record) => record.msg === "method handler failed") as { err?: { stack?: string }; method?: string };
      expect(logged?.method).to.equal("web3_sha3");
      expect(logged?.err?.stack).to.include("secret detail of the failure");
      const next = await postJson(server.url, { jsonrpc: "2.0", id: 10, method: "eth_chainId", params: [] });
      expect(next.json).to.deep.equal({ jsonrpc: "2.0", id: 10, result: "0x21" });
    } finally {
      await server.stop();
    }
  });
});

describe("Host header check (DNS rebinding)", () => {
  const request = (host: string, verb = "POST") =>
    verb === "POST"
      ? `POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${chainIdRequest.length}\r\n\r\n${chainIdRequest}`
      : `${verb} / HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
  const statuses = async (url: string, requests: string[]) => (await exchange(url, [requests.join("")], requests.length)).answers.map((answer) => answer.statusLine);

  it("answers localhost and IP literals by default, and refuses other names with 403", async () => {
    const node = await startTestNode();
    try {
      const port = new URL(node.url).port;
      const answered = [`localhost:${port}`, "LocalHost", "localhost.", `127.0.0.1:${port}`, "[::1]:8545", "10.1.2.3"];
      expect(await statuses(node.url, answered.map((host) => request(host)))).to.deep.equal(answered.map(() => "HTTP/1.1 200 OK"));
      const refused = await exchange(node.url, [request(`rebind.evil.test:${port}`)], 1);
      expect(refused.answers[0]!.statusLine).to.equal("HTTP/1.1 403 Forbidden");
      expect(JSON.parse(refused.answers[0]!.body)).to.deep.equal({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "invalid host specified: rebind.evil.test (names the node answers are set with --vhosts)" },
      });
      // The health check and a connection that started with an answered request are refused too.
      expect(await statuses(node.url, [request("localhost"), request("evil.test"), request("evil.test", "GET")])).to.deep.equal([
        "HTTP/1.1 200 OK",
        "HTTP/1.1 403 Forbidden",
        "HTTP/1.1 403 Forbidden",
      ]);
    } finally {
      await node.stop();
    }
  });

  it("answers the names --vhosts lists, or any name with *", async () => {
    const named = await startTestNode({ rpc: { allowedHosts: ["chain.test"] } });
    try {
      expect(await statuses(named.url, [request("chain.test:4444"), request("localhost"), request("127.0.0.1")])).to.deep.equal([
        "HTTP/1.1 200 OK",
        "HTTP/1.1 403 Forbidden",
        "HTTP/1.1 200 OK",
      ]);
    } finally {
      await named.stop();
    }
    const any = await startTestNode({ rpc: { allowedHosts: ["*"] } });
    try {
      expect(await statuses(any.url, [request("anything.test"), request("localhost")])).to.deep.equal(["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"]);
    } finally {
      await any.stop();
    }
  });
});
