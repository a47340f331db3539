// eth_getBlockReceipts: a block's receipts, each what eth_getTransactionReceipt answers, for a block
// named by number, tag, hash or selector; null for an unknown block; bad parameters -32602.
import { expect } from "chai";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startManualNode, type ManualNode } from "../../helpers/manualNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const cow1 = "0x7986b3df570230288501eea3d890bd66948c9b79";
const unknownHash = `0x${"ee".repeat(32)}`;

describe("eth_getBlockReceipts", () => {
  let node: ManualNode;
  beforeEach(async () => (node = await startManualNode()));
  afterEach(() => node.stop());

  it("answers every receipt of a block, as eth_getTransactionReceipt does, however the block is named", async () => {
    const hashes = [];
    for (const [from, value] of [[cow, "0x1"], [cow1, "0x2"], [cow, "0x3"]] as const) hashes.push(await node.client.eth_sendTransaction({ from, to: cow1, value, gas: "0x5208" }));
    const block = await node.mine();
    // In block order (the pool chose it), each as eth_getTransactionReceipt answers it.
    const expected = (await Promise.all(hashes.map((hash) => node.client.eth_getTransactionReceipt(hash)))).sort((first, second) => Number(first!.transactionIndex) - Number(second!.transactionIndex));
    expect(expected.map((receipt) => receipt!.transactionIndex)).to.deep.equal(["0x0", "0x1", "0x2"]);
    const blockHash = `0x${Buffer.from(block.hash).toString("hex")}`;
    for (const name of ["0x1", "latest", "pending", blockHash, { blockHash }, { blockHash, requireCanonical: true }, { blockNumber: "0x1" }] as const) {
      const receipts = await node.client.eth_getBlockReceipts(name);
      expectValidResult("eth_getBlockReceipts", receipts);
      expect(receipts, JSON.stringify(name)).to.deep.equal(expected);
    }
    expect(await node.client.eth_getBlockReceipts("earliest")).to.deep.equal([]);
  });

  it("answers null for an unknown block and refuses malformed names with -32602", async () => {
    for (const name of ["0x5", unknownHash, { blockHash: unknownHash }, { blockNumber: "0x5" }] as const) expect(await node.client.eth_getBlockReceipts(name)).to.equal(null);
    const client = node.client as unknown as Record<string, (...params: unknown[]) => Promise<unknown>>;
    await expectRpcError(client.eth_getBlockReceipts!("0x01"), -32602, /^invalid argument 0: /);
    await expectRpcError(client.eth_getBlockReceipts!("finalised"), -32602, /^invalid argument 0: /);
    await expectRpcError(client.eth_getBlockReceipts!({ blockHash: "0x12" }), -32602, /^invalid argument 0: /);
    await expectRpcError(client.eth_getBlockReceipts!(), -32602, /^missing value for required argument 0|^invalid argument 0/);
  });
});
