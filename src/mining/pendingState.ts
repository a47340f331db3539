// The pending state: the tip's state after the executable pool transactions, as the next block
// would run them. Reads with the "pending" block parameter see it. It is computed on a builder of
// its own, never committed, and kept until the tip or the pending transactions change.
import type { MerkleStateManager } from "@ethereumjs/statemanager";
import type { Chain } from "../chain/chain.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { BlockBuilder } from "../execution/blockBuilder.js";
import type { StateDatabase } from "../state/stateDatabase.js";
import type { TransactionPool } from "../txpool/transactionPool.js";
import { nextBlockTemplate, type MinerOptions } from "./miner.js";

export class PendingState {
  private simulation: { key: string; state: MerkleStateManager } | undefined;
  /** Simulations run one at a time on the one builder. */
  private queue: Promise<unknown> = Promise.resolve();
  private builder: Promise<BlockBuilder> | undefined;

  /** `createBuilder` is called once, on the first pending read that has transactions to run. */
  constructor(
    private readonly chain: Chain,
    private readonly pool: TransactionPool,
    private readonly state: StateDatabase,
    private readonly createBuilder: () => Promise<BlockBuilder>,
    private readonly blockOptions: Pick<MinerOptions, "coinbase" | "extraData">,
  ) {}

  /** Runs `read` on the pending state (no other simulation replaces it meanwhile). */
  read<T>(read: (state: MerkleStateManager) => Promise<T>): Promise<T> {
    const tip = this.chain.tip;
    const pending = this.pool.pending();
    if (pending.length === 0) return read(this.state.reader(tip.header.fields.stateRoot)!);
    const key = [tip.hash, ...pending.map((transaction) => transaction.hash)].map(bytesToUnprefixedHex).join(":");
    const run = this.queue.then(async () => {
      if (this.simulation?.key === key) return read(this.simulation.state);
      // The builder's state is about to change: a failed simulation must not be served as the old one.
      this.simulation = undefined;
      this.builder ??= this.createBuilder();
      const now = BigInt(Math.floor(Date.now() / 1000));
      const state = await (await this.builder).simulate(nextBlockTemplate(tip, this.blockOptions, now), pending);
      this.simulation = { key, state };
      return read(state);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
