// Filters through real HTTP: log filters polled across blocks (raw client and ethers v6), block
// and pending-transaction filters, uninstalling, expiry, and bad input that changes nothing.
import { expect } from "chai";
import { AbiCoder, Contract, JsonRpcProvider } from "ethers";
import { compileFixture } from "../../helpers/solidity.js";
import { cow, deployEvents, topic, type EventsContract } from "../../helpers/events.js";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const A = topic(0xa);
const B = topic(0xb);
const C = topic(0xc);
const stranger = "0x00000000000000000000000000000000000000aa";

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe("filters", function () {
  this.timeout(60_000);
  let node: TestNode;
  let events: EventsContract;

  async function changes(id: string) {
    const result = await node.client.eth_getFilterChanges(id);
    expectValidResult("eth_getFilterChanges", result);
    return result;
  }

  beforeEach(async () => {
    node = await startTestNode();
    events = await deployEvents(node.client);
  });
  afterEach(() => node.stop());

  describe("log filters", () => {
    it("deliver each matching log of the blocks mined since the last poll exactly once", async () => {
      const id = await node.client.eth_newFilter({ address: events.address, topics: [A] });
      expectValidResult("eth_newFilter", id);
      expect(await changes(id)).to.deep.equal([]);
      const first = await events.emitTwo(A, B);
      await events.emitTwo(B, A); // no match
      const second = await events.emitPairs([[A, C], [C, C], [A, A]]);
      const delivered = (await changes(id)) as { transactionHash: string; topics: string[]; logIndex: string; removed: boolean }[];
      expect(delivered.map((log) => [log.transactionHash, log.topics, log.logIndex, log.removed])).to.deep.equal([
        [first, [A, B], "0x0", false],
        [second, [A, C], "0x0", false],
        [second, [A, A], "0x2", false],
      ]);
      expect(await changes(id)).to.deep.equal([]);
      const third = await events.emitTwo(A, C);
      expect(((await changes(id)) as { transactionHash: string }[]).map((log) => log.transactionHash)).to.deep.equal([third]);
      expect(await changes(id)).to.deep.equal([]);
    });

    it("eth_getFilterLogs answers every match of the filter's range, polled or not, and keeps the changes", async () => {
      await events.emitTwo(A, B);
      const id = await node.client.eth_newFilter({ fromBlock: "earliest", topics: [null, B] });
      await events.emitTwo(C, B);
      const logs = await node.client.eth_getFilterLogs(id);
      expectValidResult("eth_getFilterLogs", logs);
      expect(logs.map((log) => log.topics)).to.deep.equal([
        [A, B],
        [C, B],
      ]);
      expect(((await changes(id)) as { topics: string[] }[]).map((log) => log.topics)).to.deep.equal([[C, B]]);
    });

    it("respect the filter's block bounds", async () => {
      const head = BigInt(await node.client.eth_blockNumber());
      const id = await node.client.eth_newFilter({ fromBlock: `0x${(head + 2n).toString(16)}`, toBlock: `0x${(head + 3n).toString(16)}` });
      await events.emitTwo(A, A); // head + 1: before the range
      await events.emitTwo(B, B); // head + 2
      await events.emitTwo(C, C); // head + 3
      await events.emitTwo(A, B); // head + 4: after the range
      expect(((await changes(id)) as { topics: string[] }[]).map((log) => log.topics)).to.deep.equal([
        [B, B],
        [C, C],
      ]);
    });

    it("serve ethers v6 contract events through eth_newFilter and eth_getFilterChanges, each event once", async () => {
      const token = compileFixture("Token.sol", "Token");
      const watched = await startTestNode({ logLevel: "debug" });
      // Without the polling option ethers v6 subscribes with eth_newFilter and polls eth_getFilterChanges.
      const provider = new JsonRpcProvider(watched.url, 33, { staticNetwork: true });
      provider.pollingInterval = 20;
      try {
        const constructorArguments = AbiCoder.defaultAbiCoder().encode(["string", "string", "uint256"], ["T", "T", 1000n]).slice(2);
        const deployHash = await watched.client.eth_sendTransaction({ from: cow, data: `${token.bytecode}${constructorArguments}`, gas: "0x300000" });
        const tokenAddress = (await watched.client.eth_getTransactionReceipt(deployHash))!.contractAddress!;
        const contract = new Contract(tokenAddress, token.abi as never, provider);
        const seen: bigint[] = [];
        await contract.on("Transfer", (_from: string, _to: string, value: bigint) => {
          seen.push(value);
        });
        const installed = () => watched.logs.some((record) => record.method === "eth_newFilter");
        for (let attempt = 0; attempt < 100 && !installed(); attempt++) await sleep(20);
        for (const value of [1n, 2n, 3n]) {
          await watched.client.eth_sendTransaction({ from: cow, to: tokenAddress, data: contract.interface.encodeFunctionData("transfer", [stranger, value]), gas: "0x20000" });
        }
        // ethers polls a filter when it sees a new block: keep mining plain transfers until all
        // three arrived, then a few more blocks, after which nothing may have come twice.
        const mineBlock = () => watched.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
        for (let attempt = 0; attempt < 100 && seen.length < 3; attempt++) {
          await mineBlock();
          await sleep(40);
        }
        for (let extra = 0; extra < 3; extra++) {
          await mineBlock();
          await sleep(40);
        }
        await contract.removeAllListeners();
        expect(seen).to.deep.equal([1n, 2n, 3n]);
        expect(watched.logs.some((record) => record.method === "eth_getFilterChanges" && record.errorCode === undefined)).to.equal(true);
      } finally {
        provider.destroy();
        await watched.stop();
      }
    });
  });

  describe("block filters", () => {
    it("deliver the hash of each new block once", async () => {
      const id = await node.client.eth_newBlockFilter();
      expectValidResult("eth_newBlockFilter", id);
      expect(await changes(id)).to.deep.equal([]);
      await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
      await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
      const head = BigInt(await node.client.eth_blockNumber());
      const expected = [(await node.client.eth_getBlockByNumber(`0x${(head - 1n).toString(16)}`, false))!.hash, (await node.client.eth_getBlockByNumber("latest", false))!.hash];
      expect(await changes(id)).to.deep.equal(expected);
      expect(await changes(id)).to.deep.equal([]);
    });

    it("have no logs: eth_getFilterLogs on a block filter is filter not found", async () => {
      const id = await node.client.eth_newBlockFilter();
      await expectRpcError(node.client.eth_getFilterLogs(id), -32000, "filter not found");
      expect(await changes(id)).to.deep.equal([]);
    });
  });

  describe("pending-transaction filters", () => {
    it("deliver the hash of each transaction entering the pool once", async () => {
      const id = await node.client.eth_newPendingTransactionFilter();
      expectValidResult("eth_newPendingTransactionFilter", id);
      const first = await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
      const second = await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x2" });
      expect(await changes(id)).to.deep.equal([first, second]);
      expect(await changes(id)).to.deep.equal([]);
    });

    it("deliver queued transactions when the nonce gap before them is filled", async () => {
      const stopped = await startTestNode({ chain: { mining: { kind: "off" } } });
      try {
        const id = await stopped.client.eth_newPendingTransactionFilter();
        const later = await stopped.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1", nonce: "0x1" });
        expect(await stopped.client.eth_getFilterChanges(id)).to.deep.equal([]);
        const gapFiller = await stopped.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1", nonce: "0x0" });
        const released = await stopped.client.eth_getFilterChanges(id);
        expectValidResult("eth_getFilterChanges", released);
        expect(released).to.deep.equal([gapFiller, later]);
      } finally {
        await stopped.stop();
      }
    });

    it("deliver the transactions a revert puts back into the pool, also to filters installed after they first arrived", async () => {
      const stopped = await startTestNode({ chain: { mining: { kind: "off" } } });
      try {
        const beforeSend = await stopped.client.evm_snapshot();
        const sent = await stopped.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
        const holdingIt = await stopped.client.evm_snapshot();
        await stopped.client.evm_mine();
        const id = await stopped.client.eth_newPendingTransactionFilter();
        expect(await stopped.client.evm_revert(holdingIt)).to.equal(true);
        expect(await stopped.client.eth_getFilterChanges(id)).to.deep.equal([sent]);
        // A revert that leaves the pool as it was announces nothing.
        expect(await stopped.client.evm_revert(holdingIt)).to.equal(true);
        expect(await stopped.client.eth_getFilterChanges(id)).to.deep.equal([]);
        expect(await stopped.client.evm_revert(beforeSend)).to.equal(true);
        expect(await stopped.client.eth_getFilterChanges(id)).to.deep.equal([]);
      } finally {
        await stopped.stop();
      }
    });
  });

  describe("limits", () => {
    it("an answer past the response limit carries the oldest changes that fit; the rest come at the next poll", async () => {
      const small = await startTestNode({ rpc: { responseLimitBytes: 20_000 } });
      try {
        const emitter = await deployEvents(small.client);
        const id = await small.client.eth_newFilter({ address: emitter.address });
        // 60 logs of about 600 bytes each: some 36 KB of changes.
        const hash = await emitter.emitPairs(Array.from({ length: 30 }, (_, index): [string, string] => [topic(index), topic(index + 100)]));
        const first = await small.client.eth_getFilterChanges(id);
        const second = await small.client.eth_getFilterChanges(id);
        expect(first.length).to.be.within(1, 59);
        expect(JSON.stringify(first).length).to.be.below(20_000);
        expect(await small.client.eth_getFilterChanges(id)).to.deep.equal([]);
        const receipt = await small.client.eth_getTransactionReceipt(hash);
        expect([...first, ...second]).to.deep.equal(receipt!.logs);
      } finally {
        await small.stop();
      }
    });
  });

  describe("uninstalling and expiry", () => {
    it("eth_uninstallFilter answers true, then false; the id is then unknown", async () => {
      for (const install of [() => node.client.eth_newFilter({}), () => node.client.eth_newBlockFilter(), () => node.client.eth_newPendingTransactionFilter()]) {
        const id = await install();
        const removed = await node.client.eth_uninstallFilter(id);
        expectValidResult("eth_uninstallFilter", removed);
        expect(removed).to.equal(true);
        expect(await node.client.eth_uninstallFilter(id)).to.equal(false);
        await expectRpcError(node.client.eth_getFilterChanges(id), -32000, "filter not found");
      }
    });

    it("a filter not polled within the timeout is removed; polling keeps it alive", async () => {
      const quick = await startTestNode({ chain: { logs: { blockRangeLimit: 5000, resultLimit: 20_000, filterTimeoutMs: 300 } } });
      try {
        const polled = await quick.client.eth_newBlockFilter();
        const idle = await quick.client.eth_newFilter({});
        for (let round = 0; round < 4; round++) {
          await sleep(120);
          expect(await quick.client.eth_getFilterChanges(polled)).to.deep.equal([]);
        }
        await expectRpcError(quick.client.eth_getFilterChanges(idle), -32000, "filter not found");
        await expectRpcError(quick.client.eth_getFilterLogs(idle), -32000, "filter not found");
        expect(await quick.client.eth_uninstallFilter(idle)).to.equal(false);
        expect(await quick.client.eth_uninstallFilter(polled)).to.equal(true);
      } finally {
        await quick.stop();
      }
    });
  });

  describe("bad input changes nothing", () => {
    it("unknown ids answer filter not found; a bad id is an invalid argument; the filter still works", async () => {
      const id = await node.client.eth_newFilter({ topics: [A] });
      await expectRpcError(node.client.eth_getFilterChanges("0x1"), -32000, "filter not found");
      await expectRpcError(node.client.eth_getFilterLogs("0x1"), -32000, "filter not found");
      expect(await node.client.eth_uninstallFilter("0x1")).to.equal(false);
      await expectRpcError(node.client.eth_getFilterChanges("0x01"), -32602, "invalid argument 0: hex number with leading zero digits");
      await expectRpcError(node.client.eth_getFilterChanges("abc"), -32602, "invalid argument 0: hex string without 0x prefix");
      const hash = await events.emitTwo(A, B);
      expect(((await changes(id)) as { transactionHash: string }[]).map((log) => log.transactionHash)).to.deep.equal([hash]);
    });

    it("eth_newFilter refuses blockhash, too many topics, bad topics and reversed ranges, and installs nothing", async () => {
      const blockFilter = await node.client.eth_newBlockFilter();
      await expectRpcError(node.client.eth_newFilter({ blockhash: topic(1) } as never), -32602, 'invalid argument 0: unknown field "blockhash"');
      await expectRpcError(node.client.eth_newFilter({ topics: [A, B, C, A, B] as never }), -32602, "invalid argument 0: field topics: too many entries: at most 4");
      await expectRpcError(node.client.eth_newFilter({ topics: [null, "0xabcd"] }), -32602, "invalid argument 0: field topics[1]: wrong length: want 32 bytes, got 2");
      await expectRpcError(node.client.eth_newFilter({ fromBlock: "0x9", toBlock: "0x2" }), -32602, "invalid argument 0: fromBlock 0x9 is after toBlock 0x2");
      // The block filter sees the next block and nothing else changed.
      await events.emitTwo(A, B);
      expect(await changes(blockFilter)).to.have.length(1);
      const head = await node.client.eth_getBlockByNumber("latest", false);
      expect(await node.client.eth_getLogs({ blockhash: head!.hash! })).to.have.length(1);
    });

    it("ids are QUANTITYs and any spelling of the same number finds the filter", async () => {
      const id = await node.client.eth_newBlockFilter();
      expect(id).to.match(/^0x[1-9a-f][0-9a-f]*$/);
      expect(await node.client.eth_getFilterChanges(id.toUpperCase().replace("0X", "0x"))).to.deep.equal([]);
    });
  });
});
