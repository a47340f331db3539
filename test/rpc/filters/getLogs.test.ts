// eth_getLogs: the spec's topic table, addresses, block ranges and tags, blockhash, and every bad
// input answered with a clear error.
import { expect } from "chai";
import type { Log } from "../../../generated/types.js";
import { deployEvents, topic, type EventsContract } from "../../helpers/events.js";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const A = topic(0xa);
const B = topic(0xb);
const C = topic(0xc);

describe("eth_getLogs", function () {
  this.timeout(60_000);
  let node: TestNode;
  let events: EventsContract;
  let other: EventsContract;
  /** Blocks of the fixture's calls, by name. */
  const blocks: Record<string, string> = {};

  async function getLogs(filter: Parameters<TestNode["client"]["eth_getLogs"]>[0]): Promise<Log[]> {
    const logs = await node.client.eth_getLogs(filter);
    expectValidResult("eth_getLogs", logs);
    return logs;
  }

  /** The topics of the logs found, one string per log (topics joined), for compact comparisons. */
  function topicsOf(logs: Log[]): string[][] {
    return logs.map((log) => log.topics);
  }

  before(async () => {
    node = await startTestNode();
    events = await deployEvents(node.client); // block 1
    other = await deployEvents(node.client); // block 2
    const mined = async (name: string, hash: Promise<string>) => (blocks[name] = (await node.client.eth_getTransactionReceipt(await hash))!.blockNumber);
    await mined("AB", events.emitTwo(A, B)); // block 3
    await mined("BA", events.emitTwo(B, A)); // block 4
    await mined("AC", events.emitTwo(A, C)); // block 5
    await mined("CB", events.emitTwo(C, B)); // block 6
    await mined("otherAB", other.emitTwo(A, B)); // block 7
    await mined("none", events.emitNone(7)); // block 8
    await mined("four", events.emitFour([A, B, C, A])); // block 9
    await mined("pairs", events.emitPairs([[A, A], [B, B], [C, C]])); // block 10
  });
  after(() => node.stop());

  const all = { fromBlock: "earliest" } as const;

  describe("topic table (spec 2.10), over logs of events", () => {
    it("[] matches anything", async () => {
      const logs = await getLogs({ ...all, address: events.address, topics: [] });
      expect(topicsOf(logs)).to.deep.equal([[A, B], [B, A], [A, C], [C, B], [], [A, B, C, A], [A, A], [B, B], [C, C]]);
    });

    it("[A] matches A first, anything after", async () => {
      expect(topicsOf(await getLogs({ ...all, address: events.address, topics: [A] }))).to.deep.equal([[A, B], [A, C], [A, B, C, A], [A, A]]);
    });

    it("[null, B] matches anything first, B second", async () => {
      expect(topicsOf(await getLogs({ ...all, address: events.address, topics: [null, B] }))).to.deep.equal([[A, B], [C, B], [A, B, C, A], [B, B]]);
    });

    it("[A, B] matches A first and B second", async () => {
      expect(topicsOf(await getLogs({ ...all, address: events.address, topics: [A, B] }))).to.deep.equal([[A, B], [A, B, C, A]]);
    });

    it("[[A, B], [A, B]] matches (A or B) first and (A or B) second", async () => {
      expect(topicsOf(await getLogs({ ...all, address: events.address, topics: [[A, B], [A, B]] }))).to.deep.equal([[A, B], [B, A], [A, B, C, A], [A, A], [B, B]]);
    });

    it("a constrained position a log does not have excludes it; null inside a list allows anything", async () => {
      expect(topicsOf(await getLogs({ ...all, address: events.address, topics: [null, null, C] }))).to.deep.equal([[A, B, C, A]]);
      expect(topicsOf(await getLogs({ ...all, address: events.address, topics: [[C, null], B] }))).to.deep.equal([[A, B], [C, B], [A, B, C, A], [B, B]]);
    });

    it("a log with fewer topics than the filter has positions does not match, as in geth and the reference", async () => {
      expect(topicsOf(await getLogs({ ...all, address: events.address, topics: [null, null, null, null] }))).to.deep.equal([[A, B, C, A]]);
      expect(topicsOf(await getLogs({ ...all, address: events.address, topics: [null] }))).to.deep.equal([[A, B], [B, A], [A, C], [C, B], [A, B, C, A], [A, A], [B, B], [C, C]]);
    });

    it("refuses more than 1,000 addresses or topics in one position, as geth", async () => {
      const addresses = Array.from({ length: 1_001 }, (_, index) => `0x${(index + 1).toString(16).padStart(40, "0")}`);
      await expectRpcError(getLogs({ ...all, address: addresses }), -32602, "invalid argument 0: field address: too many entries: at most 1000");
      const topics = Array.from({ length: 1_001 }, (_, index) => topic(index + 1));
      await expectRpcError(getLogs({ ...all, topics: [null, topics] }), -32602, "invalid argument 0: field topics[1]: too many entries: at most 1000");
      expect(await getLogs({ ...all, address: addresses.slice(0, 1_000), topics: [topics.slice(0, 1_000)] })).to.deep.equal([]);
    });
  });

  describe("addresses", () => {
    it("one address, a list of addresses, or none", async () => {
      const single = await getLogs({ ...all, address: other.address });
      expect(single.map((log) => log.blockNumber)).to.deep.equal([blocks.otherAB]);
      expect(single[0]!.address).to.equal(other.address.toLowerCase());
      const both = await getLogs({ ...all, address: [events.address, other.address], topics: [A, B] });
      expect(both.map((log) => [log.address, log.blockNumber])).to.deep.equal([
        [events.address, blocks.AB],
        [other.address, blocks.otherAB],
        [events.address, blocks.four],
      ]);
      expect(await getLogs({ ...all, topics: [A, B] })).to.have.length(3);
    });

    it("no match: an address without logs, a topic nobody emitted", async () => {
      expect(await getLogs({ ...all, address: "0x00000000000000000000000000000000000000aa" })).to.deep.equal([]);
      expect(await getLogs({ ...all, topics: [topic(0xdead)] })).to.deep.equal([]);
    });
  });

  describe("log objects and ranges", () => {
    it("carries removed = false, the transaction's place and the log's position in the block", async () => {
      const logs = await getLogs({ fromBlock: blocks.pairs, toBlock: blocks.pairs });
      expect(logs).to.have.length(3);
      const receipt = await node.client.eth_getTransactionReceipt(logs[0]!.transactionHash!);
      expect(logs).to.deep.equal(receipt!.logs);
      expect(logs.map((log) => log.logIndex)).to.deep.equal(["0x0", "0x1", "0x2"]);
      for (const log of logs) expect(log).to.include({ removed: false, transactionIndex: "0x0", blockNumber: blocks.pairs, blockHash: receipt!.blockHash });
    });

    it("defaults to the latest block; earliest is genesis; pending reads as latest", async () => {
      expect((await getLogs({})).map((log) => log.blockNumber)).to.deep.equal([blocks.pairs, blocks.pairs, blocks.pairs]);
      expect(await getLogs({ fromBlock: "pending", toBlock: "pending" })).to.have.length(3);
      expect(await getLogs({ fromBlock: "earliest", toBlock: "0x2" })).to.have.length(0);
      expect(await getLogs({ fromBlock: "earliest", toBlock: "0x3" })).to.have.length(1);
    });

    it("cuts a range at the head; a range starting after the head is empty", async () => {
      expect(await getLogs({ fromBlock: blocks.pairs, toBlock: "0xffff" })).to.have.length(3);
      expect(await getLogs({ fromBlock: "0xffff" })).to.deep.equal([]);
      expect(await getLogs({ fromBlock: "0xffff", toBlock: "0xfffff" })).to.deep.equal([]);
      expect(await getLogs({ fromBlock: "latest", toBlock: "0x3" })).to.deep.equal([]);
    });

    it("fromBlock after toBlock is an invalid argument", async () => {
      await expectRpcError(node.client.eth_getLogs({ fromBlock: "0x5", toBlock: "0x3" }), -32602, "invalid argument 0: fromBlock 0x5 is after toBlock 0x3");
    });
  });

  describe("blockhash", () => {
    it("restricts the query to one block, under either spelling", async () => {
      const block = await node.client.eth_getBlockByNumber(blocks.four!, false);
      for (const key of ["blockhash", "blockHash"] as const) {
        const logs = await getLogs({ [key]: block!.hash, topics: [A] });
        expect(logs.map((log) => log.blockHash)).to.deep.equal([block!.hash]);
        expect(logs[0]!.topics).to.deep.equal([A, B, C, A]);
        expect(await getLogs({ [key]: block!.hash, topics: [B] })).to.deep.equal([]);
      }
    });

    it("an unknown block hash is BlockNotFound", async () => {
      const unknown = topic(0x1234);
      await expectRpcError(node.client.eth_getLogs({ blockhash: unknown }), -32600, `Block with hash ${unknown} not found`);
    });

    it("blockhash together with fromBlock or toBlock, or both spellings, is an invalid argument", async () => {
      const hash = topic(1);
      await expectRpcError(node.client.eth_getLogs({ blockhash: hash, fromBlock: "0x1" }), -32602, 'invalid argument 0: fields "blockhash" and "fromBlock" cannot be given together');
      await expectRpcError(node.client.eth_getLogs({ blockHash: hash, toBlock: "latest" }), -32602, 'invalid argument 0: fields "blockHash" and "toBlock" cannot be given together');
      await expectRpcError(node.client.eth_getLogs({ blockhash: hash, blockHash: hash }), -32602, 'invalid argument 0: fields "blockhash" and "blockHash" cannot be given together');
    });
  });

  describe("bad topics and addresses", () => {
    it("more than 4 topics, a topic of the wrong length, a bad address: clear errors", async () => {
      await expectRpcError(node.client.eth_getLogs({ topics: [A, B, C, A, B] as never }), -32602, "invalid argument 0: field topics: too many entries: at most 4");
      await expectRpcError(node.client.eth_getLogs({ topics: ["0x1234"] }), -32602, "invalid argument 0: field topics[0]: wrong length: want 32 bytes, got 2");
      await expectRpcError(node.client.eth_getLogs({ topics: [[A, "0x12"]] }), -32602, "invalid argument 0: field topics[0][1]: wrong length: want 32 bytes, got 1");
      await expectRpcError(node.client.eth_getLogs({ address: "0x12" }), -32602, "invalid argument 0: field address: wrong length: want 20 bytes, got 1");
      await expectRpcError(node.client.eth_getLogs({ fromBlock: "0x01" }), -32602, "invalid argument 0: field fromBlock: hex number with leading zero digits");
    });
  });
});

