import { expect } from "chai";
import { Caches, MerkleStateManager } from "@ethereumjs/statemanager";
import { Account, Address, bytesToHex, setLengthLeft, ValueEncoding } from "@ethereumjs/util";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { ChainStateManager } from "../../../src/state/chainStateManager.js";
import { StateTrie } from "../../../src/state/stateTrie.js";
import { createMemoryStore } from "../../../src/storage/keyValueStore.js";
import { TrieNodeStore } from "../../../src/storage/trieNodeStore.js";
import { seededRandom } from "../../helpers/seededRandom.js";

/** This project's state manager with the package's flush (one trie put per slot and per account). */
class PackageFlushStateManager extends ChainStateManager {
  override async flush(): Promise<void> {
    return MerkleStateManager.prototype.flush.call(this);
  }
}

describe("state/chainStateManager", () => {
  it("encodes the accounts it hands out as the package's Account does, for integers of every length", async () => {
    const common = createExecutionRules(33n);
    const manager = new ChainStateManager({ common, caches: new Caches() });
    const address = new Address(setLengthLeft(Uint8Array.of(5), 20));
    const integers = [0n, 1n, 0x7fn, 0x80n, 0xffn, 0x100n, 0xabcden, 2n ** 64n + 5n, 2n ** 255n, 2n ** 256n - 1n];
    for (const nonce of integers.slice(0, 6)) {
      for (const balance of integers) {
        const codeHash = setLengthLeft(Uint8Array.of(Number(nonce & 0xffn), 3), 32);
        const expected = new Account(nonce, balance, undefined, codeHash);
        await manager.putAccount(address, expected);
        const handedOut = await manager.getAccount(address);
        expect(handedOut).to.be.instanceOf(Account);
        expect(bytesToHex(handedOut!.serialize()), `nonce ${nonce}, balance ${balance}`).to.equal(bytesToHex(expected.serialize()));
        // Changed as the engine changes an account, then put back: the cache holds the new encoding.
        handedOut!.balance += 1n;
        await manager.putAccount(address, handedOut!);
        expect(bytesToHex((await manager.getAccount(address))!.serialize())).to.equal(bytesToHex(new Account(nonce, balance + 1n, undefined, codeHash).serialize()));
      }
    }
  });

  it("reaches the roots of the package's uncached state manager over storage writes, deletes and reverts", async () => {
    const common = createExecutionRules(33n);
    const fast = new ChainStateManager({ common, caches: new Caches() });
    const reference = new MerkleStateManager({ common });
    const accounts = [1, 2, 3].map((index) => new Address(setLengthLeft(Uint8Array.of(index), 20)));
    for (const manager of [fast, reference]) for (const address of accounts) await manager.putAccount(address, new Account(0n, 1n));
    for (let block = 0; block < 12; block++) {
      for (const manager of [fast, reference]) {
        // Both managers get the same writes.
        const next = seededRandom(1000 + block);
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

  it("flushes as the package's flush: slots of several accounts at once, deleted and re-created accounts, code", async () => {
    const common = createExecutionRules(33n);
    const trieOptions = { common, useKeyHashing: true, valueEncoding: ValueEncoding.Bytes, useNodePruning: false } as const;
    const fast = new ChainStateManager({ common, caches: new Caches(), trie: new StateTrie({ ...trieOptions, db: new TrieNodeStore(createMemoryStore()) }) });
    const reference = new PackageFlushStateManager({ common, caches: new Caches(), trie: new StateTrie({ ...trieOptions, db: new TrieNodeStore(createMemoryStore()) }) });
    const accounts = Array.from({ length: 6 }, (_, index) => new Address(setLengthLeft(Uint8Array.of(index + 1, 7), 20)));
    for (let block = 0; block < 20; block++) {
      for (const manager of [fast, reference]) {
        const next = seededRandom(5000 + block);
        await manager.checkpoint();
        for (let operation = 0; operation < 60; operation++) {
          const address = accounts[next() % accounts.length]!;
          const kind = next() % 20;
          const exists = (await manager.getAccount(address)) !== undefined;
          if (!exists || kind === 0) await manager.putAccount(address, new Account(BigInt(next() % 3), BigInt(next() % 1000)));
          else if (kind === 1) await manager.deleteAccount(address);
          else if (kind === 2) await manager.putCode(address, Uint8Array.of(0x60, next() & 0xff, 0x00));
          else if (kind === 3) await manager.modifyAccountFields(address, { balance: BigInt(next() % 1000) });
          else {
            // Many slots per account, some deleted (zero), some rewritten with the same value.
            const slot = setLengthLeft(Uint8Array.of(next() % 40), 32);
            const value = next() % 6 === 0 ? new Uint8Array() : setLengthLeft(Uint8Array.of(next() % 3, next() & 0xff), 32);
            await manager.putStorage(address, slot, value);
          }
        }
        if (block % 5 === 4) await manager.revert();
        else await manager.commit();
      }
      const root = await fast.getStateRoot();
      expect(bytesToHex(root), `root after block ${block}`).to.equal(bytesToHex(await reference.getStateRoot()));
      // Fresh package state managers on each one's written nodes read the same state, and both
      // managers read alike (reads pick storage tries, and the next blocks must see the same picks).
      const freshReader = (manager: ChainStateManager) => new MerkleStateManager({ common, trie: new StateTrie({ ...trieOptions, db: manager["_trie"]["_db"].db, root }) });
      const [reader, referenceReader] = [freshReader(fast), freshReader(reference)];
      const pairs = [
        [reader, referenceReader],
        [fast, reference],
      ] as const;
      for (const address of accounts) {
        for (const [actual, expected] of pairs) {
          const [actualAccount, expectedAccount] = [await actual.getAccount(address), await expected.getAccount(address)];
          expect(actualAccount?.serialize(), `account ${address.toString()}`).to.deep.equal(expectedAccount?.serialize());
          if (expectedAccount === undefined) continue;
          expect(bytesToHex(await actual.getCode(address))).to.equal(bytesToHex(await expected.getCode(address)));
          for (let slot = 0; slot < 40; slot++) {
            const key = setLengthLeft(Uint8Array.of(slot), 32);
            expect(bytesToHex(await actual.getStorage(address, key)), `slot ${slot} of ${address.toString()}`).to.equal(bytesToHex(await expected.getStorage(address, key)));
          }
        }
      }
    }
  });
});
