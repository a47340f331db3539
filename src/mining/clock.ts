// The clock blocks are stamped with: wall-clock seconds plus an offset the dev methods move
// (evm_increaseTime, evm_mine with a timestamp) and restore (evm_revert, evm_reset). The offset
// stays until changed, so every later block keeps the time it was moved to. A timestamp scheduled
// with evm_setNextBlockTimestamp is taken exactly by the next block, and the clock continues from it.

/** Largest timestamp the clock or a dev method may give a block: leaves room for 2^63 more blocks in a uint64. */
export const maxBlockTimestamp = 2n ** 63n - 1n;

/** What the miner asks of a clock: the time now, and an exact time scheduled for the next block. */
export interface BlockClock {
  now(): bigint;
  /** The exact timestamp of the next block, when one is scheduled. */
  scheduled(): bigint | undefined;
  /** A block took `timestamp`: the schedule is done and later blocks continue from it. */
  stamped(timestamp: bigint): void;
}

export class MinerClock implements BlockClock {
  private offsetSeconds = 0n;
  private scheduledTimestamp: bigint | undefined;

  /** `wallSeconds` is the time without the offset; tests may pass their own. */
  constructor(private readonly wallSeconds: () => bigint = () => BigInt(Math.floor(Date.now() / 1000))) {}

  /** Seconds for the next block: wall clock plus offset (callers keep it at or above the parent's). */
  now(): bigint {
    return this.wallSeconds() + this.offsetSeconds;
  }

  /** The time the next block gets: the scheduled one, else now(). Pending-state reads run at it. */
  nextBlockTime(): bigint {
    return this.scheduledTimestamp ?? this.now();
  }

  get offset(): bigint {
    return this.offsetSeconds;
  }

  set offset(seconds: bigint) {
    this.offsetSeconds = seconds;
  }

  scheduled(): bigint | undefined {
    return this.scheduledTimestamp;
  }

  /** The next block gets exactly `timestamp` (undefined: no schedule). */
  schedule(timestamp: bigint | undefined): void {
    this.scheduledTimestamp = timestamp;
  }

  stamped(timestamp: bigint): void {
    this.scheduledTimestamp = undefined;
    this.continueFrom(timestamp);
  }

  /** Moves the offset so that now() answers `timestamp` at this moment. */
  continueFrom(timestamp: bigint): void {
    this.offsetSeconds = timestamp - this.wallSeconds();
  }
}
