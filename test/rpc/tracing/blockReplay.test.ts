// Replay of blocks holding several transactions: each traced transaction sees the state its
// predecessors in the block left (the same SSTORE costs 22,100 first and 2,200 after), and every
// replayed transaction's gas is the one in its receipt.
import { expect } from "chai";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import type { CallFrame } from "../../../generated/types.js";
import { expectValidResult } from "../../helpers/results.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
// Runtime: PUSH1 0x2a PUSH1 0 SSTORE STOP; init copies it (5 bytes at offset 12) and returns it.
const initCode = "0x6005600c60003960056000f3" + "602a600055" + "00";
const receiptPolls = 400;

describe("tracing: blocks with several transactions", function () {
  this.timeout(60_000);
  let node: TestNode;
  const wallet = new Wallet(cowKey);
  let nonce = 0;

  before(async () => {
    node = await startTestNode({ chain: { mining: { kind: "interval", blockTimeSeconds: 1 } } });
  });
  after(() => node.stop());

  async function sendAll(transactions: { to?: string; data?: string }[]): Promise<string[]> {
    const raws = await Promise.all(transactions.map((fields, index) => wallet.signTransaction({ type: 0, chainId: 33, nonce: nonce + index, gasPrice: 0n, gasLimit: 200_000n, value: 0n, ...fields })));
    nonce += transactions.length;
    const hashes: string[] = [];
    for (const raw of raws) hashes.push(await node.client.eth_sendRawTransaction(raw));
    return hashes;
  }

  async function receipt(hash: string) {
    for (let poll = 0; poll < receiptPolls; poll++) {
      const found = await node.client.eth_getTransactionReceipt(hash);
      if (found !== null) return found;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return expect.fail(`${hash} was not mined`);
  }

  it("traces each transaction on the state its predecessors left, with the receipts' gas", async () => {
    const [deployHash] = await sendAll([{ data: initCode }]);
    const contract = (await receipt(deployHash!)).contractAddress!;
    // Three calls sent together land in one block (a block boundary in between is retried).
    let hashes: string[] = [];
    let blockHash = "";
    for (let attempt = 0; attempt < 3 && blockHash === ""; attempt++) {
      hashes = await sendAll([{ to: contract }, { to: contract }, { to: contract }]);
      const receipts = await Promise.all(hashes.map(receipt));
      if (receipts.every((each) => each.blockHash === receipts[0]!.blockHash)) blockHash = receipts[0]!.blockHash;
    }
    expect(blockHash, "three transactions in one block").to.not.equal("");
    const sstoreCosts: number[] = [];
    for (const hash of hashes) {
      const trace = (await node.client.debug_traceTransaction(hash, { disableStack: true, disableMemory: true })) as { structLogs: { op: string; gasCost: number }[] };
      sstoreCosts.push(trace.structLogs.find((step) => step.op === "SSTORE")!.gasCost);
      const top = (await node.client.debug_traceTransaction(hash, { tracer: "callTracer" })) as CallFrame;
      expect(top.gasUsed).to.equal((await receipt(hash)).gasUsed);
    }
    // Only the first call of the block finds the slot empty (cold zero to non-zero; then cold no-ops).
    expect(sstoreCosts).to.deep.equal([22_100, 2_200, 2_200]);
    const blockTraces = await node.client.debug_traceBlockByHash(blockHash, { tracer: "callTracer" });
    expectValidResult("debug_traceBlockByHash", blockTraces);
    const entries = blockTraces as { txHash: string; result: CallFrame }[];
    expect(entries.map((entry) => entry.txHash)).to.deep.equal(hashes);
    for (const entry of entries) expect(entry.result.gasUsed).to.equal((await receipt(entry.txHash)).gasUsed);
    const flat = await node.client.trace_block(blockHash);
    expectValidResult("trace_block", flat);
    expect((flat as { transactionPosition: number }[]).map((trace) => trace.transactionPosition)).to.deep.equal([0, 1, 2]);
  });
});
