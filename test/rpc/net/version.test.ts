import { expect } from "chai";
import { expectValidResult } from "../../helpers/results.js";
import { startTestNode } from "../../helpers/testNode.js";

describe("net_version and eth_chainId per network", () => {
  const networks: [number, string, string][] = [
    [30, "30", "0x1e"],
    [31, "31", "0x1f"],
    [32, "32", "0x20"],
    [33, "33", "0x21"],
  ];
  for (const [networkId, version, chainId] of networks) {
    it(`network ${networkId}: net_version "${version}", eth_chainId ${chainId}`, async () => {
      const node = await startTestNode({ networkId });
      try {
        const [answeredVersion, answeredChainId] = await Promise.all([node.client.net_version(), node.client.eth_chainId()]);
        expectValidResult("net_version", answeredVersion);
        expectValidResult("eth_chainId", answeredChainId);
        expect(answeredVersion).to.equal(version);
        expect(answeredChainId).to.equal(chainId);
      } finally {
        await node.stop();
      }
    });
  }
});
