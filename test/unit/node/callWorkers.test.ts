// Calls and estimates on stored blocks run on the call worker's thread when the chain is on disk:
// each answers exactly as the main thread's own call service (results, reverts, halts, refusals,
// the time limit), the worker really takes them, and work it held when it stopped comes back.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import type { Worker } from "node:worker_threads";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Interface, Wallet, getBytes, keccak256, toUtf8Bytes } from "ethers";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { CallService, type CallTarget, type EstimateCall } from "../../../src/execution/callService.js";
import type { MessageCall, StateOverrides } from "../../../src/execution/messageCall.js";
import { openChainServices, type ChainServices } from "../../../src/node/chainServices.js";
import { CallWorkers } from "../../../src/node/callWorkers.js";
import type { LevelStore } from "../../../src/storage/levelStore.js";
import { defaultNodeOptions } from "../../../src/node/options.js";
import { compileFixture } from "../../helpers/solidity.js";

/** A result or a refusal, in a form deep.equal compares (bytes as hex, errors by class and message). */
async function outcomeOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    const result = await run();
    if (typeof result === "bigint") return result;
    const { slack, ...rest } = result as { slack?: object; returnData?: Uint8Array };
    return { ...rest, returnData: rest.returnData === undefined ? undefined : Buffer.from(rest.returnData).toString("hex"), slack: slack === undefined ? undefined : { ...slack } };
  } catch (error) {
    const failure = error as Error & { payload?: Uint8Array };
    return { refused: failure.constructor.name, message: failure.message, payload: failure.payload === undefined ? undefined : Buffer.from(failure.payload).toString("hex") };
  }
}

