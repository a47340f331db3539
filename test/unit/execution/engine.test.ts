import { createBlock } from "@ethereumjs/block";
import { Address, bytesToHex, KECCAK256_RLP } from "@ethereumjs/util";
import { expect } from "chai";
import { createExecutionBlock, createExecutionEngine, executionHeaderFields, type ExecutionBlockContext } from "../../../src/execution/engine.js";
import { runMessageCall } from "../../../src/execution/messageCall.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { StateDatabase } from "../../../src/state/stateDatabase.js";
import { createMemoryStore } from "../../../src/storage/keyValueStore.js";
import { countEventLoopTurns } from "../../helpers/eventLoopTurns.js";

describe("execution/engine", () => {
  it("engines made for calls and traces leave nothing attached to the node's rules", async () => {
    const common = createExecutionRules(33n);
    const state = new StateDatabase(createMemoryStore(), common);
    const listenersBefore = common.events.listenerCount("hardforkChanged");
    for (let engine = 0; engine < 25; engine++) await createExecutionEngine(common, state.at(new Uint8Array(32).fill(0)), async () => undefined);
    expect(common.events.listenerCount("hardforkChanged")).to.equal(listenersBefore);
  });

  it("an execution block is the block the package's constructor makes from the same header fields", () => {
    const common = createExecutionRules(33n);
    const contexts: ExecutionBlockContext[] = [
      { number: 1n, coinbase: new Uint8Array(20).fill(0x11), timestamp: 1_700_000_000n, gasLimit: 6_800_000n, baseFee: 0n, difficulty: 1n },
      { number: 123_456n, coinbase: new Uint8Array(20).fill(0xab), timestamp: 1_800_000_123n, gasLimit: 30_000_000n, baseFee: 60_000_000n, difficulty: 2n ** 70n },
      { number: 2n ** 40n, coinbase: new Uint8Array(20), timestamp: 0n, gasLimit: 5_000n, baseFee: 7n, difficulty: 0n },
      { number: 7n, coinbase: new Uint8Array(20).fill(0x01), timestamp: 1n, gasLimit: 21_000n, baseFee: 0n, difficulty: 2n ** 256n - 1n },
      { number: 8n, coinbase: new Uint8Array(20).fill(0x02), timestamp: 2n, gasLimit: 21_000n, baseFee: 0n, difficulty: 0x0100n },
    ];
    const described = (block: ReturnType<typeof createBlock>) => {
      const { header } = block;
      const fields = Object.fromEntries(
        Object.entries(header)
          .filter(([name]) => name !== "common" && name !== "cache" && name !== "keccakFunction")
          .map(([name, value]) => [name, value instanceof Uint8Array ? bytesToHex(value) : value instanceof Address ? value.toString() : value]),
      );
      return { fields, hash: bytesToHex(header.hash()), serialized: bytesToHex(block.serialize()), hardfork: header.common.hardfork(), prevRandao: bytesToHex(header.prevRandao), frozen: Object.isFrozen(header) && Object.isFrozen(block) };
    };
    for (const context of contexts) {
      const byPackage = createBlock({ header: executionHeaderFields(context) }, { common, skipConsensusFormatValidation: true });
      const made = createExecutionBlock(common, context);
      expect(described(made)).to.deep.equal(described(byPackage));
      expect(made.header.common).to.not.equal(common);
    }
    // Each block has its own hash cache: a hash asked of one is not the next one's.
    expect(bytesToHex(createExecutionBlock(common, contexts[0]!).hash())).to.not.equal(bytesToHex(createExecutionBlock(common, contexts[1]!).hash()));
  });

  it("a run a tracer watches step by step gives the event loop turns, even with few jumps", async () => {
    const common = createExecutionRules(33n);
    const state = new StateDatabase(createMemoryStore(), common);
    const engine = await createExecutionEngine(common, state.overlayAt(KECCAK256_RLP), async () => undefined);
    const block = createExecutionBlock(engine.vm.common, { number: 1n, coinbase: new Uint8Array(20), timestamp: 1_700_000_000n, gasLimit: 30_000_000n, baseFee: 0n, difficulty: 1n });
    // 1,000 rounds of a countdown: 7,000 steps and 1,000 jumps, fewer than an untraced run goes
    // between two looks at the clock. PUSH2 1000, JUMPDEST, PUSH1 1, SWAP1, SUB, DUP1, PUSH1 3, JUMPI, STOP.
    const loop = Uint8Array.from([0x61, 0x03, 0xe8, 0x5b, 0x60, 0x01, 0x90, 0x03, 0x80, 0x60, 0x03, 0x57, 0x00]);
    const contract = new Uint8Array(20).fill(0xc0);
    let steps = 0;
    // A tracer's work per step (the struct logger's takes microseconds): 40 µs here, 0.28 s in all.
    const slowTracer = () => {
      steps++;
      const until = performance.now() + 0.04;
      while (performance.now() < until);
    };
    engine.vm.evm.events!.on("step", slowTracer);
    const turnCounter = countEventLoopTurns();
    try {
      const result = await runMessageCall(engine, block, { from: new Uint8Array(20).fill(1), to: contract, gasLimit: 1_000_000n, gasPrice: 0n, value: 0n, data: new Uint8Array(0) }, [[contract, { code: loop }]], 5_000);
      expect(result.kind).to.equal("success");
    } finally {
      engine.vm.evm.events!.off("step", slowTracer);
    }
    const turns = turnCounter.stop();
    expect(steps).to.equal(7_002);
    // A turn at least every 5 ms slice: about 56 in 0.28 s. Without them the run gives none.
    expect(turns).to.be.greaterThan(10);
  });

  it("a state override of many slots gives the event loop turns while it is written", async () => {
    const common = createExecutionRules(33n);
    const state = new StateDatabase(createMemoryStore(), common);
    const engine = await createExecutionEngine(common, state.overlayAt(KECCAK256_RLP), async () => undefined);
    const block = createExecutionBlock(engine.vm.common, { number: 1n, coinbase: new Uint8Array(20), timestamp: 1_700_000_000n, gasLimit: 30_000_000n, baseFee: 0n, difficulty: 1n });
    const contract = new Uint8Array(20).fill(0xc0);
    // 20,000 slots: a few microseconds each, tens of milliseconds in all, several 5 ms slices.
    const slots = new Map(Array.from({ length: 20_000 }, (_, index) => [Uint8Array.of(index >> 8, index & 0xff), Uint8Array.of(1)] as const));
    const turnCounter = countEventLoopTurns();
    let turns = 0;
    try {
      // SLOAD of slot 0x4e1f (the last one written), returned: PUSH2 0x4e1f, SLOAD, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN.
      const code = Uint8Array.from([0x61, 0x4e, 0x1f, 0x54, 0x60, 0x00, 0x52, 0x60, 0x20, 0x60, 0x00, 0xf3]);
      const result = await runMessageCall(engine, block, { from: new Uint8Array(20).fill(1), to: contract, gasLimit: 1_000_000n, gasPrice: 0n, value: 0n, data: new Uint8Array(0) }, [[contract, { code, storageChanges: slots }]], 5_000);
      expect(result.kind).to.equal("success");
      expect(bytesToHex((result as { returnData: Uint8Array }).returnData)).to.equal(`0x${"00".repeat(31)}01`);
    } finally {
      turns = turnCounter.stop();
    }
    expect(turns).to.be.greaterThan(1);
  });
});
