// eth_getLogs answers from the wire text of logs made ahead of queries (rpc/format.ts, prepared
// by BlockLogIndex after indexing): the answer is the same text, byte for byte, as the log objects'
// JSON (eth_getTransactionReceipt's logs), whether a query finds the text prepared or makes it;
// and blocks that leave the chain (evm_revert, a reorganisation) never have their text served.
import { expect } from "chai";
import { decodeRawTransaction } from "../../../src/chain/transactions.js";
import { bytesToHex, hexToBytes } from "../../../src/common/hex.js";
import type { ChainServices } from "../../../src/node/index.js";
import { asReceived, creationEmitting, openTestChain } from "../../helpers/chainPair.js";
import { deployEvents, topic, type EventsContract } from "../../helpers/events.js";
import { startManualNode, type ManualNode } from "../../helpers/manualNode.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const A = topic(0xa);
const B = topic(0xb);
const C = topic(0xc);

/** The raw text of the result of eth_getLogs(filter), as the node wrote it. */
async function getLogsText(url: string, filter: unknown): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getLogs", params: [filter] }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  const prefix = '{"jsonrpc":"2.0","id":1,"result":';
  expect(text.startsWith(prefix), text.slice(0, 200)).to.equal(true);
  expect(text.endsWith("}")).to.equal(true);
  return text.slice(prefix.length, -1);
}

/** Lets the turns after mining run (the index's indexing, then its preparation of the logs' text). */
async function idleTurns(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("eth_getLogs: the logs' text made ahead of queries", function () {
  this.timeout(60_000);
  let node: TestNode;
  let events: EventsContract;

  before(async () => {
    node = await startTestNode();
    events = await deployEvents(node.client);
  });
  after(() => node.stop());

  /** The receipts' logs of these transactions, in order, as JSON text (the objects' shape). */
  async function receiptLogsText(hashes: string[]): Promise<string> {
    const logs: unknown[] = [];
    for (const hash of hashes) logs.push(...(await node.client.eth_getTransactionReceipt(hash))!.logs);
    return JSON.stringify(logs);
  }

  it("answers the log objects' JSON byte for byte, prepared or made by the query, over a block or a range", async () => {
    const first = await events.emitFour([A, B, C, A]);
    const second = await events.emitPairs([[A, A], [B, B], [C, C]]);
    const none = await events.emitNone(3);
    // Queried at once: the query makes what the index has not prepared yet.
    const range = { fromBlock: "0x2", address: events.address };
    expect(await getLogsText(node.url, range)).to.equal(await receiptLogsText([first, second, none]));
    await idleTurns();
    const third = await events.emitTwo(B, A);
    await idleTurns();
    // Prepared after mining: the same text.
    expect(await getLogsText(node.url, range)).to.equal(await receiptLogsText([first, second, none, third]));
    // A subset of a block's logs, and one block by hash (read from the chain, not the index).
    expect(await getLogsText(node.url, { ...range, topics: [null, B] })).to.equal(
      JSON.stringify([...(await node.client.eth_getTransactionReceipt(first))!.logs, ...(await node.client.eth_getTransactionReceipt(second))!.logs, ...(await node.client.eth_getTransactionReceipt(third))!.logs].filter((log) => log.topics[1] === B)),
    );
    const thirdBlock = (await node.client.eth_getTransactionReceipt(third))!.blockHash;
    expect(await getLogsText(node.url, { blockHash: thirdBlock })).to.equal(await receiptLogsText([third]));
    expect(await getLogsText(node.url, { fromBlock: "0x2", address: events.address, topics: [topic(0xd)] })).to.equal("[]");
  });

  it("after evm_revert, the range answers the blocks mined since, not the reverted ones' text", async () => {
    const from = BigInt(await node.client.eth_blockNumber()) + 1n;
    const range = { fromBlock: `0x${from.toString(16)}`, toBlock: `0x${(from + 1n).toString(16)}`, address: events.address };
    const snapshot = await node.client.evm_snapshot();
    const reverted = [await events.emitTwo(A, B), await events.emitTwo(A, C)];
    await idleTurns();
    const before = await getLogsText(node.url, range);
    expect(before).to.equal(await receiptLogsText(reverted));
    expect(await node.client.evm_revert(snapshot)).to.equal(true);
    expect(await getLogsText(node.url, range)).to.equal("[]");
    // The same heights again, other transactions: queried at once, then once prepared.
    const minedAgain = [await events.emitTwo(C, B)];
    expect(await getLogsText(node.url, range)).to.equal(await receiptLogsText(minedAgain));
    minedAgain.push(await events.emitFour([B, B, B, B]));
    await idleTurns();
    const after = await getLogsText(node.url, range);
    expect(after).to.equal(await receiptLogsText(minedAgain));
    for (const hash of reverted) expect(after).not.to.include(hash.slice(2));
  });
});


describe("eth_getLogs: the logs' text after a reorganisation", function () {
  this.timeout(30_000);
  let node: ManualNode;
  let other: ChainServices;

  beforeEach(async () => {
    node = await startManualNode();
    other = await openTestChain();
  });
  afterEach(async () => {
    await node.stop();
    await other.close();
  });

  it("answers the new branch's logs over the range, not the text of the block that left", async () => {
    const ownTopic = `0x${"0a".repeat(32)}`;
    const otherTopic = `0x${"0b".repeat(32)}`;
    const ownHash = await node.client.eth_sendRawTransaction(await creationEmitting("cow1", ownTopic));
    const ownBlock = await node.mine();
    await idleTurns();
    const range = { fromBlock: "0x1", toBlock: "0x2" };
    const before = JSON.parse(await getLogsText(node.url, range)) as { transactionHash: string; blockHash: string }[];
    expect(before.map((log) => [log.transactionHash, log.blockHash])).to.deep.equal([[ownHash, bytesToHex(ownBlock.hash)]]);

    const otherFirst = await other.miner.mineBlock([decodeRawTransaction(hexToBytes(await creationEmitting("cow", otherTopic)), other.common)]);
    const otherSecond = await other.miner.mineBlock([]);
    const { importer } = node.services;
    expect((await importer.importBlock(asReceived(otherFirst, node.services), "peer")).status).to.equal("IMPORTED_NOT_BEST");
    expect((await importer.importBlock(asReceived(otherSecond, node.services), "peer")).status).to.equal("IMPORTED_BEST");

    const expected = JSON.stringify((await node.client.eth_getTransactionReceipt(bytesToHex(otherFirst.transactions[0]!.hash)))!.logs);
    expect(await getLogsText(node.url, range)).to.equal(expected);
    await idleTurns();
    const after = await getLogsText(node.url, range);
    expect(after).to.equal(expected);
    expect(after).not.to.include(ownHash.slice(2));
    expect(after).to.include(otherTopic.slice(2));
  });
});