describe("node/callWorkers: calls on a second thread", function () {
  this.timeout(60_000);
  const limits = { gasCap: 50_000_000n, timeLimitMs: 300 };
  let directory: string;
  let services: ChainServices;
  /** The same service on the same state, without the worker. */
  let local: CallService;
  let target: CallTarget;
  let probeAddress: Uint8Array;
  const owner = new Wallet(keccak256(toUtf8Bytes("cow")));
  const probe = new Interface(compileFixture("Probe.sol", "Probe").abi as never);
  const from = getBytes(owner.address);
  const stranger = getBytes("0x00000000000000000000000000000000000000aa");

  before(async () => {
    directory = await mkdtemp(join(tmpdir(), "chain-node-call-worker-"));
    const network = findNetworkProfile(33)!;
    services = await openChainServices(network, { dataDir: directory, inMemory: false }, { ...defaultNodeOptions.chain, calls: limits, synchronousCalls: "off" }, createLogger("error"));
    const raw = await owner.signTransaction({ type: 0, chainId: 33n, nonce: 0, gasPrice: 0n, gasLimit: 5_000_000n, data: compileFixture("Probe.sol", "Probe").bytecode });
    const transaction = decodeRawTransaction(getBytes(raw), services.common);
    await services.pool.add(transaction);
    await services.miner.mineUntilIncluded(transaction);
    probeAddress = (await services.chain.getReceipts(services.chain.head.hash))![0]!.contractAddress!;
    target = { kind: "block", block: services.chain.head };
    local = new CallService(services.common, services.state, (blockNumber) => services.chain.getCanonicalHash(blockNumber), services.pendingState, limits);
    expect(await services.callWorkers!.whenReady(), "the worker started").to.equal(true);
  });
  after(async () => {
    await services?.close();
    await rm(directory, { recursive: true, force: true });
  });

  const call = (data: string, extra: Partial<MessageCall> = {}): MessageCall => ({ from, to: probeAddress, gasLimit: 3_000_000n, gasPrice: 0n, value: 0n, data: getBytes(data), ...extra });
  const cases: Record<string, () => MessageCall> = {
    "a result": () => call(probe.encodeFunctionData("divide", [10n, 3n])),
    "a revert with a reason": () => call(probe.encodeFunctionData("failWithReason", ["no"])),
    "a panic": () => call(probe.encodeFunctionData("divide", [1n, 0n])),
    "out of gas": () => call(probe.encodeFunctionData("spinForever"), { gasLimit: 80_000n }),
    "the block's context and the sender's balance": () => call(probe.encodeFunctionData("context"), { gasPrice: 7n, value: 11n }),
    "too little gas for the intrinsic cost": () => call(probe.encodeFunctionData("divide", [1n, 1n]), { gasLimit: 21_100n }),
    "a sender that cannot pay": () => call(probe.encodeFunctionData("context"), { from: stranger, gasPrice: 1n }),
    "the time limit": () => call(probe.encodeFunctionData("spinForever"), { gasLimit: 50_000_000n }),
  };

  /**
   * Runs `run` on the main thread's own service, then twice in one turn of the event loop on the
   * node's: all three outcomes are the same, and the worker answered `byWorker` of them (of two
   * calls that come together the first is tried on the main thread, the second goes to the worker).
   */
  async function expectWorkerToAnswerAsMainThread(run: (service: CallService) => Promise<unknown>, byWorker: number): Promise<void> {
    const answeredBefore = services.callWorkers!.answered;
    const expected = await outcomeOf(() => run(local));
    expect(await Promise.all([outcomeOf(() => run(services.calls)), outcomeOf(() => run(services.calls))])).to.deep.equal([expected, expected]);
    expect(services.callWorkers!.answered, "answered by the worker").to.equal(answeredBefore + byWorker);
  }

  for (const [name, make] of Object.entries(cases)) {
    // A call past the main thread's first try (the time limit's endless loop) goes to the worker too.
    it(`eth_call: ${name}`, () => expectWorkerToAnswerAsMainThread((service) => service.call(target, make()), name === "the time limit" ? 2 : 1));
  }

  it("runs a small call that comes alone on the main thread (no trip to the worker and back)", async () => {
    // Past the window after the time limit's burst above (a call right after a burst does not come alone).
    await new Promise((resolve) => setTimeout(resolve, 400));
    const answeredBefore = services.callWorkers!.answered;
    const single = call(probe.encodeFunctionData("divide", [10n, 3n]));
    expect(await outcomeOf(() => services.calls.call(target, single))).to.deep.equal(await outcomeOf(() => local.call(target, single)));
    expect(services.callWorkers!.answered).to.equal(answeredBefore);
  });

  it("sends the call that follows a burst of calls to the worker, and one that comes alone later to the main thread", async () => {
    const single = call(probe.encodeFunctionData("divide", [10n, 3n]));
    const expected = await outcomeOf(() => local.call(target, single));
    // Eight at once: the first is tried here, the other seven go to the worker together.
    let answeredBefore = services.callWorkers!.answered;
    const burst = await Promise.all(Array.from({ length: 8 }, () => outcomeOf(() => services.calls.call(target, single))));
    expect(burst).to.deep.equal(Array.from({ length: 8 }, () => expected));
    expect(services.callWorkers!.answered - answeredBefore, "answered by the worker in the burst").to.equal(7);
    // Right after it, a call alone in its turn still goes to the worker (the next of a client's many).
    answeredBefore = services.callWorkers!.answered;
    expect(await outcomeOf(() => services.calls.call(target, single))).to.deep.equal(expected);
    expect(services.callWorkers!.answered - answeredBefore, "answered by the worker right after the burst").to.equal(1);
    // Once the burst is well over, a call alone runs here again.
    await new Promise((resolve) => setTimeout(resolve, 400));
    answeredBefore = services.callWorkers!.answered;
    expect(await outcomeOf(() => services.calls.call(target, single))).to.deep.equal(expected);
    expect(services.callWorkers!.answered - answeredBefore, "answered by the worker after the burst").to.equal(0);
  });

  /** An override of the Probe's storage: `slots` slots set to 1, and nothing else. */
  const storageOverride = (slots: number): StateOverrides => [
    [probeAddress, { storageChanges: new Map(Array.from({ length: slots }, (_, slot) => [getBytes(`0x${slot.toString(16).padStart(64, "0")}`), getBytes(`0x${"00".repeat(31)}01`)] as const)) }],
  ];

  it("sends a call that comes alone with a large state override to the worker, and keeps one with a small override here", async () => {
    const single = call(probe.encodeFunctionData("divide", [10n, 3n]));
    for (const [slots, byWorker] of [
      [999, 0],
      [1_000, 1],
    ] as const) {
      const overrides = storageOverride(slots);
      const answeredBefore = services.callWorkers!.answered;
      expect(await outcomeOf(() => services.calls.call(target, single, overrides))).to.deep.equal(await outcomeOf(() => local.call(target, single, overrides)));
      expect(services.callWorkers!.answered - answeredBefore, `answered by the worker, ${slots} slots and 1 account`).to.equal(byWorker);
    }
  });

  it("moves a call that comes alone to the worker when it runs past the main thread's first try", async () => {
    // A service and worker of their own, with room for the call: a loop until 20 million gas run
    // out, some 400 ms here, far past the main thread's 50 ms try.
    const roomy = { gasCap: 50_000_000n, timeLimitMs: 10_000 };
    const roomyService = () => new CallService(services.common, services.state, (blockNumber) => services.chain.getCanonicalHash(blockNumber), services.pendingState, roomy);
    const service = roomyService();
    const workers = new CallWorkers({ directory, chainId: 33n, limits: roomy, synchronousCalls: false }, { settled: true } as LevelStore, createLogger("silent"));
    try {
      expect(await workers.whenReady()).to.equal(true);
      service.offloadTo(workers);
      const heavy = call(probe.encodeFunctionData("spinForever"), { gasLimit: 20_000_000n });
      const expected = await outcomeOf(() => roomyService().call(target, heavy));
      expect(expected).to.deep.include({ kind: "halt", reason: "out of gas" });
      expect(await outcomeOf(() => service.call(target, heavy))).to.deep.equal(expected);
      expect(workers.answered).to.equal(1);
    } finally {
      await workers.close();
    }
  });

  const estimates: Record<string, () => EstimateCall> = {
    "a loop of stores": () => ({ ...call(probe.encodeFunctionData("fill", [20])), gasLimit: undefined }),
    "a call that forwards gas to a child": () => ({ ...call(probe.encodeFunctionData("forward", [owner.address, 3n])), gasLimit: undefined }),
    "a revert": () => ({ ...call(probe.encodeFunctionData("failWithReason", ["estimate"])), gasLimit: undefined }),
    "more gas than the sender can pay": () => ({ ...call(probe.encodeFunctionData("fill", [20]), { from: stranger, gasPrice: 1n }), gasLimit: undefined }),
  };

  for (const [name, make] of Object.entries(estimates)) {
    it(`eth_estimateGas: ${name}`, () => expectWorkerToAnswerAsMainThread((service) => service.estimateGas(target, make()), 1));
  }

  it("reports a worker that cannot start, and closes at once after it", async () => {
    const workers = new CallWorkers({ directory: join(directory, "missing"), chainId: 33n, limits, synchronousCalls: false }, { settled: true } as LevelStore, createLogger("silent"));
    expect(await workers.whenReady()).to.equal(false);
    const block = services.chain.head;
    expect(workers.call(block, call(probe.encodeFunctionData("divide", [1n, 1n])), undefined), "takes no work").to.equal(undefined);
    await workers.close();
  });

  it("runs on the main thread what the worker held when it stopped, and everything after", async () => {
    const calls = Array.from({ length: 20 }, (_, index) => call(probe.encodeFunctionData("divide", [BigInt(index), 1n])));
    const expected = await Promise.all(calls.map((each) => outcomeOf(() => local.call(target, each))));
    const answers = calls.map((each) => outcomeOf(() => services.calls.call(target, each)));
    // The thread goes away as after a crash (the worker object is private: reached for this test only).
    await (services.callWorkers as unknown as { worker: Worker }).worker.terminate();
    expect(await Promise.all(answers)).to.deep.equal(expected);
    const answeredAfterStop = services.callWorkers!.answered;
    expect(await outcomeOf(() => services.calls.call(target, calls[3]!))).to.deep.equal(expected[3]);
    expect(services.callWorkers!.answered).to.equal(answeredAfterStop);
    await services.callWorkers!.close();
  });

  it("runs plain calls the worker cannot take on the main thread's synchronous path, not on its engine", async () => {
    // The main thread's own service as the node sets it up (synchronous calls for calls that come
    // alone), its worker unable to take work (LevelDB behind, as after a block, or not started yet).
    const unsettled = { settled: false, hurry: () => undefined } as unknown as LevelStore;
    const workers = new CallWorkers({ directory, chainId: 33n, limits, synchronousCalls: true }, unsettled, createLogger("silent"));
    // The synchronous path's time bound lifted: on a loaded host a first, cold run can take more
    // than its 3 ms and rightly go to the engine, which is not what this test is about.
    const service = new CallService(services.common, services.state, (blockNumber) => services.chain.getCanonicalHash(blockNumber), services.pendingState, limits, "alone", { steps: 20_000, ms: 60_000 });
    try {
      expect(await workers.whenReady()).to.equal(true);
      service.offloadTo(workers);
      const calls = [call(probe.encodeFunctionData("context"), { gasPrice: 7n, value: 11n }), call(probe.encodeFunctionData("failWithReason", ["no"]))];
      const expected = await Promise.all(calls.map((each) => outcomeOf(() => local.call(target, each))));
      // In one turn: neither comes alone.
      expect(await Promise.all(calls.map((each) => outcomeOf(() => service.call(target, each))))).to.deep.equal(expected);
      expect(workers.answered).to.equal(0);
      // The service's state, reached for this test only: no engine was made for the block's root.
      const engines = (service as unknown as { engines: Map<string, { engine: unknown }> }).engines;
      expect([...engines.values()].map((entry) => entry.engine)).to.deep.equal([undefined]);
    } finally {
      await workers.close();
    }
  });

  it("leaves a call to the main thread while LevelDB lacks the latest batches, and has the store hand them over at once", async () => {
    let hurried = 0;
    const unsettled = { settled: false, hurry: () => hurried++ } as unknown as LevelStore;
    const workers = new CallWorkers({ directory, chainId: 33n, limits, synchronousCalls: false }, unsettled, createLogger("silent"));
    try {
      expect(await workers.whenReady()).to.equal(true);
      expect(workers.call(services.chain.head, call(probe.encodeFunctionData("divide", [10n, 3n])), undefined), "taken by the worker").to.equal(undefined);
      expect(hurried).to.equal(1);
    } finally {
      await workers.close();
    }
  });

  it("starts and warms up at the node's start: its own calls all succeed, and calls meanwhile answer as on the main thread", async () => {
    const workers = new CallWorkers({ directory, chainId: 33n, limits, synchronousCalls: false }, { settled: true } as LevelStore, createLogger("silent"));
    try {
      workers.startAndWarm(() => services.chain.head, 0);
      expect(await workers.whenReady()).to.equal(true);
      const during = call(probe.encodeFunctionData("divide", [10n, 3n]));
      const expected = await outcomeOf(() => local.call(target, during));
      for (let round = 0; round < 5; round++) expect(await outcomeOf(() => workers.call(services.chain.head, during, undefined)!)).to.deep.equal(expected);
      const deadline = performance.now() + 30_000;
      while (workers.warmedUp === undefined && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(workers.warmedUp, "warm-up calls that succeeded").to.equal(400);
      expect(workers.answered).to.equal(5);
    } finally {
      await workers.close();
    }
  });

  it("while it starts, runs a call that comes alone on the main thread and has calls that come together wait for it", async () => {
    const workers = new CallWorkers({ directory, chainId: 33n, limits, synchronousCalls: false }, { settled: true } as LevelStore, createLogger("silent"), 30_000);
    try {
      const each = call(probe.encodeFunctionData("divide", [10n, 3n]));
      const expected = await outcomeOf(() => local.call(target, each));
      // One turn of the event loop, as CallService offers them: the first comes alone.
      expect(workers.callComesAlone()).to.equal(false);
      expect(workers.call(services.chain.head, each, undefined), "the first: the main thread's").to.equal(undefined);
      const together = [1, 2, 3].map(() => {
        workers.callComesAlone();
        return workers.call(services.chain.head, each, undefined);
      });
      for (const sent of together) expect(sent, "waits for the worker").to.be.instanceOf(Promise);
      expect(await Promise.all(together.map((sent) => outcomeOf(() => sent!)))).to.deep.equal([expected, expected, expected]);
      expect(workers.answered, "answered by the worker").to.equal(3);
    } finally {
      await workers.close();
    }
  });

  it("gives calls that wait for a starting worker back to the main thread when it is not ready in time", async () => {
    const workers = new CallWorkers({ directory, chainId: 33n, limits, synchronousCalls: false }, { settled: true } as LevelStore, createLogger("silent"), 1);
    try {
      const each = call(probe.encodeFunctionData("divide", [10n, 3n]));
      workers.callComesAlone();
      expect(workers.call(services.chain.head, each, undefined)).to.equal(undefined);
      workers.callComesAlone();
      const waiting = workers.call(services.chain.head, each, undefined);
      expect(await outcomeOf(() => waiting!)).to.deep.equal({ refused: "OffloadLostError", message: "the call worker is not ready yet", payload: undefined });
      expect(workers.answered).to.equal(0);
    } finally {
      await workers.close();
    }
  });

  it("fails the calls it holds when the node closes it, without waiting for them", async () => {
    const workers = new CallWorkers({ directory, chainId: 33n, limits, synchronousCalls: false }, { settled: true } as LevelStore, createLogger("silent"));
    expect(await workers.whenReady()).to.equal(true);
    const block = services.chain.head;
    const endless = call(probe.encodeFunctionData("spinForever"), { gasLimit: 50_000_000n });
    const held = workers.call(block, endless, undefined)!;
    expect(held, "taken").to.not.equal(undefined);
    const outcome = outcomeOf(() => held);
    await workers.close();
    expect(await outcome).to.deep.include({ refused: "Error", message: "the node is stopping" });
  });
});
