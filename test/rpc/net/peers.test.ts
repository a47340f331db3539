import { expect } from "chai";
import { expectValidResult } from "../../helpers/results.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

// A node without peer-to-peer networking: no listener, no peers.
describe("net_listening, net_peerCount, net_peerList", () => {
  let node: TestNode;
  before(async () => (node = await startTestNode()));
  after(() => node.stop());

  it("net_listening is false while the node has no peer listener", async () => {
    const listening = await node.client.net_listening();
    expectValidResult("net_listening", listening);
    expect(listening).to.equal(false);
  });

  it("net_peerCount is 0x0", async () => {
    const count = await node.client.net_peerCount();
    expectValidResult("net_peerCount", count);
    expect(count).to.equal("0x0");
  });

  it("net_peerList is empty", async () => {
    const peers = await node.client.net_peerList();
    expectValidResult("net_peerList", peers);
    expect(peers).to.deep.equal([]);
  });
});
