// JSON-RPC 2.0 envelope, batch and notification rules, each through a real HTTP socket.
import { expect } from "chai";
import { rpcMethodTable } from "../../../generated/methodTable.js";
import { postJson, postRaw } from "../../helpers/http.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

interface ErrorResponse {
  jsonrpc: string;
  id: unknown;
  error: { code: number; message: string; data?: unknown };
}

const address = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";

describe("JSON-RPC 2.0 transport", () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ rpc: { batchLimit: 3 } });
  });
  after(() => node.stop());

  const envelopeCases: { name: string; body: string; code: number; id: unknown; message?: RegExp }[] = [
    { name: "truncated JSON is a parse error", body: '{"jsonrpc":"2.0","id":1,', code: -32700, id: null, message: /^parse error/ },
    { name: "text that is not JSON is a parse error", body: "'f", code: -32700, id: null },
    { name: "an empty body is a parse error", body: "", code: -32700, id: null },
    { name: "a bare number is an invalid request", body: "1", code: -32600, id: null, message: /expected a JSON object/ },
    { name: "a bare string is an invalid request", body: '"eth_chainId"', code: -32600, id: null },
    { name: "null is an invalid request", body: "null", code: -32600, id: null },
    { name: "a missing jsonrpc member is an invalid request, id echoed", body: '{"id":7,"method":"eth_chainId","params":[]}', code: -32600, id: 7, message: /"jsonrpc" must be exactly "2.0"/ },
    { name: 'jsonrpc "1.0" is an invalid request', body: '{"jsonrpc":"1.0","id":7,"method":"eth_chainId"}', code: -32600, id: 7 },
    { name: "jsonrpc as the number 2.0 is an invalid request", body: '{"jsonrpc":2.0,"id":7,"method":"eth_chainId"}', code: -32600, id: 7 },
    { name: "a missing method is an invalid request", body: '{"jsonrpc":"2.0","id":7}', code: -32600, id: 7, message: /"method" must be a string/ },
    { name: "a method that is not a string is an invalid request", body: '{"jsonrpc":"2.0","id":7,"method":1}', code: -32600, id: 7 },
    { name: "an object id is an invalid request answered with id null", body: '{"jsonrpc":"2.0","id":{},"method":"eth_chainId"}', code: -32600, id: null, message: /"id" must be/ },
    { name: "an array id is an invalid request answered with id null", body: '{"jsonrpc":"2.0","id":[1],"method":"eth_chainId"}', code: -32600, id: null },
    { name: "a boolean id is an invalid request answered with id null", body: '{"jsonrpc":"2.0","id":true,"method":"eth_chainId"}', code: -32600, id: null },
    { name: "primitive params are an invalid request", body: '{"jsonrpc":"2.0","id":7,"method":"web3_sha3","params":"0x1"}', code: -32600, id: 7, message: /"params" must be an array/ },
    { name: "named params are invalid params", body: '{"jsonrpc":"2.0","id":7,"method":"web3_sha3","params":{"data":"0x"}}', code: -32602, id: 7, message: /named parameters are not supported/ },
    { name: "an unknown method is method-not-found", body: '{"jsonrpc":"2.0","id":7,"method":"foo_bar","params":[]}', code: -32601, id: 7, message: /^the method foo_bar does not exist\/is not available$/ },
    { name: "a prototype key is method-not-found", body: '{"jsonrpc":"2.0","id":7,"method":"__proto__","params":[]}', code: -32601, id: 7 },
    { name: "a method name over 2048 characters is an invalid request", body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "x".repeat(100_000) }), code: -32600, id: 7, message: /^invalid request: method name longer than 2048 characters$/ },
    { name: "a long unknown method name is not echoed in full", body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "x".repeat(2048) }), code: -32601, id: 7, message: /^the method x{64}\.\.\. does not exist/ },
    { name: "a numeric id beyond 2^53 is an invalid request (it could not be echoed exactly)", body: '{"jsonrpc":"2.0","id":9007199254740993,"method":"eth_chainId"}', code: -32600, id: null, message: /use a string id/ },
    { name: "primitive params in a notification are still answered as an invalid request", body: '{"jsonrpc":"2.0","method":"eth_chainId","params":"x"}', code: -32600, id: null, message: /"params" must be an array/ },
    { name: "an empty batch is one invalid-request error", body: "[]", code: -32600, id: null, message: /empty batch/ },
    { name: "deep nesting is refused before it is parsed (--rpc-json-depth-limit)", body: "[".repeat(100_000), code: -32600, id: null },
  ];

  for (const testCase of envelopeCases) {
    it(testCase.name, async () => {
      const response = await postRaw(node.url, testCase.body);
      expect(response.status, "JSON-RPC errors travel with HTTP 200").to.equal(200);
      expect(response.headers.get("content-type")).to.match(/^application\/json/);
      const body = response.json as ErrorResponse;
      expect(body, "a single error object, not an array").to.not.be.an("array");
      expect(body.jsonrpc).to.equal("2.0");
      expect(body.id).to.deep.equal(testCase.id);
      expect(body.error.code).to.equal(testCase.code);
      expect(body.error).to.not.have.property("data");
      expect(body).to.not.have.property("result");
      if (testCase.message) expect(body.error.message).to.match(testCase.message);
    });
  }

  it("echoes string, null and fractional ids unchanged", async () => {
    for (const id of ["abc", null, 1.5, 0, -3]) {
      const response = await postJson(node.url, { jsonrpc: "2.0", id, method: "eth_chainId", params: [] });
      expect(response.json, `id ${JSON.stringify(id)}`).to.deep.equal({ jsonrpc: "2.0", id, result: "0x21" });
    }
  });

  it("treats omitted or null params as an empty list", async () => {
    const response = await postJson(node.url, { jsonrpc: "2.0", id: 1, method: "eth_chainId" });
    expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: 1, result: "0x21" });
    const nullParams = await postJson(node.url, { jsonrpc: "2.0", id: 2, method: "eth_chainId", params: null });
    expect(nullParams.json).to.deep.equal({ jsonrpc: "2.0", id: 2, result: "0x21" });
  });

  it("echoes the largest exact integer id", async () => {
    const response = await postRaw(node.url, '{"jsonrpc":"2.0","id":9007199254740991,"method":"eth_chainId"}');
    expect(response.text).to.equal('{"jsonrpc":"2.0","id":9007199254740991,"result":"0x21"}');
  });

  it("answers nothing to a notification, also a failing one", async () => {
    for (const request of [
      { jsonrpc: "2.0", method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", method: "foo_bar", params: [] },
      { jsonrpc: "2.0", method: "web3_sha3", params: ["0xabc"] },
    ]) {
      const response = await postJson(node.url, request);
      expect(response.status, request.method).to.equal(204);
      expect(response.text, request.method).to.equal("");
    }
  });

  it("answers a mixed batch element by element, in order, without the notifications", async () => {
    const response = await postJson(node.url, [
      { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] },
      1,
      { jsonrpc: "2.0", method: "eth_chainId", params: [] },
    ]);
    expect(response.json).to.deep.equal([
      { jsonrpc: "2.0", id: 1, result: "0x21" },
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: "invalid request: expected a JSON object" } },
    ]);
    const unknown = await postJson(node.url, [{ jsonrpc: "2.0", id: "u", method: "nope_nope", params: [] }, { jsonrpc: "2.0", id: "c", method: "net_version", params: [] }]);
    expect(unknown.json).to.deep.equal([
      { jsonrpc: "2.0", id: "u", error: { code: -32601, message: "the method nope_nope does not exist/is not available" } },
      { jsonrpc: "2.0", id: "c", result: "33" },
    ]);
  });

  it("answers a batch of junk with one invalid-request error per element", async () => {
    const response = await postRaw(node.url, "[1,2]");
    const body = response.json as ErrorResponse[];
    expect(body).to.have.length(2);
    for (const item of body) expect(item).to.deep.include({ id: null, error: { code: -32600, message: "invalid request: expected a JSON object" } });
  });

  it("answers duplicate ids in a batch each", async () => {
    const response = await postJson(node.url, [
      { jsonrpc: "2.0", id: 5, method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", id: 5, method: "net_version", params: [] },
    ]);
    expect(response.json).to.deep.equal([
      { jsonrpc: "2.0", id: 5, result: "0x21" },
      { jsonrpc: "2.0", id: 5, result: "33" },
    ]);
  });

  it("answers nothing to a batch of notifications", async () => {
    const response = await postJson(node.url, [
      { jsonrpc: "2.0", method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", method: "net_version", params: [] },
    ]);
    expect(response.status).to.equal(204);
    expect(response.text).to.equal("");
  });

  it("runs a batch at the limit and refuses one over it without running any of it", async () => {
    const call = (id: number) => ({ jsonrpc: "2.0", id, method: "eth_chainId", params: [] });
    const atLimit = await postJson(node.url, [call(1), call(2), call(3)]);
    expect(atLimit.json).to.have.length(3);
    const overLimit = await postJson(node.url, [call(1), call(2), call(3), call(4)]);
    expect(overLimit.status).to.equal(200);
    expect(overLimit.json).to.deep.equal([
      { jsonrpc: "2.0", id: 1, error: { code: -32600, message: "invalid request: batch of 4 requests exceeds the limit of 3" } },
    ]);
  });

  describe("invalid params name the position and what is wrong", () => {
    const paramCases: { name: string; method: string; params: unknown[]; message: string }[] = [
      { name: "too many arguments", method: "eth_chainId", params: ["0x1"], message: "too many arguments, want at most 0" },
      { name: "a missing required argument", method: "web3_sha3", params: [], message: "missing value for required argument 0 (data)" },
      { name: "null in a required position", method: "web3_sha3", params: [null], message: "missing value for required argument 0 (data)" },
      { name: "a number where hex is expected", method: "web3_sha3", params: [12], message: "invalid argument 0: expected string, got integer" },
      { name: "hex without 0x", method: "web3_sha3", params: ["abcd"], message: "invalid argument 0: hex string without 0x prefix" },
      { name: "an upper-case 0X prefix", method: "web3_sha3", params: ["0Xabcd"], message: 'invalid argument 0: hex string with upper-case "0X" prefix (use "0x")' },
      { name: "odd-length data", method: "web3_sha3", params: ["0xabc"], message: "invalid argument 0: hex string of odd length" },
      { name: "non-hex characters", method: "web3_sha3", params: ["0xzz"], message: "invalid argument 0: invalid hex string" },
      { name: "an address of 19 bytes", method: "eth_getBalance", params: [address.slice(0, -2), "latest"], message: "invalid argument 0: wrong length: want 20 bytes, got 19" },
      { name: "an address of 21 bytes", method: "eth_getBalance", params: [`${address}00`, "latest"], message: "invalid argument 0: wrong length: want 20 bytes, got 21" },
      { name: "leading zeros in a QUANTITY", method: "eth_getBalance", params: [address, "0x01"], message: "invalid argument 1: hex number with leading zero digits" },
      { name: "an empty QUANTITY", method: "eth_getBalance", params: [address, "0x"], message: 'invalid argument 1: hex number "0x" has no digits (zero is "0x0")' },
      { name: "a block number over 64 bits", method: "eth_getBalance", params: [address, "0x10000000000000000"], message: "invalid argument 1: hex number larger than 64 bits" },
      { name: "an unknown block tag", method: "eth_getBalance", params: [address, "lates"], message: 'invalid argument 1: "lates" is not one of: "latest", "earliest", "pending", or a hex number' },
      { name: "the pending tag where it is not supported", method: "eth_getBlockByNumber", params: ["pending", false], message: 'invalid argument 0: "pending" is not one of: "latest", "earliest", or a hex number' },
      { name: "a bad field of a block selector", method: "eth_getBalance", params: [address, { blockHash: "0x1234" }], message: "invalid argument 1: field blockHash: wrong length: want 32 bytes, got 2" },
      { name: "an unknown field of a block selector", method: "eth_getBalance", params: [address, { blockHash: `0x${"ab".repeat(32)}`, extra: 1 }], message: 'invalid argument 1: unknown field "extra"' },
      { name: "blockhash together with fromBlock", method: "eth_getLogs", params: [{ blockhash: `0x${"ab".repeat(32)}`, fromBlock: "0x1" }], message: 'invalid argument 0: fields "blockhash" and "fromBlock" cannot be given together' },
      { name: "both spellings of blockhash", method: "eth_getLogs", params: [{ blockhash: `0x${"ab".repeat(32)}`, blockHash: `0x${"ab".repeat(32)}` }], message: 'invalid argument 0: fields "blockhash" and "blockHash" cannot be given together' },
      { name: "more than 4 topic positions", method: "eth_getLogs", params: [{ topics: Array(5).fill(null) }], message: "invalid argument 0: field topics: too many entries: at most 4" },
      { name: "a topic of the wrong length in an OR list", method: "eth_getLogs", params: [{ topics: [null, [`0x${"ab".repeat(32)}`, "0x12"]] }], message: "invalid argument 0: field topics[1][1]: wrong length: want 32 bytes, got 1" },
      { name: "state and stateDiff for one account", method: "eth_call", params: [{ to: address }, "latest", { [address]: { state: {}, stateDiff: {} } }], message: `invalid argument 2: field ${address}: fields "state" and "stateDiff" cannot be given together` },
      { name: "a storage key of the wrong length", method: "eth_call", params: [{ to: address }, "latest", { [address]: { stateDiff: { "0x01": `0x${"00".repeat(32)}` } } }], message: `invalid argument 2: field ${address}.stateDiff: invalid key "0x01": wrong length: want 32 bytes, got 1` },
      { name: "an override for a malformed address", method: "eth_call", params: [{ to: address }, "latest", { "0x12": { balance: "0x1" } }], message: 'invalid argument 2: invalid key "0x12": wrong length: want 20 bytes, got 1' },
      { name: "a missing required field", method: "eth_sendTransaction", params: [{ to: address }], message: 'invalid argument 0: missing field "from"' },
      { name: "a value out of range", method: "trace_filter", params: [{ count: -1 }], message: "invalid argument 0: field count: must be at least 0, got -1" },
      { name: "an empty string where text is required", method: "sco_banAddress", params: [""], message: "invalid argument 0: must not be empty" },
      { name: "non-hex digits in a storage position", method: "eth_getStorageAt", params: [address, "0xzz", "latest"], message: "invalid argument 1: invalid hex string" },
      { name: "an odd count of hex digits where whole bytes are expected", method: "mnr_submitParentBlock", params: ["0x123"], message: "invalid argument 0: odd number of hex digits (3): two digits a byte" },
      { name: "bytes that are not a parent-chain block", method: "mnr_submitParentBlock", params: ["1234"], message: "invalid argument 0: parentBlockHex: not a parent-chain block: truncated: block of 2 bytes, shorter than its 80-byte header" },
      { name: "an empty block selector", method: "eth_getBalance", params: [address, {}], message: 'invalid argument 1: missing field "blockHash" or "blockNumber"' },
      { name: "a JSON number as block", method: "eth_getBalance", params: [address, 0], message: "invalid argument 1: expected string or object, got integer" },
      { name: "a storage position over 32 bytes", method: "eth_getStorageAt", params: [address, `0x${"01".repeat(33)}`, "latest"], message: "invalid argument 1: hex number longer than 32 bytes" },
      { name: "a private key of 2 bytes", method: "personal_importRawKey", params: ["0x1234", "passphrase"], message: "invalid argument 0: wrong length: want 32 bytes, got 2" },
      { name: "an array as block", method: "eth_getBalance", params: [address, []], message: "invalid argument 1: expected string or object, got array" },
      { name: "a block selector object where only a number or tag is taken", method: "eth_call", params: [{ to: address }, { blockHash: `0x${"ab".repeat(32)}` }], message: "invalid argument 1: expected string, got object" },
    ];
    for (const testCase of paramCases) {
      it(testCase.name, async () => {
        const response = await postJson(node.url, { jsonrpc: "2.0", id: 3, method: testCase.method, params: testCase.params });
        expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: 3, error: { code: -32602, message: testCase.message } });
      });
    }
  });

  it("refuses a deeply nested parameter before parsing it, without exhausting the stack", async () => {
    const nested = "[".repeat(50_000) + "]".repeat(50_000);
    const response = await postRaw(node.url, `{"jsonrpc":"2.0","id":3,"method":"web3_sha3","params":[${nested}]}`);
    expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "invalid request: JSON nested deeper than 128 levels" } });
    expect(await node.client.eth_chainId(), "the node keeps serving").to.equal("0x21");
  });

  it("counts null in an optional position as omitted", async () => {
    // eth_getBalance's block is optional: null, or nothing, reads the head (a development account: 10^30 wei).
    for (const params of [[address, null], [address], [address, "latest"]]) {
      const response = await postJson(node.url, { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params });
      expect(response.json, JSON.stringify(params)).to.deep.equal({ jsonrpc: "2.0", id: 1, result: `0x${(10n ** 30n).toString(16)}` });
    }
  });

  it("answers a documented method without implementation with a clear error", async function () {
    // Any method still waiting for its implementation (the list shrinks as methods land).
    const waiting = [...rpcMethodTable.values()].find((entry) => !entry.implemented && entry.requiredParamCount === 0 && entry.namespace === "eth");
    if (waiting === undefined) this.skip();
    const response = await postJson(node.url, { jsonrpc: "2.0", id: 1, method: waiting.name, params: [] });
    expect(response.json).to.deep.equal({ jsonrpc: "2.0", id: 1, error: { code: -32004, message: `the method ${waiting.name} is not implemented yet in this node` } });
  });

  it("answers an unsupported method with the reason", async () => {
    const cases: [string, RegExp][] = [
      ["eth_compileSolidity", /not supported: compilers are not included in the node, for security reasons/i],
      ["db_putString", /not supported: .*deprecated/i],
      ["shh_post", /not supported: .*whisper/i],
    ];
    for (const [method, message] of cases) {
      const body = (await postJson(node.url, { jsonrpc: "2.0", id: 1, method, params: [] })).json as ErrorResponse;
      expect(body.error.code, method).to.equal(-32601);
      expect(body.error.message, method).to.match(message);
    }
  });
});
