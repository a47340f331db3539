import { expect } from "chai";
import { createExecutionEngine } from "../../../src/execution/engine.js";
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
});
