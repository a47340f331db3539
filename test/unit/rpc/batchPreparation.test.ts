// The dispatcher tells prepareBatch of a batch's requests before it runs them: the well-formed ones
// of enabled modules, parameters unchecked; and calls what it answered once the batch is done,
// whatever its requests did. A single request is not a batch.
import { expect } from "chai";
import { rpcMethodTable } from "../../../generated/methodTable.js";
import { createLogger } from "../../../src/common/logger.js";
import { createDispatcher, type BatchRequest, type RpcHandlerSet } from "../../../src/rpc/dispatch.js";

/** Every implemented method answers "0x1", except web3_sha3, which fails; `ran` records the calls. */
function recordingHandlers(ran: string[]): RpcHandlerSet {
  const entries = [...rpcMethodTable.values()].filter((entry) => entry.implemented);
  return Object.fromEntries(
    entries.map((entry) => [
      entry.name,
      async () => {
        ran.push(entry.name);
        if (entry.name === "web3_sha3") throw new Error("the handler broke");
        return "0x1";
      },
    ]),
  ) as unknown as RpcHandlerSet;
}

describe("rpc/dispatch: preparing a batch", () => {
  const ran: string[] = [];
  const events: string[] = [];
  let told: BatchRequest[][] = [];
  const dispatcher = createDispatcher({
    handlers: recordingHandlers(ran),
    enabledModules: new Set(["eth", "web3"]),
    batchLimit: 10,
    responseLimitBytes: 1 << 20,
    jsonShapeLimits: { maxDepth: 128, maxValues: 20_000 },
    discoverDocumentJson: "{}",
    prepareBatch: (requests) => {
      told.push([...requests]);
      events.push(`prepared with ${ran.length} run`);
      return () => events.push(`finished with ${ran.length} run`);
    },
    log: createLogger("silent"),
  });

  beforeEach(() => {
    ran.length = 0;
    events.length = 0;
    told = [];
  });

  it("is told of the well-formed requests of enabled modules before any runs, and finishes after all", async () => {
    const batch = [
      { jsonrpc: "2.0", id: 1, method: "eth_sendRawTransaction", params: ["0x12"] },
      { jsonrpc: "2.0", id: 2, method: "eth_chainId" },
      "junk",
      { jsonrpc: "2.0", id: 3, method: "net_version", params: [] },
      { jsonrpc: "2.0", id: 4, method: "foo_bar", params: [] },
      { jsonrpc: "2.0", id: 5, method: "eth_getBalance", params: { named: true } },
      { jsonrpc: "2.0", id: 6, method: "web3_sha3", params: ["0x"] },
    ];
    const answer = JSON.parse((await dispatcher.handle(JSON.stringify(batch))) as string) as { id: unknown }[];
    expect(answer.map(({ id }) => id)).to.deep.equal([1, 2, null, 3, 4, 5, 6]);
    expect(told).to.deep.equal([
      [
        { method: "eth_sendRawTransaction", params: ["0x12"] },
        { method: "eth_chainId", params: [] },
        { method: "web3_sha3", params: ["0x"] },
      ],
    ]);
    expect(ran).to.deep.equal(["eth_sendRawTransaction", "eth_chainId", "web3_sha3"]);
    expect(events).to.deep.equal(["prepared with 0 run", "finished with 3 run"]);
  });

  it("finishes a batch cut short by its size limit, and is not told of a single request", async () => {
    const small = createDispatcher({
      handlers: recordingHandlers(ran),
      enabledModules: new Set(["eth"]),
      batchLimit: 10,
      responseLimitBytes: 60,
      jsonShapeLimits: { maxDepth: 128, maxValues: 20_000 },
      discoverDocumentJson: "{}",
      prepareBatch: () => () => events.push("finished"),
      log: createLogger("silent"),
    });
    const call = (id: number) => ({ jsonrpc: "2.0", id, method: "eth_chainId" });
    await small.handle(JSON.stringify([call(1), call(2), call(3)]));
    expect(ran.length).to.be.lessThan(3);
    expect(events).to.deep.equal(["finished"]);
    await small.handle(JSON.stringify(call(4)));
    expect(events).to.deep.equal(["finished"]);
  });
});
