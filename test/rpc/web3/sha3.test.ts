import { expect } from "chai";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

describe("web3_sha3", () => {
  let node: TestNode;
  before(async () => (node = await startTestNode()));
  after(() => node.stop());

  it("answers Keccak-256, not SHA3-256", async () => {
    const vectors: [string, string][] = [
      ["0x", "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"],
      ["0x68656c6c6f20776f726c64", "0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad"],
      ["0x68656C6C6F20776F726C64", "0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad"],
    ];
    for (const [input, hash] of vectors) {
      const result = await node.client.web3_sha3(input);
      expectValidResult("web3_sha3", result);
      expect(result, input).to.equal(hash);
    }
  });

  it("hashes a large input", async () => {
    const result = await node.client.web3_sha3(`0x${"00".repeat(1024 * 1024)}`);
    expect(result).to.match(/^0x[0-9a-f]{64}$/);
  });

  it("refuses a value that is not DATA", async () => {
    await expectRpcError(node.client.web3_sha3("0x1"), -32602, "invalid argument 0: hex string of odd length");
  });
});
