// The pool's capacity and per-sender limits, with stand-in transactions: only the fields its rules read.
import { expect } from "chai";
import type { ChainTransaction } from "../../../src/chain/transactions.js";
import { maxNonceSlotsAheadOfPending, maxPoolBytes, maxPoolTransactions, TransactionPool, TransactionRejectedError } from "../../../src/txpool/transactionPool.js";

let nextHash = 0;

/** A transaction of `sender` at `nonce` whose signed form is `size` bytes; gas price 0, no value. */
function standIn(sender: number, nonce: number, size = 110, gasPrice = 0n): ChainTransaction {
  const hash = new Uint8Array(32);
  new DataView(hash.buffer).setUint32(0, ++nextHash);
  const senderBytes = new Uint8Array(20);
  new DataView(senderBytes.buffer).setUint32(0, sender);
  const tx = { nonce: BigInt(nonce), gasPrice, gasLimit: 21_000n, value: 0n, to: new Uint8Array(20), data: new Uint8Array(), getIntrinsicGas: () => 21_000n };
  return { tx, raw: new Uint8Array(size), sender: senderBytes, hash } as unknown as ChainTransaction;
}

function emptyPool(): TransactionPool {
  return new TransactionPool({
    readAccount: async () => ({ nonce: 0n, balance: 10n ** 18n }),
    limits: () => ({ blockGasLimit: 10_000_000n, minimumGasPrice: 0n }),
  });
}

async function refusal(pool: TransactionPool, transaction: ChainTransaction): Promise<string> {
  try {
    await pool.add(transaction);
  } catch (error) {
    expect(error).to.be.instanceOf(TransactionRejectedError);
    return (error as Error).message;
  }
  throw new Error("the pool took the transaction");
}

describe("txpool/transactionPool capacity", () => {
  it("holds at most maxPoolTransactions, and takes more once mined ones leave", async () => {
    const pool = emptyPool();
    const held: ChainTransaction[] = [];
    for (let index = 0; index < maxPoolTransactions; index++) held.push(standIn(Math.floor(index / 10), index % 10));
    for (const transaction of held) await pool.add(transaction);
    expect(pool.size).to.equal(maxPoolTransactions);
    expect(await refusal(pool, standIn(1_000_000, 0))).to.equal("txpool is full");
    // A replacement takes no room of its own.
    const replacement = standIn(0, 0, 110, 10n);
    await pool.add(replacement);
    expect(pool.size).to.equal(maxPoolTransactions);
    pool.onBlockMined([replacement]);
    await pool.add(standIn(1_000_000, 0));
    expect(pool.size).to.equal(maxPoolTransactions);
  });

  it("holds at most maxPoolBytes of signed transactions", async () => {
    const pool = emptyPool();
    const size = 128 * 1024;
    const held: ChainTransaction[] = [];
    for (let index = 0; index < maxPoolBytes / size; index++) held.push(standIn(index, 0, size));
    for (const transaction of held) await pool.add(transaction);
    expect(await refusal(pool, standIn(1_000_000, 0, 200))).to.equal("txpool is full");
    // A smaller replacement frees room; a dropped transaction gives its bytes back.
    await pool.add(standIn(0, 0, size - 200, 10n));
    await pool.add(standIn(1_000_000, 0, 200));
    pool.remove(held[1]!);
    await pool.add(standIn(1_000_001, 0, size));
    expect(await refusal(pool, standIn(1_000_002, 0, 1))).to.equal("txpool is full");
  });
});

