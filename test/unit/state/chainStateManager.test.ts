import { expect } from "chai";
import { Caches, MerkleStateManager } from "@ethereumjs/statemanager";
import { Account, Address, bytesToHex, setLengthLeft } from "@ethereumjs/util";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { ChainStateManager } from "../../../src/state/chainStateManager.js";

describe("state/chainStateManager", () => {
  it("reaches the roots of the package's uncached state manager over storage writes, deletes and reverts", async () => {
    const common = createExecutionRules(33n);
    const fast = new ChainStateManager({ common, caches: new Caches() });
    const reference = new MerkleStateManager({ common });
    const accounts = [1, 2, 3].map((index) => new Address(setLengthLeft(Uint8Array.of(index), 20)));
    let seed = 5;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    for (const manager of [fast, reference]) for (const address of accounts) await manager.putAccount(address, new Account(0n, 1n));
    for (let block = 0; block < 12; block++) {
      seed = 1000 + block;
      for (const manager of [fast, reference]) {
        seed = 1000 + block;
        await manager.checkpoint();
        for (let write = 0; write < 30; write++) {
          const address = accounts[next() % accounts.length]!;
          const slot = setLengthLeft(Uint8Array.of(next() % 16), 32);
          // A zero value deletes the slot.
          const value = next() % 5 === 0 ? new Uint8Array() : Uint8Array.of(next() & 0xff, 1);
          await manager.putStorage(address, slot, value);
        }
        if (block % 4 === 3) await manager.revert();
        else await manager.commit();
      }
      expect(bytesToHex(await fast.getStateRoot()), `root after block ${block}`).to.equal(bytesToHex(await reference.getStateRoot()));
      for (const address of accounts) {
        for (let slot = 0; slot < 16; slot++) {
          const key = setLengthLeft(Uint8Array.of(slot), 32);
          expect(bytesToHex(await fast.getStorage(address, key))).to.equal(bytesToHex(await reference.getStorage(address, key)));
        }
      }
    }
  });
});
