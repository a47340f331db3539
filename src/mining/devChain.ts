// The dev methods' control over the chain: snapshots and reverts, reset to genesis, the clock
// offset and the next block's timestamp, explicit blocks, the mining mode and coinbase, dropping a
// pooled transaction, and the account edits of anvil_/hardhat_ (as dev blocks: devState.ts).
//
// A snapshot is the head block, the pool's transactions and the clock offset, nothing more: state
// tries are content-addressed and never pruned, so the head's state root still opens the state of
// that moment, whatever the size of the state. Reverting cuts the chain back to that head in one
// atomic store batch (Chain.revertTo), puts the pool back as it was (its transactions checked again
// against the restored state) and the offset too. Everything runs in the miner's queue, so no
// block is being built while the chain is cut, and snapshots, reverts and blocks happen in the
// order they were asked for. Snapshots live in memory: a restart forgets them (the chain on disk
// keeps whatever head the last revert left).
import type { Block } from "../chain/block.js";
import type { Chain } from "../chain/chain.js";
import type { ChainTransaction } from "../chain/transactions.js";
import { bytesToHex } from "../common/hex.js";
import type { Logger } from "../common/logger.js";
import type { TransactionPool } from "../txpool/transactionPool.js";
import { TimestampNotAfterParentError } from "./blockTemplate.js";
import { maxBlockTimestamp, type MinerClock } from "./clock.js";
import { stateEditOf, type AccountChange } from "./devState.js";
import type { Miner } from "./miner.js";

/** A time the node cannot stamp blocks with (past maxBlockTimestamp). */
export class TimeOutOfRangeError extends Error {}

interface Snapshot {
  readonly head: Block;
  readonly pool: readonly ChainTransaction[];
  readonly timeOffset: bigint;
  readonly scheduledTimestamp: bigint | undefined;
}

export class DevChain {
  /** Taken snapshots by id; ids are never reused, not even after a reset. */
  private readonly snapshots = new Map<bigint, Snapshot>();
  private lastSnapshotId = 0n;

  constructor(
    private readonly chain: Chain,
    private readonly pool: TransactionPool,
    private readonly miner: Miner,
    private readonly clock: MinerClock,
    private readonly log: Logger,
  ) {}

  /** Records the head (once every appended block is on disk), the pool and the offset; answers the new id. */
  snapshot(): Promise<bigint> {
    return this.miner.runExclusive(async () => {
      await this.chain.whenTipWritten().catch(() => undefined);
      const id = ++this.lastSnapshotId;
      this.snapshots.set(id, { head: this.chain.head, pool: this.pool.contents(), timeOffset: this.clock.offset, scheduledTimestamp: this.clock.scheduled() });
      return id;
    });
  }

  /**
   * Goes back to snapshot `id`: head, state, pool and offset as they were; later snapshots are
   * dropped, this one stays usable. False (and nothing changes) for an unknown or dropped id.
   */
  revert(id: bigint): Promise<boolean> {
    return this.miner.runExclusive(async () => {
      const snapshot = this.snapshots.get(id);
      if (snapshot === undefined) return false;
      await this.restore(snapshot);
      for (const taken of [...this.snapshots.keys()]) if (taken > id) this.snapshots.delete(taken);
      return true;
    });
  }

  /** Back to the genesis block: an empty pool, no offset, no snapshots (the id counter goes on). */
  reset(): Promise<void> {
    return this.miner.runExclusive(async () => {
      await this.restore({ head: this.chain.genesis, pool: [], timeOffset: 0n, scheduledTimestamp: undefined });
      this.snapshots.clear();
    });
  }

  /**
   * Moves the clock of the next blocks `seconds` forward; answers the total offset. In the miner's
   * queue, so a revert queued before it cannot restore an offset over it.
   */
  increaseTime(seconds: bigint): Promise<bigint> {
    return this.miner.runExclusive(async () => {
      if (this.clock.now() + seconds > maxBlockTimestamp) {
        throw new TimeOutOfRangeError(`moving the time ${seconds} seconds forward passes the largest block timestamp ${maxBlockTimestamp}`);
      }
      this.clock.offset += seconds;
      return this.clock.offset;
    });
  }

  /**
   * Mines one block with the pending transactions and answers it once it is the head. With a
   * timestamp the block gets exactly that time (after the parent's, else
   * TimestampNotAfterParentError) and the clock continues from it.
   */
  async mine(timestamp?: bigint): Promise<Block> {
    if (timestamp !== undefined && timestamp > maxBlockTimestamp) {
      throw new TimeOutOfRangeError(`timestamp ${timestamp} is past the largest block timestamp ${maxBlockTimestamp}`);
    }
    // The pool is read, and the clock moved, in the miner's queue: a revert queued first wins.
    return this.miner.mineBlockFromPool(timestamp, () => {
      if (timestamp !== undefined) this.clock.continueFrom(timestamp);
    });
  }

