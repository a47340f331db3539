// ethers, web3.js and viem each subscribe over WebSocket, through their own subscription APIs, to
// new heads, logs (an address and a first topic) and pending transactions on a node on 127.0.0.1,
// and receive what a burst of sends made, in the order the chain made it. Then evm_revert takes
// the burst's blocks away: each library receives the logs again with removed: true (newest block
// first), and the heads go on from the block the chain went back to.
import { expect } from "chai";
import { SocketSubscriber, WebSocketProvider, type Log as EthersLog, type SocketProvider } from "ethers";
import { createPublicClient, webSocket, type Hex } from "viem";
import { Web3, WebSocketProvider as Web3WebSocketProvider } from "web3";
import { deployEvents, topic, type EventsContract } from "../../helpers/events.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const A = topic(0xa);
const B = topic(0xb);
const C = topic(0xc);
/** The burst: one emitTwo call each, sent at once; those whose first topic is A match the log filter. */
const pairs: [string, string][] = [[A, B], [B, A], [A, C], [C, C], [A, A], [A, B], [C, A], [A, C]];
const twoTopics = {
  type: "event",
  name: "TwoTopics",
  anonymous: true,
  inputs: [
    { name: "first", type: "bytes32", indexed: true },
    { name: "second", type: "bytes32", indexed: true },
  ],
} as const;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitUntil(done: () => boolean, what: () => string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await sleep(20);
  }
}

function wsUrl(httpUrl: string): string {
  return httpUrl.replace(/^http/, "ws");
}

/** What a library received, reduced to what the chain can be asked about. */
interface Received {
  heads: { number: bigint; hash: string | undefined }[];
  pending: string[];
  logs: { transactionHash: string; blockHash: string; blockNumber: bigint; removed: boolean }[];
}

/** The chain's side of a burst: its blocks' heads and transactions in mined order. */
interface Burst {
  start: bigint;
  heads: { number: bigint; hash: string }[];
  mined: string[];
  /** The mined transactions whose log matches the filter (first topic A), in block order. */
  matching: string[];
}

async function sendBurst(node: TestNode, events: EventsContract): Promise<Burst> {
  const start = BigInt(await node.client.eth_blockNumber());
  const sent = await Promise.all(pairs.map(([first, second]) => events.emitTwo(first, second)));
  const heads: Burst["heads"] = [];
  const mined: string[] = [];
  for (let index = 1; index <= pairs.length; index++) {
    const block = (await node.client.eth_getBlockByNumber(`0x${(start + BigInt(index)).toString(16)}`, false))!;
    heads.push({ number: BigInt(block.number!), hash: block.hash! });
    expect(block.transactions, `block ${block.number}`).to.have.length(1);
    mined.push(block.transactions[0] as string);
  }
  expect([...mined].sort()).to.deep.equal([...sent].sort());
  const matching = mined.filter((hash) => pairs[sent.indexOf(hash)]![0] === A);
  return { start, heads, mined, matching };
}

/**
 * Sends the burst, checks what `received` got, reverts it, checks the removed logs, then sends
 * once more and checks the heads go on from the block the chain went back to.
 */
async function burstThenRevert(node: TestNode, events: EventsContract, received: Received): Promise<void> {
  const snapshot = await node.client.evm_snapshot();
  const burst = await sendBurst(node, events);
  await waitUntil(
    () => received.heads.length >= pairs.length && received.pending.length >= pairs.length && received.logs.length >= burst.matching.length,
    () => `${received.heads.length} heads, ${received.pending.length} pending, ${received.logs.length} logs`,
  );
  // Heads: one per block, consecutive, as the chain has them.
  expect(received.heads.map((head) => head.number)).to.deep.equal(burst.heads.map((head) => head.number));
  for (const [index, head] of received.heads.entries()) if (head.hash !== undefined) expect(head.hash).to.equal(burst.heads[index]!.hash);
  // Pending transactions in the order they were mined (automine: the order the pool took them).
  expect(received.pending).to.deep.equal(burst.mined);
  // Logs: the matching ones, in block order, none removed.
  expect(received.logs.map((log) => [log.transactionHash, log.removed])).to.deep.equal(burst.matching.map((hash) => [hash, false]));
  const blocksOfLogs = received.logs.map((log) => log.blockNumber);
  expect(blocksOfLogs).to.deep.equal([...blocksOfLogs].sort((x, y) => (x < y ? -1 : 1)));

  expect(await node.client.evm_revert(snapshot)).to.equal(true);
  const removedCount = burst.matching.length;
  await waitUntil(
    () => received.logs.length >= 2 * removedCount,
    () => `${received.logs.length - removedCount} of ${removedCount} removed logs`,
  );
  // The removed blocks come newest first, as the chain reports them, each log as it was delivered.
  const delivered = received.logs.slice(0, removedCount);
  const removed = received.logs.slice(removedCount);
  expect(removed.map((log) => [log.transactionHash, log.blockHash, log.blockNumber, log.removed])).to.deep.equal(
    [...delivered].reverse().map((log) => [log.transactionHash, log.blockHash, log.blockNumber, true]),
  );
  expect(received.heads).to.have.length(pairs.length, "no head for a revert");

  // The chain goes on from where it went back to: the next head has the burst's first number again.
  const after = await events.emitTwo(A, C);
  await waitUntil(
    () => received.heads.length > pairs.length && received.logs.length > 2 * removedCount,
    () => `${received.heads.length} heads, ${received.logs.length} logs after the revert`,
  );
  const next = (await node.client.eth_getBlockByNumber(`0x${(burst.start + 1n).toString(16)}`, false))!;
  expect(received.heads.at(-1)!.number).to.equal(burst.start + 1n);
  if (received.heads.at(-1)!.hash !== undefined) expect(received.heads.at(-1)!.hash).to.equal(next.hash);
  expect(next.hash).to.not.equal(burst.heads[0]!.hash);
  expect(received.logs.at(-1)).to.deep.include({ transactionHash: after, blockHash: next.hash, blockNumber: burst.start + 1n, removed: false });
  expect(received.pending.at(-1)).to.equal(after);
}