describe("txpool/transactionPool per-sender limits", () => {
  it("holds as many executable transactions of one sender as the pool's capacity allows", async () => {
    const pool = emptyPool();
    for (let nonce = 0; nonce < maxPoolTransactions; nonce++) expect(await pool.add(standIn(7, nonce))).to.equal("pending");
    expect(pool.pending()).to.have.length(maxPoolTransactions);
    expect(pool.queued()).to.deep.equal([]);
    expect(await pool.nextNonce(standIn(7, 0).sender)).to.equal(BigInt(maxPoolTransactions));
    expect(await refusal(pool, standIn(7, maxPoolTransactions))).to.equal("txpool is full");
  });

  it(`queues at most ${maxNonceSlotsAheadOfPending - 1n} transactions of a sender behind a gap, counted from its next executable nonce`, async () => {
    const pool = emptyPool();
    const executable = 40;
    for (let nonce = 0; nonce < executable; nonce++) await pool.add(standIn(7, nonce));
    // Nonce 40 is the gap; 41 to 55 are the 15 slots behind it, 56 is one too many.
    const lastSlot = executable + Number(maxNonceSlotsAheadOfPending) - 1;
    for (let nonce = executable + 1; nonce <= lastSlot; nonce++) expect(await pool.add(standIn(7, nonce))).to.equal("queued");
    expect(await refusal(pool, standIn(7, lastSlot + 1))).to.equal("transaction nonce too high");
    expect(pool.queued()).to.have.length(Number(maxNonceSlotsAheadOfPending) - 1);
    expect(pool.size).to.equal(executable + Number(maxNonceSlotsAheadOfPending) - 1);
    // Filling the gap makes the queued ones executable, and the slots move on behind them.
    expect(await pool.add(standIn(7, executable))).to.equal("pending");
    expect(pool.queued()).to.deep.equal([]);
    expect(pool.pending()).to.have.length(lastSlot + 1);
    expect(await pool.add(standIn(7, lastSlot + Number(maxNonceSlotsAheadOfPending)))).to.equal("queued");
    expect(await refusal(pool, standIn(7, lastSlot + 1 + Number(maxNonceSlotsAheadOfPending)))).to.equal("transaction nonce too high");
  });

  it("counts the slots of a sender with nothing pending from its account nonce, as the reference does", async () => {
    const pool = new TransactionPool({
      readAccount: async () => ({ nonce: 5n, balance: 10n ** 18n }),
      limits: () => ({ blockGasLimit: 10_000_000n, minimumGasPrice: 0n }),
    });
    expect(await pool.add(standIn(7, 5 + Number(maxNonceSlotsAheadOfPending) - 1))).to.equal("queued");
    expect(await refusal(pool, standIn(7, 5 + Number(maxNonceSlotsAheadOfPending)))).to.equal("transaction nonce too high");
    expect(await refusal(pool, standIn(7, 4))).to.equal("transaction nonce too low");
  });
});

describe("txpool/transactionPool executable run", () => {
  it("follows blocks, dropped transactions and a chain that went back", async () => {
    let accountNonce = 0n;
    const pool = new TransactionPool({
      readAccount: async () => ({ nonce: accountNonce, balance: 10n ** 18n }),
      limits: () => ({ blockGasLimit: 10_000_000n, minimumGasPrice: 0n }),
    });
    const sent = Array.from({ length: 30 }, (_, nonce) => standIn(7, nonce));
    for (const transaction of sent) await pool.add(transaction);
    const nonces = (transactions: readonly ChainTransaction[]) => transactions.map((transaction) => Number(transaction.tx.nonce));

    // A block takes the first 10.
    accountNonce = 10n;
    pool.onBlockMined(sent.slice(0, 10));
    expect(nonces(pool.pending())).to.deep.equal(nonces(sent.slice(10)));
    // A transaction the builder drops holds the later ones back until its nonce comes again.
    pool.remove(sent[20]!);
    expect(nonces(pool.pending())).to.deep.equal(nonces(sent.slice(10, 20)));
    expect(nonces(pool.queued())).to.deep.equal(nonces(sent.slice(21)));
    expect(await pool.nextNonce(sent[0]!.sender)).to.equal(20n);
    await pool.add(standIn(7, 20));
    expect(pool.pending()).to.have.length(20);
    // A failed block write takes the tip back: what the pool holds waits behind the gap it leaves.
    accountNonce = 5n;
    expect(await pool.add(standIn(7, 6))).to.equal("queued");
    expect(pool.pending()).to.deep.equal([]);
    expect(await pool.nextNonce(sent[0]!.sender)).to.equal(5n);
    expect(await pool.add(standIn(7, 5))).to.equal("pending");
    expect(await pool.add(standIn(7, 7))).to.equal("pending");
    expect(await pool.add(standIn(7, 8))).to.equal("pending");
    expect(await pool.add(standIn(7, 9))).to.equal("pending");
    expect(nonces(pool.pending())).to.deep.equal(Array.from({ length: 25 }, (_, index) => index + 5));
  });
});