  /**
   * The next block (automined, interval or evm_mine) gets exactly `timestamp`, which must be after
   * the head's (TimestampNotAfterParentError) and at most maxBlockTimestamp; later blocks continue
   * from it. Dev blocks (account edits) leave it to the next block.
   */
  setNextBlockTimestamp(timestamp: bigint): Promise<void> {
    if (timestamp > maxBlockTimestamp) {
      return Promise.reject(new TimeOutOfRangeError(`timestamp ${timestamp} is past the largest block timestamp ${maxBlockTimestamp}`));
    }
    return this.miner.runExclusive(async () => {
      const headTimestamp = this.chain.tip.header.fields.timestamp;
      if (timestamp <= headTimestamp) throw new TimestampNotAfterParentError(timestamp, headTimestamp);
      this.clock.schedule(timestamp);
    });
  }

  /**
   * Mines `count` blocks (anvil_mine, hardhat_mine): the first at the clock (or the scheduled
   * time), each later one `intervalSeconds` after the one before; with an interval of 0 every block
   * takes the clock. The clock continues from the last block.
   */
  async mineSeries(count: number, intervalSeconds: bigint): Promise<void> {
    let previous = await this.mine();
    for (let mined = 1; mined < count; mined++) {
      const timestamp = intervalSeconds === 0n ? undefined : previous.header.fields.timestamp + intervalSeconds;
      previous = await this.mine(timestamp);
    }
  }

  /**
   * Changes an account's balance, nonce, code or a storage slot in a dev block, and answers once the
   * block is on disk. The pool's transactions of that account are checked again against the new
   * state (a changed nonce or balance may make them stale, or executable).
   */
  changeAccount(change: AccountChange): Promise<void> {
    return this.miner
      .mineStateChange(stateEditOf(change), async () => {
        const held = this.pool.contents();
        if (!held.some((transaction) => Buffer.compare(transaction.sender, change.address) === 0)) return;
        for (const { transaction, reason } of await this.pool.restore(held)) {
          this.log.info({ hash: bytesToHex(transaction.hash), reason }, "pooled transaction dropped after an account change");
        }
        await this.pool.persist();
      })
      .then(() => undefined);
  }

  /** Turns automine on or off; turned on, answers once the transactions waiting are mined. */
  setAutomine(enabled: boolean): Promise<void> {
    return this.miner.setAutomine(enabled);
  }

  /** Whether sent transactions are mined before their send returns. */
  get automine(): boolean {
    return this.miner.isAutomining;
  }

  setIntervalMining(seconds: number): void {
    this.miner.setIntervalMining(seconds);
  }

  /** Later blocks pay their fees to `address`. */
  setCoinbase(address: Uint8Array): void {
    this.miner.coinbase = address;
  }

  /** Removes a transaction from the pool (not from a block); false when the pool does not hold it. */
  dropTransaction(hash: Uint8Array): Promise<boolean> {
    return this.miner.runExclusive(async () => {
      const held = this.pool.get(hash);
      if (held === undefined) return false;
      this.pool.remove(held);
      await this.pool.persist();
      return true;
    });
  }

  stopMining(): void {
    this.miner.pause();
  }

  /** Resumes automatic mining; under automine, answers once what arrived meanwhile is mined. */
  startMining(): Promise<void> {
    return this.miner.resume();
  }

  /** Runs inside the miner's queue. */
  private async restore(snapshot: Snapshot): Promise<void> {
    // The snapshot's pool goes to disk in the batch that cuts the chain: some of it may be in the
    // blocks the cut removes, and what was sent after the snapshot must not come back.
    const journal = this.pool.planRestore(snapshot.pool);
    let removed;
    try {
      removed = await this.chain.revertTo(snapshot.head, journal.operations);
    } catch (error) {
      journal.abort();
      throw error;
    }
    journal.commit();
    const refused = await this.pool.restore(snapshot.pool);
    for (const { transaction, reason } of refused) {
      this.log.warn({ hash: bytesToHex(transaction.hash), reason }, "transaction of the snapshot's pool not taken back");
    }
    // What the revert took out of the pool must not come back after a restart.
    await this.pool.persist();
    this.clock.offset = snapshot.timeOffset;
    this.clock.schedule(snapshot.scheduledTimestamp);
    this.log.info({ head: Number(snapshot.head.number), removedBlocks: removed.length, pool: snapshot.pool.length - refused.length }, "chain reverted");
  }
}
