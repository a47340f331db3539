import { expect } from "chai";
import { expectValidResult } from "../../helpers/results.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

describe("eth_chainId and eth_protocolVersion", () => {
  let node: TestNode;
  before(async () => (node = await startTestNode()));
  after(() => node.stop());

  it("eth_chainId answers the configured chain id in hex (33 -> 0x21 by default)", async () => {
    const chainId = await node.client.eth_chainId();
    expectValidResult("eth_chainId", chainId);
    expect(chainId).to.equal("0x21");
  });

  it("eth_protocolVersion answers the peer protocol version 62", async () => {
    const version = await node.client.eth_protocolVersion();
    expectValidResult("eth_protocolVersion", version);
    expect(version).to.equal("0x3e");
  });

  it("answers both in one batch through the client", async () => {
    const { batchCall } = await import("../../../generated/client.js");
    const outcomes = await node.client.batch([batchCall("eth_chainId"), batchCall("eth_protocolVersion"), batchCall("web3_sha3", "0x1")]);
    expect(outcomes[0]).to.deep.equal({ ok: true, result: "0x21" });
    expect(outcomes[1]).to.deep.equal({ ok: true, result: "0x3e" });
    expect(outcomes[2]).to.deep.equal({ ok: false, error: { code: -32602, message: "invalid argument 0: hex string of odd length" } });
  });
});
