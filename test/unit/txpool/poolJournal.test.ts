// The pool's journal on a store: what it writes and deletes as the pool takes and lets go of
// transactions, and what a new journal on the same store takes back.
import { expect } from "chai";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { decodeRawTransaction, type ChainTransaction } from "../../../src/chain/transactions.js";
import { hexToBytes } from "../../../src/common/hex.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { createMemoryStore, type KeyValueStore, type StoreOperation } from "../../../src/storage/keyValueStore.js";
import { storeKeys } from "../../../src/storage/keys.js";
import { PoolJournal } from "../../../src/txpool/poolJournal.js";
import { TransactionPool } from "../../../src/txpool/transactionPool.js";

const common = createExecutionRules(33n);
const cow = new Wallet(keccak256(toUtf8Bytes("cow")));
const cow1 = new Wallet(keccak256(toUtf8Bytes("cow1")));

async function transfer(wallet: Wallet, nonce: number, gasPrice = 1n): Promise<ChainTransaction> {
  const raw = await wallet.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice, to: "0x00000000000000000000000000000000000000aa", value: 1n });
  return decodeRawTransaction(hexToBytes(raw), common);
}

/** A memory store that records the batches written to it. */
function recordingStore(): { store: KeyValueStore; batches: StoreOperation[][] } {
  const inner = createMemoryStore();
  const batches: StoreOperation[][] = [];
  const store: KeyValueStore = {
    ...inner,
    write: (operations) => {
      batches.push([...operations]);
      return inner.write(operations);
    },
  };
  return { store, batches };
}

/** A pool whose accounts all start at nonce 0 (or at `nonces` of a sender address in hex, no 0x). */
function poolOn(journal: PoolJournal, nonces = new Map<string, bigint>()): TransactionPool {
  return new TransactionPool({
    readAccount: async (address) => ({ nonce: nonces.get(Buffer.from(address).toString("hex")) ?? 0n, balance: 10n ** 20n }),
    limits: () => ({ blockGasLimit: 10_000_000n, minimumGasPrice: 0n }),
    observer: journal,
  });
}

/** The signed transactions of the journal's entries, as hex, in key order. */
async function storedRaw(store: KeyValueStore): Promise<string[]> {
  return (await store.entries(storeKeys.pooledTransactions)).map((entry) => Buffer.from(entry.value).toString("hex"));
}

const rawHex = (...transactions: ChainTransaction[]) => transactions.map((transaction) => Buffer.from(transaction.raw).toString("hex"));

const hashes = (transactions: readonly ChainTransaction[]) => transactions.map((transaction) => Buffer.from(transaction.hash).toString("hex"));

