// Counting a contract's storage slots by walking its trie, against the package's dump.
import { expect } from "chai";
import { Account, Address, KECCAK256_RLP, setLengthLeft } from "@ethereumjs/util";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { StateDatabase } from "../../../src/state/stateDatabase.js";
import { createMemoryStore } from "../../../src/storage/keyValueStore.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

describe("state/trieLeafCount", () => {
  it("counts the slots of storage tries of every size as the package's dump lists them, pausing as it walks", async () => {
    const next = seededRandom(7);
    const database = new StateDatabase(createMemoryStore(), createExecutionRules(33n));
    const contract = new Address(setLengthLeft(Uint8Array.of(0xc0), 20));
    const empty = new Address(setLengthLeft(Uint8Array.of(0xe0), 20));
    let root = KECCAK256_RLP;
    const slots: Uint8Array[] = [];
    for (const size of [0, 1, 2, 17, 300, 3_000]) {
      const state = database.at(root);
      if ((await state.getAccount(contract)) === undefined) await state.putAccount(contract, new Account());
      if ((await state.getAccount(empty)) === undefined) await state.putAccount(empty, new Account(1n));
      while (slots.length < size) {
        const slot = randomBytes(next, 32);
        slots.push(slot);
        // Small values, so some nodes are embedded in their parents.
        await state.putStorage(contract, slot, Uint8Array.of(1 + (next() % 200)));
      }
      // A deleted slot is not counted.
      if (size > 2) {
        await state.putStorage(contract, slots.pop()!, new Uint8Array());
      }
      await state.checkpoint();
      await state.commit();
      await state.flush();
      root = await state.getStateRoot();
      let pauses = 0;
      const counted = await database.countStorageSlots(root, contract.bytes, () => void pauses++);
      const dumped = Object.keys(await database.reader(root)!.dumpStorage(contract)).length;
      expect(counted, `${size} slots written`).to.equal(dumped);
      expect(counted).to.equal(slots.length);
      if (size === 3_000) expect(pauses).to.be.greaterThan(0);
      expect(await database.countStorageSlots(root, empty.bytes, () => undefined)).to.equal(0);
      expect(await database.countStorageSlots(root, new Uint8Array(20).fill(9), () => undefined)).to.equal(0);
    }
  });

  it("stops where the pause throws", async () => {
    const database = new StateDatabase(createMemoryStore(), createExecutionRules(33n));
    const contract = new Address(setLengthLeft(Uint8Array.of(0xc1), 20));
    const state = database.at(KECCAK256_RLP);
    await state.putAccount(contract, new Account());
    const next = seededRandom(9);
    for (let index = 0; index < 2_000; index++) await state.putStorage(contract, randomBytes(next, 32), Uint8Array.of(1));
    await state.checkpoint();
    await state.commit();
    await state.flush();
    const root = await state.getStateRoot();
    let caught: unknown;
    try {
      await database.countStorageSlots(root, contract.bytes, () => {
        throw new Error("time is up");
      });
    } catch (error) {
      caught = error;
    }
    expect((caught as Error | undefined)?.message).to.equal("time is up");
  });
});
