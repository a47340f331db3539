// The clock blocks are stamped with: wall-clock seconds plus an offset the dev methods move
// (evm_increaseTime, evm_mine with a timestamp) and restore (evm_revert, evm_reset). The offset
// stays until changed, so every later block keeps the time it was moved to.

/** Largest timestamp the clock or a dev method may give a block: leaves room for 2^63 more blocks in a uint64. */
export const maxBlockTimestamp = 2n ** 63n - 1n;

export class MinerClock {
  private offsetSeconds = 0n;

  /** `wallSeconds` is the time without the offset; tests may pass their own. */
  constructor(private readonly wallSeconds: () => bigint = () => BigInt(Math.floor(Date.now() / 1000))) {}

  /** Seconds for the next block: wall clock plus offset (callers keep it above the parent's). */
  now(): bigint {
    return this.wallSeconds() + this.offsetSeconds;
  }

  get offset(): bigint {
    return this.offsetSeconds;
  }

  set offset(seconds: bigint) {
    this.offsetSeconds = seconds;
  }

  /** Moves the offset so that now() answers `timestamp` at this moment. */
  continueFrom(timestamp: bigint): void {
    this.offsetSeconds = timestamp - this.wallSeconds();
  }
}
