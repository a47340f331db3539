// HTTP rules: verbs, content types, body limit, CORS, module gate, and internal errors.
import { expect } from "chai";
import { createDispatcher, createHandlers, createRpcServer, defaultRpcOptions } from "../../../src/rpc/index.js";
import { createLogger } from "../../../src/common/logger.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { createStandaloneNetwork } from "../../../src/p2p/index.js";
import { openRpcDocumentJson } from "../../../generated/discover.js";
import { rpcNamespaces } from "../../../generated/methods.js";
import { postJson, postRaw } from "../../helpers/http.js";
import { createLogCapture, startTestNode, type TestNode } from "../../helpers/testNode.js";

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

  it("keeps serving the same client after refusals", async () => {
    await postRaw(node.url, " ".repeat(2048));
    expect((await node.client.eth_chainId())).to.equal("0x21");
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

describe("a failing handler", () => {
  it("answers -32603 Internal error without a stack trace, logs the stack, and keeps serving", async () => {
    const capture = createLogCapture();
    const log = createLogger("info", capture.stream);
    const handlers = {
      ...createHandlers({ clientVersion: "test", network: findNetworkProfile(33)!, peers: createStandaloneNetwork() }),
      web3_sha3: () => {
        throw new Error("secret detail of the failure");
      },
    };
    const dispatcher = createDispatcher({ handlers, enabledModules: new Set(rpcNamespaces), batchLimit: 10, discoverDocumentJson: openRpcDocumentJson, log });
    const server = createRpcServer({ ...defaultRpcOptions, port: 0 }, dispatcher, log);
    const address = await server.start();
    const url = `http://127.0.0.1:${address.port}`;
    try {
      const response = await postJson(url, { jsonrpc: "2.0", id: 9, method: "web3_sha3", params: ["0x"] });
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: 9, error: { code: -32603, message: "Internal error" } });
      expect(response.text).to.not.include("secret detail");
      expect(response.text).to.not.match(/at .*\.js:\d+/);
      const logged = capture.records.find((record) => record.msg === "method handler failed") as { err?: { stack?: string }; method?: string };
      expect(logged?.method).to.equal("web3_sha3");
      expect(logged?.err?.stack).to.include("secret detail of the failure");
      const next = await postJson(url, { jsonrpc: "2.0", id: 10, method: "eth_chainId", params: [] });
      expect(next.json).to.deep.equal({ jsonrpc: "2.0", id: 10, result: "0x21" });
    } finally {
      await server.stop();
    }
  });
});
