import { createBlock } from "@ethereumjs/block";
import { Address, bytesToHex } from "@ethereumjs/util";
import { expect } from "chai";
import { createExecutionBlock, createExecutionEngine, executionHeaderFields, type ExecutionBlockContext } from "../../../src/execution/engine.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { StateDatabase } from "../../../src/state/stateDatabase.js";
import { createMemoryStore } from "../../../src/storage/keyValueStore.js";

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
});