describe("txpool/poolJournal", () => {
  it("writes nothing for a transaction taken and let go of between two flushes (automine)", async () => {
    const { store, batches } = recordingStore();
    const journal = new PoolJournal(store, common);
    const pool = poolOn(journal);
    const mined = await transfer(cow, 0);
    await pool.add(mined);
    pool.onBlockMined([mined]);
    await pool.persist();
    expect(batches).to.deep.equal([]);
  });

  it("writes held transactions at a flush, deletes them at the flush after they left", async () => {
    const { store, batches } = recordingStore();
    const journal = new PoolJournal(store, common);
    const pool = poolOn(journal);
    const first = await transfer(cow, 0);
    const second = await transfer(cow, 1);
    await pool.add(first);
    await pool.add(second);
    await pool.persist();
    expect(batches.map((batch) => batch.map((operation) => operation.type))).to.deep.equal([["put", "put"]]);
    expect(await storedRaw(store)).to.deep.equal(rawHex(first, second));

    pool.onBlockMined([first]);
    await pool.persist();
    expect(batches[1]!.map((operation) => operation.type)).to.deep.equal(["del"]);
    expect(await storedRaw(store)).to.have.length(1);
    // Nothing changed: nothing written.
    await pool.persist();
    expect(batches).to.have.length(2);
  });

  it("replaces a replaced transaction's entry in one batch", async () => {
    const { store, batches } = recordingStore();
    const pool = poolOn(new PoolJournal(store, common));
    await pool.add(await transfer(cow, 0, 10n));
    await pool.persist();
    const replacement = await transfer(cow, 0, 20n);
    await pool.add(replacement);
    await pool.persist();
    expect(batches[1]!.map((operation) => operation.type)).to.deep.equal(["del", "put"]);
    expect(await storedRaw(store)).to.deep.equal(rawHex(replacement));
  });

  it("keeps the entry of a transaction a restore takes back, deletes those it leaves out, never writes one left out unwritten", async () => {
    const { store, batches } = recordingStore();
    const pool = poolOn(new PoolJournal(store, common));
    const kept = await transfer(cow, 0);
    const left = await transfer(cow1, 0);
    await pool.add(kept);
    await pool.add(left);
    await pool.persist();
    await pool.add(await transfer(cow1, 1));
    await pool.restore([kept]);
    await pool.persist();
    expect(batches[1]!.map((operation) => operation.type)).to.deep.equal(["del"]);
    expect(await storedRaw(store)).to.deep.equal(rawHex(kept));
  });

  it("plans a revert's journal: the snapshot's transactions kept or added, every other entry deleted, in one batch", async () => {
    const { store, batches } = recordingStore();
    const pool = poolOn(new PoolJournal(store, common));
    const minedSinceSnapshot = await transfer(cow, 0);
    const sentSinceSnapshot = await transfer(cow1, 0);
    await pool.add(minedSinceSnapshot);
    await pool.persist();
    pool.onBlockMined([minedSinceSnapshot]);
    await pool.add(sentSinceSnapshot);
    await pool.persist();
    expect(await storedRaw(store)).to.deep.equal(rawHex(sentSinceSnapshot));

    // The snapshot's pool held the mined one; the one sent since must go.
    const plan = pool.planRestore([minedSinceSnapshot]);
    expect(plan.operations.map((operation) => operation.type)).to.deep.equal(["put", "del"]);
    const written = batches.length;
    await store.write(plan.operations);
    plan.commit();
    expect(await pool.restore([minedSinceSnapshot])).to.deep.equal([]);
    await pool.persist();
    expect(batches, "nothing left to write after the plan").to.have.length(written + 1);
    expect(await storedRaw(store)).to.deep.equal(rawHex(minedSinceSnapshot));
  });

  it("keeps a mined transaction's entry until its block is on disk", async () => {
    const { store } = recordingStore();
    const pool = poolOn(new PoolJournal(store, common));
    const mined = await transfer(cow, 0);
    await pool.add(mined);
    await pool.persist();
    let blockWritten!: () => void;
    pool.onBlockMined([mined], new Promise<void>((resolve) => (blockWritten = resolve)));
    await pool.persist();
    expect(await storedRaw(store), "block not on disk yet").to.have.length(1);
    blockWritten();
    await new Promise((resolve) => setImmediate(resolve));
    await pool.persist();
    expect(await storedRaw(store)).to.have.length(0);
  });

  it("never lets go of the entry of a transaction a restore takes back, even when a journal write comes in between", async () => {
    const { store } = recordingStore();
    const journal = new PoolJournal(store, common);
    let gate: Promise<void> | undefined;
    const pool = new TransactionPool({
      readAccount: async () => {
        await gate;
        return { nonce: 0n, balance: 10n ** 20n };
      },
      limits: () => ({ blockGasLimit: 10_000_000n, minimumGasPrice: 0n }),
      observer: journal,
    });
    const kept = await transfer(cow, 0);
    await pool.add(kept);
    await pool.persist();
    let open!: () => void;
    gate = new Promise<void>((resolve) => (open = resolve));
    const restoring = pool.restore([kept]);
    // A send's journal write while the restore waits for the account.
    await pool.persist();
    expect(await storedRaw(store), "entry kept while restoring").to.have.length(1);
    open();
    expect(await restoring).to.deep.equal([]);
    await pool.persist();
    expect(await storedRaw(store)).to.have.length(1);
  });

  it("takes back the stored transactions in order of arrival, and new entries follow them", async () => {
    const { store } = recordingStore();
    const pool = poolOn(new PoolJournal(store, common));
    // cow1 first: the pool lists senders in order of arrival; cow's nonce 1 before its nonce 0.
    const sent = [await transfer(cow1, 0), await transfer(cow, 1), await transfer(cow, 0)];
    for (const transaction of sent) await pool.add(transaction);
    await pool.persist();

    const journal = new PoolJournal(store, common);
    const { transactions, unreadable } = await journal.load();
    expect(unreadable).to.deep.equal([]);
    expect(hashes(transactions)).to.deep.equal(hashes(sent));
    const restarted = poolOn(journal);
    expect(await restarted.restore(transactions)).to.deep.equal([]);
    expect(hashes(restarted.pending())).to.deep.equal(hashes([sent[0]!, sent[2]!, sent[1]!]));
    const later = await transfer(cow1, 1);
    await restarted.add(later);
    await restarted.persist();
    const stored = await storedRaw(store);
    expect(stored.at(-1)).to.equal(rawHex(later)[0]);
    expect(stored).to.have.length(4);
  });

  it("drops at load the entries of transactions the chain took meanwhile, and unreadable ones", async () => {
    const { store } = recordingStore();
    const pool = poolOn(new PoolJournal(store, common));
    const minedMeanwhile = await transfer(cow, 0);
    const stillPending = await transfer(cow, 1);
    await pool.add(minedMeanwhile);
    await pool.add(stillPending);
    await pool.persist();
    await store.write([{ type: "put", key: storeKeys.pooledTransaction(99n), value: new Uint8Array([0xc0]) }]);

    const journal = new PoolJournal(store, common);
    const { transactions, unreadable } = await journal.load();
    expect(unreadable.map((entry) => Buffer.from(entry.key).toString("hex"))).to.deep.equal([Buffer.from(storeKeys.pooledTransaction(99n)).toString("hex")]);
    // cow's account is at nonce 1 now: a block took nonce 0.
    const restarted = poolOn(journal, new Map([[cow.address.slice(2).toLowerCase(), 1n]]));
    const refused = await restarted.restore(transactions);
    expect(refused.map(({ reason }) => reason)).to.deep.equal(["transaction nonce too low"]);
    // The restore let go of the entry it did not take back: the next write deletes it.
    await restarted.persist();
    expect(await storedRaw(store)).to.deep.equal(rawHex(stillPending));
  });
});
