// The pool's capacity, with stand-in transactions: only the fields its rules read.
import { expect } from "chai";
import type { ChainTransaction } from "../../../src/chain/transactions.js";
import { maxPoolBytes, maxPoolTransactions, TransactionPool, TransactionRejectedError } from "../../../src/txpool/transactionPool.js";

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
