// A switch to a heavier branch seen through JSON-RPC: a node mines one block of its own, another
// node's two-block branch from the same genesis is imported into it, and its clients then see the
// other branch: a log filter delivers the lost log with `removed: true` and the new one, the lost
// transaction is pending again (no receipt) and its receipt follows the block that mines it next.
import { expect } from "chai";
import { decodeRawTransaction } from "../../../src/chain/transactions.js";
import { bytesToHex, hexToBytes } from "../../../src/common/hex.js";
import type { ChainServices } from "../../../src/node/index.js";
import { asReceived, creationEmitting, openTestChain } from "../../helpers/chainPair.js";
import { startManualNode, type ManualNode } from "../../helpers/manualNode.js";


interface LogEntry {
  transactionHash: string;
  blockHash: string;
  topics: string[];
  removed: boolean;
}

describe("chain: a reorganisation seen by clients", function () {
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

  it("filters deliver the lost logs as removed and the new ones; the lost transaction is pending again, then mined anew", async () => {
    const ownTopic = `0x${"0a".repeat(32)}`;
    const otherTopic = `0x${"0b".repeat(32)}`;
    const filter = await node.client.eth_newFilter({ fromBlock: "latest" });
    const ownHash = await node.client.eth_sendRawTransaction(await creationEmitting("cow1", ownTopic));
    const ownBlock = await node.mine();
    const firstPoll = (await node.client.eth_getFilterChanges(filter)) as LogEntry[];
    expect(firstPoll.map((log) => [log.transactionHash, log.removed])).to.deep.equal([[ownHash, false]]);

    // The other node's branch: its first block carries cow's log, its second makes it heavier.
    const otherRaw = await creationEmitting("cow", otherTopic);
    const otherFirst = await other.miner.mineBlock([decodeRawTransaction(hexToBytes(otherRaw), other.common)]);
    const otherSecond = await other.miner.mineBlock([]);
    const { importer } = node.services;
    expect((await importer.importBlock(asReceived(otherFirst, node.services), "peer")).status).to.equal("IMPORTED_NOT_BEST");
    expect((await node.client.eth_blockNumber())).to.equal("0x1");
    expect((await importer.importBlock(asReceived(otherSecond, node.services), "peer")).status).to.equal("IMPORTED_BEST");

    const head = await node.client.eth_getBlockByNumber("latest", false);
    expect(head!.hash).to.equal(bytesToHex(otherSecond.hash));
    expect((await node.client.eth_getBlockByNumber("0x1", false))!.hash).to.equal(bytesToHex(otherFirst.hash));
    // The block that lost is still readable by its hash.
    expect((await node.client.eth_getBlockByHash(bytesToHex(ownBlock.hash), false))!.number).to.equal("0x1");

    const afterSwitch = (await node.client.eth_getFilterChanges(filter)) as LogEntry[];
    expect(afterSwitch.map((log) => [log.transactionHash, log.blockHash, log.topics, log.removed])).to.deep.equal([
      [ownHash, bytesToHex(ownBlock.hash), [ownTopic], true],
      [bytesToHex(otherFirst.transactions[0]!.hash), bytesToHex(otherFirst.hash), [otherTopic], false],
    ]);

    // cow1's creation is pending again: no receipt, no block.
    expect(await node.client.eth_getTransactionReceipt(ownHash)).to.equal(null);
    const pending = await node.client.eth_getTransactionByHash(ownHash);
    expect(pending!.blockHash).to.equal(null);
    expect(await node.client.txpool_status()).to.deep.equal({ pending: 1, queued: 0 });

    // Mined again, its receipt follows the new block.
    const again = await node.mine();
    expect(again.number).to.equal(3n);
    const receipt = await node.client.eth_getTransactionReceipt(ownHash);
    expect([receipt!.blockHash, receipt!.blockNumber]).to.deep.equal([bytesToHex(again.hash), "0x3"]);
    const thirdPoll = (await node.client.eth_getFilterChanges(filter)) as LogEntry[];
    expect(thirdPoll.map((log) => [log.transactionHash, log.blockHash, log.removed])).to.deep.equal([[ownHash, bytesToHex(again.hash), false]]);
    // eth_getLogs over the whole chain sees the canonical branch only.
    const logs = (await node.client.eth_getLogs({ fromBlock: "earliest", toBlock: "latest" })) as LogEntry[];
    expect(logs.map((log) => log.blockHash)).to.deep.equal([bytesToHex(otherFirst.hash), bytesToHex(again.hash)]);
  });
});
