// The pending state: the tip's state after the executable pool transactions, as the next block
// would run them. Reads with the "pending" block parameter see it, and calls run on it in the
// next block's context. It is computed on a builder of its own, never committed, and kept until
// the tip or the pending transactions change.
import type { MerkleStateManager } from "@ethereumjs/statemanager";
import type { Chain } from "../chain/chain.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { BlockBuilder, BlockTemplate } from "../execution/blockBuilder.js";
import { ExecutionTimeoutError, type ExecutionBlockContext, type ExecutionEngine } from "../execution/engine.js";
import type { StateDatabase } from "../state/stateDatabase.js";
import type { TransactionPool } from "../txpool/transactionPool.js";
import { nextBlockTemplate, type BlockFields, type TemplateRules } from "./blockTemplate.js";

export class PendingState {
  private simulation: { key: string; state: MerkleStateManager } | undefined;
  /** Simulations run one at a time on the one builder. */
  private queue: Promise<unknown> = Promise.resolve();
  private builder: Promise<BlockBuilder> | undefined;

  /** `createBuilder` is called on the first use that needs a simulation (and after a timed-out call). */
  constructor(
    private readonly chain: Chain,
    private readonly pool: TransactionPool,
    private readonly state: StateDatabase,
    private readonly createBuilder: () => Promise<BlockBuilder>,
    /** Read at each simulation: the coinbase changes with anvil_setCoinbase. */
    private readonly blockOptions: BlockFields,
    /** Seconds for the next block: the miner's clock, so "pending" sees moved time too. */
    private readonly now: () => bigint = () => BigInt(Math.floor(Date.now() / 1000)),
    /** As the miner's (MinerOptions.rules): the pending block's timestamp and difficulty. */
    private readonly rules: TemplateRules = {},
  ) {}

  /** Runs `read` on the pending state (no other simulation replaces it meanwhile). */
  read<T>(read: (state: MerkleStateManager) => Promise<T>): Promise<T> {
    const tip = this.chain.tip;
    const pending = this.pool.pending();
    if (pending.length === 0) return read(this.state.reader(tip.header.fields.stateRoot)!);
    return this.onSimulation(async (builder) => read(builder.engine.state));
  }

  /**
   * Runs `run` on the engine holding the pending state, in the context of the next block. Work
   * that changes the state must leave it as it found it (checkpoint and revert).
   */
  execute<T>(run: (engine: ExecutionEngine, context: ExecutionBlockContext) => Promise<T>): Promise<T> {
    return this.onSimulation(async (builder, template) => {
      const { coinbase, timestamp, gasLimit, minimumGasPrice, difficulty } = template;
      const context: ExecutionBlockContext = { number: template.parent.number + 1n, coinbase, timestamp, gasLimit, baseFee: minimumGasPrice, difficulty };
      try {
        return await run(builder.engine, context);
      } catch (error) {
        // A timed-out run leaves the engine mid-checkpoint: start over with a new builder.
        if (error instanceof ExecutionTimeoutError) {
          this.builder = undefined;
          this.simulation = undefined;
        }
        throw error;
      }
    });
  }

  /** Runs `use` after the builder's state is the pending state of the current tip and pool. */
  private onSimulation<T>(use: (builder: BlockBuilder, template: BlockTemplate) => Promise<T>): Promise<T> {
    const tip = this.chain.tip;
    const pending = this.pool.pending();
    const key = [tip.hash, ...pending.map((transaction) => transaction.hash)].map(bytesToUnprefixedHex).join(":");
    const run = this.queue.then(async () => {
      const template = nextBlockTemplate(tip, this.blockOptions, this.now(), this.rules);
      this.builder ??= this.createBuilder();
      const builder = await this.builder;
      if (this.simulation?.key !== key) {
        // The builder's state is about to change: a failed simulation must not be served as the old one.
        this.simulation = undefined;
        this.simulation = { key, state: await builder.simulate(template, pending) };
      }
      return use(builder, template);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
