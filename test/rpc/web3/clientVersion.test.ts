import { expect } from "chai";
import { expectValidResult } from "../../helpers/results.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

describe("web3_clientVersion", () => {
  let node: TestNode;
  before(async () => (node = await startTestNode()));
  after(() => node.stop());

  it("answers <name>/<version>/<platform>/node<major>", async () => {
    const version = await node.client.web3_clientVersion();
    expectValidResult("web3_clientVersion", version);
    const nodeMajor = process.versions.node.split(".")[0];
    expect(version).to.equal(`chain-node/0.1.0/${process.platform}-${process.arch}/node${nodeMajor}`);
  });
});
