// Trace replays of stored blocks run on the call worker's thread when the chain is on disk: every
// trace (struct logs, callTracer, flat traces; of a transaction, a block, a filter) and every
// refusal (the time limit, the struct-log size cap) is the one the main thread makes, the worker
// really runs them, the traces-at-once gate still holds, and work the worker cannot do comes back.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Interface, Wallet, getBytes, keccak256, toUtf8Bytes } from "ethers";
import type { Block } from "../../../src/chain/block.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction, type ChainTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { OffloadLostError } from "../../../src/execution/callService.js";
import { CallWorkers } from "../../../src/node/callWorkers.js";
import { openChainServices, type ChainServices } from "../../../src/node/chainServices.js";
import { defaultNodeOptions } from "../../../src/node/options.js";
import type { LevelStore } from "../../../src/storage/levelStore.js";
import { defaultTraceServiceOptions, StructLogTraceJson, TraceService, type ReplayOffload, type TraceServiceOptions } from "../../../src/tracing/index.js";
import { compileFixture } from "../../helpers/solidity.js";

/** A trace or a refusal as text deep.equal compares: the JSON the RPC layer would send, errors by class and message. */
async function outcomeOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    const result = await run();
    if (result instanceof StructLogTraceJson) return { structLogs: result.parts.map((part) => (typeof part === "string" ? part : Buffer.from(part).toString("latin1"))).join(""), byteLength: result.byteLength };
    return { json: JSON.stringify(result) };
  } catch (error) {
    const failure = error as Error & { limitBytes?: number };
    return { refused: failure.constructor.name, message: failure.message, limitBytes: failure.limitBytes };
  }
}