/** ethers' raw logs subscription: every log, removed ones included (ethers' filter events leave those out). */
class EthersLogStream extends SocketSubscriber {
  readonly logs: EthersLog[] = [];
  override async _emit(provider: SocketProvider, message: unknown): Promise<void> {
    this.logs.push(provider._wrapLog(message as never, provider._network));
  }
}

describe("WebSocket subscriptions from client libraries", function () {
  this.timeout(30_000);
  let node: TestNode;
  let events: EventsContract;

  beforeEach(async () => {
    node = await startTestNode();
    events = await deployEvents(node.client);
  });
  afterEach(async () => {
    await node.stop();
  });

  it("ethers: block, pending and log events, and the removed logs after evm_revert", async () => {
    const provider = new WebSocketProvider(wsUrl(node.url));
    try {
      expect(Number((await provider.getNetwork()).chainId)).to.equal(33);
      const received: Received = { heads: [], pending: [], logs: [] };
      const filter = { address: events.address, topics: [A] };
      const filtered: string[] = [];
      await provider.on("block", (number: number) => received.heads.push({ number: BigInt(number), hash: undefined }));
      await provider.on("pending", (hash: string) => received.pending.push(hash));
      await provider.on(filter, (log: EthersLog) => filtered.push(log.transactionHash));
      // Removed logs go to ethers' orphan events, not to the filter's listeners: a logs
      // subscription of ethers' own SocketSubscriber receives all of them.
      const stream = new EthersLogStream(provider, ["logs", filter]);
      stream.start();
      Object.defineProperty(received, "logs", {
        get: () => stream.logs.map((log) => ({ transactionHash: log.transactionHash, blockHash: log.blockHash, blockNumber: BigInt(log.blockNumber), removed: log.removed })),
      });
      // ethers sends in order over the one socket: once this answer is in, every eth_subscribe's is.
      await provider.send("eth_blockNumber", []);
      await burstThenRevert(node, events, received);
      // The filter's listeners had the same logs as they came, and no removed one.
      const added = stream.logs.filter((log) => !log.removed).map((log) => log.transactionHash);
      await waitUntil(() => filtered.length >= added.length, () => `${filtered.length} of ${added.length} filter events`);
      expect(filtered).to.deep.equal(added);
      stream.stop();
    } finally {
      await provider.destroy();
    }
  });

  it("web3.js: newBlockHeaders, logs and newPendingTransactions, and the removed logs after evm_revert", async () => {
    const provider = new Web3WebSocketProvider(wsUrl(node.url));
    const web3 = new Web3(provider);
    try {
      expect(await web3.eth.getChainId()).to.equal(33n);
      const received: Received = { heads: [], pending: [], logs: [] };
      const heads = await web3.eth.subscribe("newBlockHeaders");
      const logs = await web3.eth.subscribe("logs", { address: events.address, topics: [A] });
      const pending = await web3.eth.subscribe("newPendingTransactions");
      heads.on("data", (header) => void received.heads.push({ number: BigInt(header.number as bigint), hash: String(header.hash) }));
      logs.on("data", (log) =>
        void received.logs.push({ transactionHash: String(log.transactionHash), blockHash: String(log.blockHash), blockNumber: BigInt(log.blockNumber as bigint), removed: log.removed === true }),
      );
      pending.on("data", (hash) => void received.pending.push(String(hash)));
      await burstThenRevert(node, events, received);
      await Promise.all([heads.unsubscribe(), logs.unsubscribe(), pending.unsubscribe()]);
    } finally {
      provider.disconnect();
    }
  });

  it("viem: watchBlocks, watchEvent and watchPendingTransactions over webSocket(), and the removed logs after evm_revert", async () => {
    const client = createPublicClient({ transport: webSocket(wsUrl(node.url)) });
    const rpc = await client.transport.getRpcClient();
    const unwatch: (() => void)[] = [];
    try {
      expect(await client.getChainId()).to.equal(33);
      const received: Received = { heads: [], pending: [], logs: [] };
      unwatch.push(
        client.watchBlocks({ onBlock: (block) => void received.heads.push({ number: block.number!, hash: block.hash! }) }),
        client.watchPendingTransactions({ onTransactions: (hashes) => void received.pending.push(...hashes) }),
        client.watchEvent({
          address: events.address as Hex,
          event: twoTopics,
          args: { first: A as Hex },
          onLogs: (logs) => {
            for (const log of logs) received.logs.push({ transactionHash: log.transactionHash!, blockHash: log.blockHash!, blockNumber: log.blockNumber!, removed: log.removed });
          },
        }),
      );
      // viem subscribes in the background: wait for the three subscription ids.
      await waitUntil(() => rpc.subscriptions.size === 3, () => `${rpc.subscriptions.size} of 3 subscriptions`);
      await burstThenRevert(node, events, received);
    } finally {
      for (const stop of unwatch) stop();
      rpc.close();
    }
  });
});
