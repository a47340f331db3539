// eth_feeHistory and eth_maxPriorityFeePerGas over real HTTP: base fees are the blocks' minimum gas
// prices, rewards the percentiles of what transactions paid above them weighted by gas (geth's
// walk), ranges cut at genesis and at 1,024 blocks, and each bad input's error.
import { expect } from "chai";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { expectValidResult } from "../../helpers/results.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const recipient = "0x00000000000000000000000000000000000000bb";

describe("eth_feeHistory and eth_maxPriorityFeePerGas", () => {
  let node: TestNode;
  let gasLimit: bigint;
  before(async () => {
    node = await startTestNode({ chain: { mining: { kind: "off" } } });
    // Block 1: one transaction at 7 wei a gas. Block 2: three at 1, 5 and 9. Block 3: empty.
    await node.client.eth_sendTransaction({ from: cow, to: recipient, value: "0x1", gasPrice: "0x7" });
    await node.client.evm_mine();
    for (const price of ["0x9", "0x1", "0x5"]) await node.client.eth_sendTransaction({ from: cow, to: recipient, value: "0x1", gasPrice: price });
    await node.client.evm_mine();
    await node.client.evm_mine();
    gasLimit = BigInt((await node.client.eth_getBlockByNumber("0x1", false))!.gasLimit);
  });
  after(() => node.stop());

  it("answers each block's base fee, gas used ratio and rewards at the percentiles, and the next block's base fee", async () => {
    const history = await node.client.eth_feeHistory("0x3", "latest", [0, 34, 67, 100]);
    expectValidResult("eth_feeHistory", history);
    expect(history).to.deep.equal({
      oldestBlock: "0x1",
      baseFeePerGas: ["0x0", "0x0", "0x0", "0x0"],
      gasUsedRatio: [21_000 / Number(gasLimit), 63_000 / Number(gasLimit), 0],
      // Block 2: 34 % of 63,000 gas is past the first transaction's 21,000, 67 % past the second's.
      reward: [
        ["0x7", "0x7", "0x7", "0x7"],
        ["0x1", "0x5", "0x9", "0x9"],
        ["0x0", "0x0", "0x0", "0x0"],
      ],
    });
    const withoutRewards = await node.client.eth_feeHistory("0x1", "0x2", undefined);
    expect(withoutRewards).to.deep.equal({ oldestBlock: "0x2", baseFeePerGas: ["0x0", "0x0"], gasUsedRatio: [63_000 / Number(gasLimit)] });
  });

  it("cuts a range at genesis, answers an empty history for no blocks, and reads pending as the head", async () => {
    const all = await node.client.eth_feeHistory("0x400", "0x2", [50]);
    expect(all.oldestBlock).to.equal("0x0");
    expect(all.baseFeePerGas).to.have.length(4);
    expect(all.reward).to.deep.equal([["0x0"], ["0x7"], ["0x5"]]);
    expect(await node.client.eth_feeHistory("0x0", "latest", [])).to.deep.equal({ oldestBlock: "0x0", baseFeePerGas: [], gasUsedRatio: [] });
    expect(await node.client.eth_feeHistory("0x1", "pending", undefined)).to.deep.equal(await node.client.eth_feeHistory("0x1", "latest", undefined));
  });

  it("refuses percentiles out of order or out of range, too many of them, and a block past the head", async () => {
    await expectRpcError(node.client.eth_feeHistory("0x2", "latest", [50, 10]), -32602, "invalid argument 2: reward percentile 1 (10) is below the one before it");
    await expectRpcError(node.client.eth_feeHistory("0x2", "latest", [101]), -32602, /^invalid argument 2/);
    await expectRpcError(node.client.eth_feeHistory("0x2", "latest", Array.from({ length: 101 }, () => 1)), -32602, /^invalid argument 2/);
    await expectRpcError(node.client.eth_feeHistory("0x2", "0x99", undefined), -32600, "Block 0x99 not found");
    await expectRpcError(node.client.eth_feeHistory("2" as never, "latest", undefined), -32602, /^invalid argument 0/);
  });

  it("suggests the median of what the last blocks' transactions paid above their minimum gas price", async () => {
    const suggestion = await node.client.eth_maxPriorityFeePerGas();
    expectValidResult("eth_maxPriorityFeePerGas", suggestion);
    // Rewards 1, 5, 7, 9: the upper median.
    expect(suggestion).to.equal("0x7");
  });
});
