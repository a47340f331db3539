// Hash rates for eth_hashrate and eth_netHashrate (the reference's co/rsk/metrics/HashRateCalculator):
// a block's difficulty is the number of parent-chain header hashes its proof takes on average, so
// the difficulties of the best chain's blocks of the last hour, over 3,600 s, are the hashes per
// second that went into it. The node's own rate counts the blocks paying its coinbase while its
// built-in miner runs, plus what external miners reported through eth_submitHashrate lately.
//
// The blocks of the hour are read back from the tip once, then only the new ones: each query walks
// from the tip until it meets the newest block it already holds. A dev node can mine thousands of
// blocks a minute: the window holds the newest `maxBlocks` of the hour, and when it is full the
// rate is taken over the time those blocks span instead of the whole hour.
import type { Block } from "../chain/block.js";
import type { Chain } from "../chain/chain.js";
import { bytesToUnprefixedHex } from "../common/hex.js";

export interface HashRateOptions {
  /** Seconds of the clock blocks are stamped by (the dev clock on a dev node). */
  readonly nowSeconds: () => bigint;
  /** Milliseconds of the wall clock, for the reports' freshness. */
  readonly nowMs: () => number;
  /** The coinbase of the node's built-in miner; undefined when it does not run (--miner external). */
  readonly ownCoinbase: () => Uint8Array | undefined;
  readonly windowSeconds: bigint;
  /** The most blocks of the window held and summed. */
  readonly maxBlocks: number;
  /** A reported rate counts this long after its report. */
  readonly reportLifetimeMs: number;
  /** Reports from at most this many miners are kept (the oldest report goes first). */
  readonly maxReporters: number;
}

export const defaultHashRateOptions: Omit<HashRateOptions, "nowSeconds" | "ownCoinbase"> = {
  nowMs: () => Date.now(),
  windowSeconds: 3600n,
  maxBlocks: 10_000,
  reportLifetimeMs: 60_000,
  maxReporters: 1_000,
};

interface WindowBlock {
  readonly hash: string;
  readonly timestamp: bigint;
  readonly difficulty: bigint;
  readonly coinbase: string;
}

export class HashRates {
  /** The newest blocks of the best chain, oldest first. */
  private window: WindowBlock[] = [];
  private readonly reports = new Map<string, { rate: bigint; atMs: number }>();

  constructor(
    private readonly chain: Chain,
    private readonly options: HashRateOptions,
  ) {}

  /** Records what a miner says it does (eth_submitHashrate); a newer report from the same id replaces it. */
  report(rate: bigint, clientId: string): void {
    this.reports.delete(clientId);
    this.reports.set(clientId, { rate, atMs: this.options.nowMs() });
    while (this.reports.size > this.options.maxReporters) this.reports.delete(this.reports.keys().next().value!);
  }

  /** eth_hashrate: hashes per second of this node's miner over the window, plus the fresh reports. */
  async nodeHashrate(): Promise<bigint> {
    const own = this.options.ownCoinbase();
    const coinbase = own === undefined ? undefined : bytesToUnprefixedHex(own);
    const mined = coinbase === undefined ? 0n : await this.rate((block) => block.coinbase === coinbase);
    return mined + this.reportedRate();
  }

  /** eth_netHashrate: hashes per second that went into the best chain over the window. */
  networkHashrate(): Promise<bigint> {
    return this.rate(() => true);
  }

  private reportedRate(): bigint {
    const freshSince = this.options.nowMs() - this.options.reportLifetimeMs;
    let total = 0n;
    for (const [clientId, { rate, atMs }] of this.reports) {
      if (atMs < freshSince) this.reports.delete(clientId);
      else total += rate;
    }
    return total;
  }

  private async rate(counted: (block: WindowBlock) => boolean): Promise<bigint> {
    const now = this.options.nowSeconds();
    const since = now - this.options.windowSeconds;
    await this.catchUp(since);
    let hashes = 0n;
    for (const block of this.window) if (counted(block)) hashes += block.difficulty;
    const oldest = this.window[0];
    const full = this.window.length >= this.options.maxBlocks && oldest !== undefined;
    // A full window covers less than the hour: its blocks' own span (at least a second).
    const span = full ? (now - oldest.timestamp > 0n ? now - oldest.timestamp : 1n) : this.options.windowSeconds;
    return hashes / span;
  }

  /** Brings the window to the tip: the blocks after the newest one held, or all of the hour after a change of branch. */
  private async catchUp(since: bigint): Promise<void> {
    const newest = this.window.at(-1)?.hash;
    const added: WindowBlock[] = [];
    let joined = false;
    let cursor: Block | undefined = this.chain.tip;
    while (cursor !== undefined && added.length < this.options.maxBlocks) {
      const hash = bytesToUnprefixedHex(cursor.hash);
      if (hash === newest) {
        joined = true;
        break;
      }
      const { timestamp, difficulty, coinbase, parentHash } = cursor.header.fields;
      if (timestamp < since) break;
      added.push({ hash, timestamp, difficulty, coinbase: bytesToUnprefixedHex(coinbase) });
      if (cursor.number === 0n) break;
      cursor = await this.chain.getBlockFromTip(parentHash);
    }
    added.reverse();
    this.window = joined ? this.window.concat(added) : added;
    let drop = Math.max(0, this.window.length - this.options.maxBlocks);
    while (drop < this.window.length && this.window[drop]!.timestamp < since) drop++;
    if (drop > 0) this.window = this.window.slice(drop);
  }
}