describe("node/callWorkers: trace replays on a second thread", function () {
  this.timeout(60_000);
  const timeLimitMs = 30_000;
  let directory: string;
  let services: ChainServices;
  const owner = new Wallet(keccak256(toUtf8Bytes("cow")));
  const probe = new Interface(compileFixture("Probe.sol", "Probe").abi as never);
  let nonce = 0;
  let probeAddress = "";
  /** Transactions by name, all mined; `block` holds the last four together. */
  const hashes: Record<string, Uint8Array> = {};
  let block: Block;
  /** spin(12000): 1.5 million steps, far past a 50 ms limit. */
  let heavy: Uint8Array;

  const sign = async (data: string, gasLimit = 3_000_000n): Promise<ChainTransaction> => {
    const raw = await owner.signTransaction({ type: 0, chainId: 33n, nonce: nonce++, gasPrice: 0n, gasLimit, ...(probeAddress === "" ? { data } : { to: probeAddress, data }) });
    return decodeRawTransaction(getBytes(raw), services.common);
  };

  /** A TraceService on the node's chain and state that replays on the main thread only. */
  const mainThreadOnly = (options: Partial<TraceServiceOptions> = {}) => new TraceService(services.common, services.state, services.chain, { ...defaultTraceServiceOptions, timeLimitMs, ...options });
  /** The same, replaying on `offload`. */
  const offloadedTo = (offload: ReplayOffload, options: Partial<TraceServiceOptions> = {}) => {
    const service = mainThreadOnly(options);
    service.offloadTo(offload);
    return service;
  };

  before(async () => {
    directory = await mkdtemp(join(tmpdir(), "chain-node-trace-worker-"));
    const network = findNetworkProfile(33)!;
    services = await openChainServices(network, { dataDir: directory, inMemory: false }, { ...defaultNodeOptions.chain, calls: { ...defaultNodeOptions.chain.calls, timeLimitMs } }, createLogger("error"));
    const deployment = await sign(compileFixture("Probe.sol", "Probe").bytecode, 5_000_000n);
    await services.pool.add(deployment);
    await services.miner.mineUntilIncluded(deployment);
    probeAddress = `0x${Buffer.from((await services.chain.getReceipts(services.chain.head.hash))![0]!.contractAddress!).toString("hex")}`;
    const spin = await sign(probe.encodeFunctionData("spin", [12_000n]), 9_500_000n);
    await services.pool.add(spin);
    await services.miner.mineUntilIncluded(spin);
    heavy = spin.hash;
    const together = [
      ["store", await sign(probe.encodeFunctionData("setStored", [5n]))],
      ["nested", await sign(probe.encodeFunctionData("tryForward", [probeAddress, 3n]))],
      ["revert", await sign(probe.encodeFunctionData("failWithReason", ["no"]))],
      ["loop", await sign(probe.encodeFunctionData("spin", [300n]))],
    ] as const;
    block = await services.miner.mineBlock(together.map(([, transaction]) => transaction));
    expect(block.transactions).to.have.length(4);
    for (const [name, transaction] of together) hashes[name] = transaction.hash;
    expect(await services.callWorkers!.whenReady(), "the worker started").to.equal(true);
  });
  after(async () => {
    await services?.close();
    await rm(directory, { recursive: true, force: true });
  });

  /** `run` on the node's TraceService answers as on the main thread's own, and the worker answered `byWorker` replays. */
  async function expectWorkerToTraceAsMainThread(run: (service: TraceService) => Promise<unknown>, byWorker: number): Promise<void> {
    const expected = await outcomeOf(() => run(mainThreadOnly()));
    const answeredBefore = services.callWorkers!.answered;
    expect(await outcomeOf(() => run(services.tracer))).to.deep.equal(expected);
    expect(services.callWorkers!.answered - answeredBefore, "replays answered by the worker").to.equal(byWorker);
  }

  const everything = { tracer: "structLogTracer", disableStack: false, enableMemory: true, disableStorage: false, enableReturnData: true, limit: 0 } as const;
  const noMemory = { ...everything, enableMemory: false, enableReturnData: false };
  const calls = { tracer: "callTracer", onlyTopCall: false, withLog: true } as const;
  const cases: Record<string, [(service: TraceService) => Promise<unknown>, number]> = {
    "debug_traceTransaction: struct logs with stack, memory and storage, of a nested call": [(service) => service.debugTraceTransaction(hashes.nested!, everything), 1],
    "debug_traceTransaction: struct logs of a revert": [(service) => service.debugTraceTransaction(hashes.revert!, everything), 1],
    "debug_traceTransaction: struct logs without memory, of the fourth transaction of a block": [(service) => service.debugTraceTransaction(hashes.loop!, noMemory), 1],
    "debug_traceTransaction: callTracer with logs": [(service) => service.debugTraceTransaction(hashes.nested!, calls), 1],
    "debug_traceTransaction: callTracer, top call only, of a revert": [(service) => service.debugTraceTransaction(hashes.revert!, { ...calls, onlyTopCall: true }), 1],
    "debug_traceTransaction: a transaction not in the chain (nothing replayed)": [(service) => service.debugTraceTransaction(new Uint8Array(32).fill(9), everything), 0],
    "debug_traceBlockByHash: struct logs": [(service) => service.debugTraceBlock(block, noMemory), 1],
    "debug_traceBlockByHash: callTracer": [(service) => service.debugTraceBlock(block, calls), 1],
    "trace_transaction": [(service) => service.flatTransaction(hashes.nested!), 1],
    "trace_block": [(service) => service.flatBlock(block), 1],
    "trace_filter: the probe's calls after the first two, over the whole chain (one replay per block that has one)": [
      (service) => service.flatFilter({ fromBlock: 0n, toBlock: block.number, fromAddresses: new Set(), toAddresses: new Set([probeAddress.slice(2)]), after: 2, count: 100 }),
      2,
    ],
  };
  for (const [name, [run, byWorker]] of Object.entries(cases)) it(name, () => expectWorkerToTraceAsMainThread(run, byWorker));

  it("answers the time limit from the worker as the main thread does (-32011)", async () => {
    const run = (service: TraceService) => service.debugTraceTransaction(heavy, { tracer: "structLogTracer", disableStack: true, enableMemory: false, disableStorage: true, enableReturnData: false, limit: 0 });
    const expected = await outcomeOf(() => run(mainThreadOnly({ timeLimitMs: 50 })));
    expect(expected).to.deep.include({ refused: "ExecutionTimeoutError" });
    const answeredBefore = services.callWorkers!.answered;
    expect(await outcomeOf(() => run(offloadedTo(services.callWorkers!, { timeLimitMs: 50 })))).to.deep.equal(expected);
    expect(services.callWorkers!.answered).to.equal(answeredBefore + 1);
  });

  it("answers a struct log past its size cap from the worker as the main thread does, with the cap", async () => {
    const run = (service: TraceService) => service.debugTraceTransaction(hashes.loop!, noMemory, { bytes: 20_000, flag: "--trace-answer-limit" });
    const expected = await outcomeOf(() => run(mainThreadOnly()));
    expect(expected).to.deep.include({ refused: "StructLogTooLargeError", limitBytes: 20_000 });
    const answeredBefore = services.callWorkers!.answered;
    expect(await outcomeOf(() => run(services.tracer))).to.deep.equal(expected);
    expect(services.callWorkers!.answered).to.equal(answeredBefore + 1);
  });

  /** The most replays `offload` held at once while three traces were asked for together, and their outcomes. */
  async function mostAtOnce(maxConcurrent: number): Promise<{ most: number; outcomes: unknown[] }> {
    let running = 0;
    let most = 0;
    const counting: ReplayOffload = {
      replay(replayed, plan, deadline) {
        most = Math.max(most, ++running);
        return services.callWorkers!.replay(replayed, plan, deadline)!.finally(() => running--);
      },
    };
    const service = offloadedTo(counting, { maxConcurrent });
    const outcomes = await Promise.all([hashes.loop!, hashes.nested!, hashes.loop!].map((hash) => outcomeOf(() => service.debugTraceTransaction(hash, noMemory))));
    return { most, outcomes };
  }

  it("replays on the worker no more traces at once than --traces-at-once lets through", async () => {
    const expected = await Promise.all([hashes.loop!, hashes.nested!, hashes.loop!].map((hash) => outcomeOf(() => mainThreadOnly().debugTraceTransaction(hash, noMemory))));
    const oneAtATime = await mostAtOnce(1);
    expect(oneAtATime.most).to.equal(1);
    expect(oneAtATime.outcomes).to.deep.equal(expected);
    expect((await mostAtOnce(2)).most).to.equal(2);
  });

  it("waits for the worker to start, and for LevelDB to take the latest batches, rather than replay on the main thread", async () => {
    let settleWaits = 0;
    const store = { settled: false, hurry: () => undefined } as unknown as LevelStore & { settled: boolean };
    (store as unknown as { whenSettled(): Promise<void> }).whenSettled = async () => {
      settleWaits++;
      store.settled = true;
    };
    const workers = new CallWorkers({ directory, chainId: 33n, limits: services.calls.limits, synchronousCalls: false }, store, createLogger("silent"));
    try {
      const run = (service: TraceService) => service.flatTransaction(hashes.nested!);
      expect(await outcomeOf(() => run(offloadedTo(workers)))).to.deep.equal(await outcomeOf(() => run(mainThreadOnly())));
      expect(workers.answered, "replayed by the worker").to.equal(1);
      expect(settleWaits).to.equal(1);
    } finally {
      await workers.close();
    }
  });

  it("replays on the main thread what the worker held when it stopped, and everything after", async () => {
    const workers = new CallWorkers({ directory, chainId: 33n, limits: services.calls.limits, synchronousCalls: false }, { settled: true } as LevelStore, createLogger("silent"));
    try {
      expect(await workers.whenReady()).to.equal(true);
      const run = (service: TraceService) => service.flatTransaction(heavy);
      const expected = await outcomeOf(() => run(mainThreadOnly()));
      const service = offloadedTo(workers);
      const held = outcomeOf(() => run(service));
      const outstanding = (workers as unknown as { outstanding: Map<number, unknown> }).outstanding;
      while (outstanding.size === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      // The thread goes away as after a crash (the worker object is private: reached for this test only).
      await (workers as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
      expect(await held).to.deep.equal(expected);
      expect(await outcomeOf(() => run(service))).to.deep.equal(expected);
      expect(workers.answered).to.equal(0);
    } finally {
      await workers.close();
    }
  });

  it("gives back a replay of a block LevelDB does not hold (removed since it was read)", async () => {
    const notStored = { hash: new Uint8Array(32).fill(7) } as unknown as Block;
    const outcome = await services.callWorkers!.replay(notStored, { tracer: { kind: "flat" }, traced: [0] }, performance.now() + 1_000)!.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(outcome).to.be.instanceOf(OffloadLostError);
  });
});
