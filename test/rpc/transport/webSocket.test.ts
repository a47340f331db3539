// JSON-RPC over WebSocket on the HTTP port, over real sockets on 127.0.0.1: calls and batches as
// over HTTP, the upgrade's Host and Origin rules, the limits (message size, connections,
// subscriptions, a slow reader's send buffer), and eth_subscribe: newHeads, logs (removed ones
// after evm_revert), newPendingTransactions, unsubscribing and closing. Then ethers' and web3.js'
// WebSocket providers.
import { expect } from "chai";
import { WebSocketProvider } from "ethers";
import { Web3, WebSocketProvider as Web3WebSocketProvider } from "web3";
import WebSocket from "ws";
import { cow, deployEvents, topic, type EventsContract } from "../../helpers/events.js";
import { postJson } from "../../helpers/http.js";
import { expectValidResult } from "../../helpers/results.js";
import { startServerWithHandlers, startTestNode, type TestNode } from "../../helpers/testNode.js";

const A = topic(0xa);
const B = topic(0xb);
const C = topic(0xc);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function wsUrl(httpUrl: string): string {
  return httpUrl.replace(/^http/, "ws");
}

interface Notification {
  subscription: string;
  result: unknown;
}

/** A raw WebSocket JSON-RPC client: answers by id, notifications kept in arrival order. */
class WsClient {
  readonly notifications: Notification[] = [];
  private nextId = 1;
  private readonly waiting = new Map<unknown, (answer: unknown) => void>();
  private readonly arrivals: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString()) as Record<string, unknown>;
      if (message.method === "eth_subscription") {
        this.notifications.push(message.params as Notification);
        for (const arrival of this.arrivals.splice(0)) arrival();
        return;
      }
      const id = Array.isArray(message) ? (message[0] as { id: unknown }).id : message.id;
      this.waiting.get(id)?.(message);
      this.waiting.delete(id);
    });
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new WsClient(ws)));
      ws.once("error", reject);
    });
  }

  /** Sends a text and waits for the answer carrying `id`. */
  sendRaw(text: string, id: unknown): Promise<unknown> {
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(text);
    });
  }

  request(method: string, params: unknown[] = []): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
    const id = this.nextId++;
    return this.sendRaw(JSON.stringify({ jsonrpc: "2.0", id, method, params }), id) as Promise<{ result?: unknown; error?: { code: number; message: string } }>;
  }

  async result(method: string, params: unknown[] = []): Promise<unknown> {
    const answer = await this.request(method, params);
    if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.message}`);
    return answer.result;
  }

  /** The notifications of one subscription. */
  of(subscription: string): unknown[] {
    return this.notifications.filter((item) => item.subscription === subscription).map((item) => item.result);
  }

  /** Waits until `subscription` has at least `count` notifications. */
  async waitFor(subscription: string, count: number, timeoutMs = 10_000): Promise<unknown[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.of(subscription).length < count) {
      if (Date.now() > deadline) throw new Error(`${subscription}: ${this.of(subscription).length} of ${count} notifications`);
      await new Promise<void>((resolve) => {
        this.arrivals.push(resolve);
        setTimeout(resolve, 100);
      });
    }
    return this.of(subscription);
  }

  closed(): Promise<{ code: number; reason: string }> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve({ code: 1006, reason: "" });
    return new Promise((resolve) => this.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  close(): Promise<unknown> {
    const closed = this.closed();
    this.ws.close();
    return closed;
  }
}

/** The HTTP status of a refused upgrade. */
function refusedUpgrade(url: string, headers: Record<string, string>): Promise<number> {
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    ws.on("error", () => undefined);
    ws.once("unexpected-response", (request, response) => {
      resolve(response.statusCode ?? 0);
      request.destroy();
    });
    ws.once("open", () => reject(new Error("the upgrade was accepted")));
  });
}

describe("WebSocket transport", function () {
  this.timeout(60_000);

  describe("calls", () => {
    let node: TestNode;
    let client: WsClient;
    before(async () => {
      node = await startTestNode({ rpc: { bodyLimitBytes: 1024, modules: "eth,net,web3" } });
      client = await WsClient.connect(wsUrl(node.url));
    });
    after(async () => {
      await client.close();
      await node.stop();
    });

    it("answers calls, a batch and refusals exactly as HTTP does", async () => {
      const bodies: [string, unknown][] = [
        [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }), 1],
        [JSON.stringify({ jsonrpc: "2.0", id: "b", method: "eth_getBlockByNumber", params: ["0x0", false] }), "b"],
        [
          JSON.stringify([
            { jsonrpc: "2.0", id: 3, method: "eth_blockNumber" },
            { jsonrpc: "2.0", id: 4, method: "net_version" },
            { jsonrpc: "2.0", id: 5, method: "eth_getBalance", params: ["0x12"] },
          ]),
          3,
        ],
        // Module exposure: evm and debug are not enabled on this node.
        [JSON.stringify({ jsonrpc: "2.0", id: 6, method: "evm_mine", params: [] }), 6],
        [JSON.stringify({ jsonrpc: "2.0", id: 7, method: "debug_traceTransaction", params: ["0x00"] }), 7],
        [JSON.stringify({ jsonrpc: "2.0", id: 8, method: "eth_nope" }), 8],
      ];
      for (const [body, id] of bodies) {
        const overHttp = (await postJson(node.url, JSON.parse(body))).json;
        expect(await client.sendRaw(body, id), body).to.deep.equal(overHttp);
      }
      expect(await client.request("evm_mine")).to.deep.include({ error: { code: -32601, message: "the method evm_mine does not exist/is not available" } });
    });

    it("answers a parse error with id null, and keeps the connection", async () => {
      expect(await client.sendRaw("{not json", null)).to.deep.include({ id: null });
      expect(await client.result("eth_chainId")).to.equal("0x21");
    });

    it("answers a message at the body limit and closes the connection at one byte more (1009)", async () => {
      const request = JSON.stringify({ jsonrpc: "2.0", id: 11, method: "web3_sha3", params: ["0x"] });
      const atLimit = request + " ".repeat(1024 - request.length);
      const other = await WsClient.connect(wsUrl(node.url));
      expect(await other.sendRaw(atLimit, 11)).to.deep.include({ id: 11, result: "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470" });
      const closed = other.closed();
      other.ws.send(`${atLimit} `);
      expect((await closed).code).to.equal(1009);
      // Others are not affected.
      expect(await client.result("eth_chainId")).to.equal("0x21");
    });

    it("eth_subscribe over HTTP answers geth's 'notifications not supported'", async () => {
      for (const [method, params] of [
        ["eth_subscribe", ["newHeads"]],
        ["eth_unsubscribe", ["0x1"]],
      ] as const) {
        const answer = (await postJson(node.url, { jsonrpc: "2.0", id: 1, method, params })).json;
        expect(answer).to.deep.equal({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: "notifications not supported" } });
      }
    });

    it("applies the Host (--vhosts) and Origin (--cors) rules to the upgrade", async () => {
      expect(await refusedUpgrade(wsUrl(node.url), { origin: "http://evil.test" })).to.equal(403);
      expect(await refusedUpgrade(wsUrl(node.url), { host: "evil.test" })).to.equal(403);
      const named = await WsClient.connect(wsUrl(node.url), { host: "localhost" });
      expect(await named.result("eth_chainId")).to.equal("0x21");
      await named.close();
    });
  });

  describe("limits", () => {
    it("refuses connections past --ws-max-connections with 503, and subscriptions past --ws-max-subscriptions", async () => {
      const node = await startTestNode({ rpc: { wsMaxConnections: 2, wsMaxSubscriptions: 3 } });
      try {
        const first = await WsClient.connect(wsUrl(node.url));
        const second = await WsClient.connect(wsUrl(node.url));
        expect(await refusedUpgrade(wsUrl(node.url), {})).to.equal(503);
        for (let index = 0; index < 3; index++) expectValidResult("eth_subscribe", await first.result("eth_subscribe", ["newHeads"]));
        expect(await first.request("eth_subscribe", ["newHeads"])).to.deep.include({
          error: { code: -32000, message: "too many subscriptions on this connection (3); unsubscribe some" },
        });
        // Per connection: the second has its own.
        expectValidResult("eth_subscribe", await second.result("eth_subscribe", ["logs", {}]));
        await first.close();
        await sleep(50);
        const third = await WsClient.connect(wsUrl(node.url));
        expect(await third.result("eth_chainId")).to.equal("0x21");
        await Promise.all([second.close(), third.close()]);
      } finally {
        await node.stop();
      }
    });

    it("closes the connection of a client that stops reading once 16 MiB wait for it, and logs why", async () => {
      const node = await startTestNode();
      try {
        const slow = await WsClient.connect(wsUrl(node.url));
        const closed = slow.closed();
        // rpc.discover answers the whole document (hundreds of KB): 200 of them are far past the limit.
        const discover = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "rpc.discover" });
        (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
        for (let index = 0; index < 200; index++) slow.ws.send(discover);
        const deadline = Date.now() + 20_000;
        while (!node.logs.some((record) => String(record.msg).includes("does not read")) && Date.now() < deadline) await sleep(50);
        const warning = node.logs.find((record) => String(record.msg).includes("does not read"));
        expect(warning, "the logged reason").to.not.equal(undefined);
        expect(warning!.limit).to.equal(16 * 1024 * 1024);
        expect(warning!.buffered as number).to.be.greaterThan(16 * 1024 * 1024);
        (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
        await closed;
        // The node goes on serving.
        const other = await WsClient.connect(wsUrl(node.url));
        expect(await other.result("eth_chainId")).to.equal("0x21");
        await other.close();
      } finally {
        await node.stop();
      }
    });

    it("ends a connection's subscriptions when it closes", async () => {
      const server = await startServerWithHandlers({});
      try {
        const client = await WsClient.connect(wsUrl(server.url));
        await client.result("eth_subscribe", ["newHeads"]);
        await client.result("eth_subscribe", ["logs", { topics: [A] }]);
        await client.result("eth_subscribe", ["newPendingTransactions"]);
        expect(server.subscriptions.size).to.equal(3);
        await client.close();
        await sleep(50);
        expect(server.subscriptions.size).to.equal(0);
      } finally {
        await server.stop();
      }
    });
  });

  describe("subscriptions", () => {
    let node: TestNode;
    let events: EventsContract;
    let client: WsClient;
    beforeEach(async () => {
      node = await startTestNode();
      events = await deployEvents(node.client);
      client = await WsClient.connect(wsUrl(node.url));
    });
    afterEach(async () => {
      await client.close();
      await node.stop();
    });

    it("newHeads, logs and newPendingTransactions receive what a burst of sends made, in order", async () => {
      const heads = (await client.result("eth_subscribe", ["newHeads"])) as string;
      const logs = (await client.result("eth_subscribe", ["logs", { address: events.address, topics: [A] }])) as string;
      const hashes = (await client.result("eth_subscribe", ["newPendingTransactions"])) as string;
      const whole = (await client.result("eth_subscribe", ["newPendingTransactions", true])) as string;
      const syncing = (await client.result("eth_subscribe", ["syncing"])) as string;
      const startNumber = BigInt(await node.client.eth_blockNumber());
      const pairs: [string, string][] = [[A, B], [B, A], [A, C], [C, C], [A, A], [A, B], [C, A], [A, C]];
      const sent = await Promise.all(pairs.map(([first, second]) => events.emitTwo(first, second)));
      const expectedLogs = sent.filter((_hash, index) => pairs[index]![0] === A);
      const [headItems, logItems, hashItems, wholeItems] = await Promise.all([
        client.waitFor(heads, pairs.length),
        client.waitFor(logs, expectedLogs.length),
        client.waitFor(hashes, pairs.length),
        client.waitFor(whole, pairs.length),
      ]);
      expect(client.of(syncing)).to.deep.equal([false]);
      // Heads: one per block, consecutive, each as eth_getBlockByNumber's without transactions.
      const blocks = headItems as Record<string, unknown>[];
      expect(blocks.map((head) => BigInt(head.number as string))).to.deep.equal(pairs.map((_pair, index) => startNumber + BigInt(index) + 1n));
      for (const head of blocks) {
        const { transactions, ...header } = (await node.client.eth_getBlockByNumber(head.number as string, false)) as unknown as Record<string, unknown>;
        expect(transactions).to.have.length(1);
        expect(head).to.deep.equal(header);
      }
      // Pending transactions, in the order they were sent; the whole ones as eth_getTransactionByHash's before mining.
      const minedOrder = await Promise.all(blocks.map(async (head) => ((await node.client.eth_getBlockByHash(head.hash as string, false))!.transactions as string[])[0]));
      expect(hashItems).to.deep.equal(minedOrder);
      expect(new Set(hashItems)).to.deep.equal(new Set(sent));
      expect((wholeItems as { hash: string; from: string; blockHash: null }[]).map((item) => [item.hash, item.from, item.blockHash])).to.deep.equal(minedOrder.map((hash) => [hash, cow, null]));
      // Logs: the matching ones, in block order.
      const located = logItems as { transactionHash: string; topics: string[]; removed: boolean; address: string }[];
      expect(located.map((log) => log.transactionHash)).to.deep.equal(minedOrder.filter((hash) => expectedLogs.includes(hash)));
      for (const log of located) {
        expect(log.topics[0]).to.equal(A);
        expect(log.removed).to.equal(false);
        expect(log.address).to.equal(events.address);
      }
      // Each kind arrived in the chain's order against the others: a block's head before its logs.
      const order = client.notifications.filter((item) => item.subscription === heads || item.subscription === logs);
      let lastHead = -1n;
      for (const item of order) {
        if (item.subscription === heads) lastHead = BigInt((item.result as { number: string }).number);
        else expect(BigInt((item.result as { blockNumber: string }).blockNumber)).to.equal(lastHead);
      }
    });

    it("delivers logs again with removed: true when evm_revert takes their blocks away", async () => {
      const logs = (await client.result("eth_subscribe", ["logs", { topics: [[A, B]] }])) as string;
      const snapshot = await node.client.evm_snapshot();
      const first = await events.emitTwo(A, C);
      const second = await events.emitPairs([[B, C], [C, C], [A, B]]);
      await client.waitFor(logs, 3);
      expect(await node.client.evm_revert(snapshot)).to.equal(true);
      const all = (await client.waitFor(logs, 6)) as { transactionHash: string; logIndex: string; removed: boolean; blockHash: string }[];
      expect(all.slice(0, 3).map((log) => [log.transactionHash, log.logIndex, log.removed])).to.deep.equal([
        [first, "0x0", false],
        [second, "0x0", false],
        [second, "0x2", false],
      ]);
      // The removed blocks come newest first, as the chain reports them.
      expect(all.slice(3).map((log) => [log.transactionHash, log.logIndex, log.removed])).to.deep.equal([
        [second, "0x0", true],
        [second, "0x2", true],
        [first, "0x0", true],
      ]);
      expect(all.slice(3).map((log) => log.blockHash)).to.deep.equal([all[1]!.blockHash, all[2]!.blockHash, all[0]!.blockHash]);
    });

    it("eth_unsubscribe stops the notifications; a second time answers false", async () => {
      const heads = (await client.result("eth_subscribe", ["newHeads"])) as string;
      await node.client.evm_mine();
      await client.waitFor(heads, 1);
      const answer = await client.result("eth_unsubscribe", [heads]);
      expectValidResult("eth_unsubscribe", answer);
      expect(answer).to.equal(true);
      await node.client.evm_mine();
      await node.client.evm_mine();
      await sleep(100);
      expect(client.of(heads)).to.have.length(1);
      expect(await client.result("eth_unsubscribe", [heads])).to.equal(false);
    });

    it("refuses bad subscription parameters with -32602", async () => {
      for (const params of [["newBlocks"], ["logs", true], ["newHeads", {}], ["newPendingTransactions", { address: cow }], ["logs", { fromBlock: "0x1" }], []]) {
        const answer = await client.request("eth_subscribe", params);
        expect(answer.error?.code, JSON.stringify(params)).to.equal(-32602);
      }
    });

    it("a subscription made in a batch gets its notifications after the batch's answer", async () => {
      const answer = (await client.sendRaw(
        JSON.stringify([
          { jsonrpc: "2.0", id: "s", method: "eth_subscribe", params: ["newPendingTransactions"] },
          { jsonrpc: "2.0", id: "t", method: "eth_sendTransaction", params: [{ from: cow, to: cow, value: "0x1" }] },
        ]),
        "s",
      )) as { id: string; result: string }[];
      const [subscription, sent] = answer.map((item) => item.result);
      expect(await client.waitFor(subscription!, 1)).to.deep.equal([sent]);
    });
  });

  describe("client libraries", () => {
    let node: TestNode;
    let events: EventsContract;
    beforeEach(async () => {
      node = await startTestNode();
      events = await deployEvents(node.client);
    });
    afterEach(() => node.stop());

    it("ethers' WebSocketProvider reads, follows blocks and receives contract logs", async () => {
      const provider = new WebSocketProvider(wsUrl(node.url));
      try {
        expect(Number((await provider.getNetwork()).chainId)).to.equal(33);
        const start = await provider.getBlockNumber();
        const blocks: number[] = [];
        const logs: string[] = [];
        await provider.on("block", (number: number) => blocks.push(number));
        await provider.on({ address: events.address, topics: [A] }, (log: { transactionHash: string }) => logs.push(log.transactionHash));
        await sleep(100);
        const sent = [await events.emitTwo(A, B), await events.emitTwo(B, B), await events.emitTwo(A, C)];
        const deadline = Date.now() + 10_000;
        while ((blocks.length < 3 || logs.length < 2) && Date.now() < deadline) await sleep(50);
        expect(blocks).to.deep.equal([start + 1, start + 2, start + 3]);
        expect(logs).to.deep.equal([sent[0], sent[2]]);
      } finally {
        await provider.destroy();
      }
    });

    it("web3.js' WebSocketProvider reads and receives newBlockHeaders and pending transactions", async () => {
      const provider = new Web3WebSocketProvider(wsUrl(node.url));
      const web3 = new Web3(provider);
      try {
        expect(await web3.eth.getChainId()).to.equal(33n);
        const heads = await web3.eth.subscribe("newBlockHeaders");
        const pending = await web3.eth.subscribe("newPendingTransactions");
        const numbers: bigint[] = [];
        const hashes: string[] = [];
        heads.on("data", (header) => void numbers.push(BigInt(header.number as bigint)));
        pending.on("data", (hash) => void hashes.push(String(hash)));
        const start = BigInt(await node.client.eth_blockNumber());
        const sent = [await events.emitTwo(A, B), await events.emitTwo(C, C)];
        const deadline = Date.now() + 10_000;
        while ((numbers.length < 2 || hashes.length < 2) && Date.now() < deadline) await sleep(50);
        expect(numbers).to.deep.equal([start + 1n, start + 2n]);
        expect(hashes).to.deep.equal(sent);
        await heads.unsubscribe();
        await pending.unsubscribe();
      } finally {
        provider.disconnect();
      }
    });
  });
});