describe("eth_getLogs limits", function () {
  this.timeout(60_000);
  let node: TestNode;
  let events: EventsContract;
  before(async () => {
    node = await startTestNode({ chain: { logs: { blockRangeLimit: 3, resultLimit: 4, filterTimeoutMs: 60_000 } } });
    events = await deployEvents(node.client); // block 1
    await events.emitPairs([[A, A], [A, B], [A, C]]); // block 2: 3 logs
    await events.emitPairs([[B, A], [B, B]]); // block 3: 2 logs
  });
  after(() => node.stop());

  it("a range of more blocks than the limit answers -32012, a range at the limit is served", async () => {
    await expectRpcError(node.client.eth_getLogs({ fromBlock: "0x0", toBlock: "0x3" }), -32012, "Cannot query more than 3 blocks at once");
    const logs = await node.client.eth_getLogs({ fromBlock: "0x1", toBlock: "0x3", topics: [A] });
    expectValidResult("eth_getLogs", logs);
    expect(logs).to.have.length(3);
  });

  it("the limit applies to the blocks that exist: a range cut at the head may be long on paper", async () => {
    expect(await node.client.eth_getLogs({ fromBlock: "0x2", toBlock: "0xffffffff", topics: [B] })).to.have.length(2);
  });

  it("more matching logs than the limit answers -32012, as many as the limit are served", async () => {
    await expectRpcError(node.client.eth_getLogs({ fromBlock: "0x1", toBlock: "0x3" }), -32012, "Filter returned more than 4 logs.");
    expect(await node.client.eth_getLogs({ fromBlock: "0x1", toBlock: "0x3", topics: [null, [A, B]] })).to.have.length(4);
  });

  it("eth_getFilterLogs has the same limits, and the filter survives the refusal", async () => {
    const id = await node.client.eth_newFilter({ fromBlock: "0x1", toBlock: "0x3" });
    expectValidResult("eth_newFilter", id);
    await expectRpcError(node.client.eth_getFilterLogs(id), -32012, "Filter returned more than 4 logs.");
    expect(await node.client.eth_getFilterChanges(id)).to.deep.equal([]);
  });
});
