// Builds a block on a parent: runs candidate transactions through @ethereumjs/vm on the state at
// the parent's root (plain transfers without the EVM, calls without runTx, when they can: see
// plainTransfers.ts and leanCalls.ts), skips those the block cannot hold, and assembles the header with real
// transaction and receipt trie roots, the logs bloom, the fees paid and the new state root.
import type { Block as EngineBlock } from "@ethereumjs/block";
import type { Common } from "@ethereumjs/common";
import type { EVM } from "@ethereumjs/evm";
import type { MerkleStateManager } from "@ethereumjs/statemanager";
import { Address } from "@ethereumjs/util";
import type { VM } from "@ethereumjs/vm";
import { Block } from "../chain/block.js";
import { BlockHeader, emptyBloom, emptyBytes, emptyListHash, unclesHashOf } from "../chain/header.js";
import { indexedTrieRoot } from "../chain/indexedTrie.js";
import { encodeReceiptForTrie, type ChainReceipt } from "../chain/receipts.js";
import { effectiveGasPrice, type ChainTransaction } from "../chain/transactions.js";
import { engineErrorMessage } from "../common/engineErrors.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import { enginePackages, loadEnginePackages } from "./enginePackages.js";
import { createExecutionBlock, createExecutionEngine, creditMinimumGasPriceShare, type CanonicalHashLookup, type ExecutionEngine } from "./engine.js";
import { leanCallsApply, runLeanCall, type LeanCallOutcome } from "./leanCalls.js";
import { plainTransfersApply, runPlainTransfer, type PlainTransferContext } from "./plainTransfers.js";

export interface BlockTemplate {
  parent: Block;
  coinbase: Uint8Array;
  timestamp: bigint;
  gasLimit: bigint;
  minimumGasPrice: bigint;
  difficulty: bigint;
  extraData: Uint8Array;
  /** Uncle headers the block includes (none by default): they change no state, only the header. */
  uncles?: readonly BlockHeader[];
}

/**
 * A change of state a dev method makes (anvil_setBalance and the like), applied before the block's
 * transactions so that the block's state root carries it.
 */
export type StateEdit = (state: MerkleStateManager) => Promise<void>;

export interface SkippedTransaction {
  readonly transaction: ChainTransaction;
  /** Why the block could not hold it (the engine's words). */
  readonly reason: string;
  /** true when a later block may take it (no room left, or an earlier transaction of its sender was skipped). */
  readonly deferred: boolean;
}

export interface BuiltBlock {
  readonly block: Block;
  readonly receipts: ChainReceipt[];
  readonly skipped: SkippedTransaction[];
}

const intrinsicTransferGas = 21_000n;

function orBloom(target: Uint8Array, source: Uint8Array): void {
  for (let index = 0; index < target.length; index++) target[index]! |= source[index]!;
}

/** What one included transaction did. */
interface TransactionOutcome {
  gasUsed: bigint;
  success: boolean;
  logsBloom: Uint8Array;
  logs: ChainReceipt["logs"];
  contractAddress: Uint8Array | undefined;
}

/** Checkpoints the state manager holds open (the package's count). */
function openCheckpoints(state: MerkleStateManager): number {
  return (state as unknown as { _checkpointCount: number })._checkpointCount;
}

/** What a transaction the engine ran did: a creation's runTx names the contract it created. */
type EngineOutcome = Omit<LeanCallOutcome, "contractAddress"> & { readonly contractAddress: Uint8Array | undefined };

/** What running a block's candidates produced. */
interface Execution {
  included: ChainTransaction[];
  receipts: ChainReceipt[];
  skipped: SkippedTransaction[];
  logsBloom: Uint8Array;
  gasUsed: bigint;
  paidFees: bigint;
}

/** The ways around the engine's runTx a builder may take. */
export interface BlockBuilderPaths {
  /** Plain value transfers without the EVM (execution/plainTransfers.ts). */
  plainTransfers?: boolean;
  /** Calls through the EVM without runTx (execution/leanCalls.ts). */
  leanCalls?: boolean;
}

/** Executes blocks on one state manager, the chain's working state. */
export class BlockBuilder {
  /** Whether a simulation holds its checkpoint open. */
  private simulating = false;

  private readonly vm: VM;
  /** The engine's EVM (the package's class: createExecutionEngine makes one). */
  private readonly evm: EVM;
  private readonly state: MerkleStateManager;
  /** Whether plain value transfers skip the EVM (execution/plainTransfers.ts). */
  private readonly plainTransfers: boolean;
  /** Whether calls skip the engine's runTx (execution/leanCalls.ts). */
  private readonly leanCalls: boolean;

  private constructor(
    /** The engine the builder executes on; a simulation's state is readable and callable through it. */
    readonly engine: ExecutionEngine<MerkleStateManager>,
    paths: Required<BlockBuilderPaths>,
  ) {
    this.vm = engine.vm;
    this.evm = engine.vm.evm as EVM;
    this.state = engine.state;
    this.plainTransfers = paths.plainTransfers;
    this.leanCalls = paths.leanCalls;
  }

  /** By default each path is taken when the rules allow it; false runs those transactions through runTx (the tests compare both). */
  static async create(common: Common, state: MerkleStateManager, canonicalHash: CanonicalHashLookup, paths: BlockBuilderPaths = {}): Promise<BlockBuilder> {
    return new BlockBuilder(await createExecutionEngine(common, state, canonicalHash), {
      plainTransfers: paths.plainTransfers ?? plainTransfersApply(common),
      leanCalls: paths.leanCalls ?? leanCallsApply(common),
    });
  }

  /**
   * Builds a block from `candidates`, in order. A transaction the block cannot hold (out of gas
   * room, wrong nonce, too little balance) is skipped and reported; the state keeps the others.
   * `edit` changes the state first (a dev block: see mining/devState.ts).
   */
  async build(template: BlockTemplate, candidates: Iterable<ChainTransaction>, edit?: StateEdit): Promise<BuiltBlock> {
    await this.state.checkpoint();
    let execution: Execution;
    try {
      if (edit !== undefined) await edit(this.state);
      execution = await this.execute(template, candidates);
      await this.state.commit();
    } catch (error) {
      await this.state.revert();
      throw error;
    }
    const { included, receipts, skipped, logsBloom, gasUsed, paidFees } = execution;
    const stateRoot = await this.state.getStateRoot();
    const header = new BlockHeader({
      parentHash: template.parent.hash,
      unclesHash: template.uncles === undefined || template.uncles.length === 0 ? emptyListHash : unclesHashOf(template.uncles),
      coinbase: template.coinbase,
      stateRoot,
      transactionsRoot: indexedTrieRoot(included.map((transaction) => transaction.raw)),
      receiptsRoot: indexedTrieRoot(receipts.map(encodeReceiptForTrie)),
      logsBloom,
      difficulty: template.difficulty,
      number: template.parent.number + 1n,
      gasLimit: template.gasLimit,
      gasUsed,
      timestamp: template.timestamp,
      extraData: template.extraData,
      paidFees,
      minimumGasPrice: template.minimumGasPrice,
      uncleCount: template.uncles?.length ?? 0,
      mergedMiningHeader: emptyBytes,
      mergedMiningMerkleProof: emptyBytes,
      mergedMiningCoinbaseTransaction: emptyBytes,
    });
    return { block: new Block(header, included, template.uncles), receipts, skipped };
  }

  /**
   * Runs `candidates` on the parent's state as `build` would, but keeps the result uncommitted:
   * the builder's state then reads as the state after them (the pending state). Its changes never
   * reach the tries. Call again to replace the simulation.
   */
  async simulate(template: BlockTemplate, candidates: Iterable<ChainTransaction>): Promise<MerkleStateManager> {
    if (this.simulating) {
      await this.state.revert();
      this.simulating = false;
    }
    await this.state.setStateRoot(template.parent.header.fields.stateRoot);
    await this.state.checkpoint();
    this.simulating = true;
    await this.execute(template, candidates);
    return this.state;
  }

  private async execute(template: BlockTemplate, candidates: Iterable<ChainTransaction>): Promise<Execution> {
    const common = this.vm.common;
    const coinbase = new Address(template.coinbase);
    // The engine's block costs a header: made only when a transaction needs the engine.
    let executionBlock: EngineBlock | undefined;
    const engineBlock = () =>
      (executionBlock ??= createExecutionBlock(common, {
        number: template.parent.number + 1n,
        coinbase: template.coinbase,
        timestamp: template.timestamp,
        gasLimit: template.gasLimit,
        baseFee: template.minimumGasPrice,
        difficulty: template.difficulty,
      }));

    const plainTransfer: PlainTransferContext | undefined = this.plainTransfers
      ? { state: this.state, precompiles: this.vm.evm.precompiles, coinbase, baseFee: template.minimumGasPrice }
      : undefined;
    const execution: Execution = { included: [], receipts: [], skipped: [], logsBloom: new Uint8Array(256), gasUsed: 0n, paidFees: 0n };
    /** Senders with a skipped transaction: their later nonces cannot run in this block. */
    const blockedSenders = new Set<string>();
    const skip = (transaction: ChainTransaction, reason: string, deferred: boolean) => {
      execution.skipped.push({ transaction, reason, deferred });
      blockedSenders.add(bytesToUnprefixedHex(transaction.sender));
    };

    for (const transaction of candidates) {
      const { tx } = transaction;
      if (blockedSenders.has(bytesToUnprefixedHex(transaction.sender))) {
        skip(transaction, "an earlier transaction of the sender was not included", true);
        continue;
      }
      if (tx.gasLimit > template.gasLimit - execution.gasUsed) {
        if (template.gasLimit - execution.gasUsed < intrinsicTransferGas) break;
        skip(transaction, "not enough gas left in the block", true);
        continue;
      }
      let outcome: TransactionOutcome;
      try {
        outcome = await this.run(transaction, engineBlock, execution.gasUsed, plainTransfer);
      } catch (error) {
        skip(transaction, engineErrorMessage(error), false);
        continue;
      }
      execution.gasUsed += outcome.gasUsed;
      execution.paidFees += outcome.gasUsed * (tx.type === 0 ? tx.gasPrice : effectiveGasPrice(tx, template.minimumGasPrice));
      orBloom(execution.logsBloom, outcome.logsBloom);
      execution.included.push(transaction);
      execution.receipts.push({
        success: outcome.success,
        gasUsed: outcome.gasUsed,
        cumulativeGasUsed: execution.gasUsed,
        logsBloom: outcome.logsBloom,
        logs: outcome.logs,
        contractAddress: outcome.contractAddress,
      });
    }
    return execution;
  }

  /**
   * Runs one transaction: a plain value transfer directly on the state when it can, else through
   * the engine, with the block's minimum-gas-price share of the fee paid to the miner after it.
   * Throws the engine's refusal when the block cannot hold the transaction.
   */
  private async run(
    transaction: ChainTransaction,
    engineBlock: () => EngineBlock,
    blockGasUsed: bigint,
    plainTransfer: PlainTransferContext | undefined,
  ): Promise<TransactionOutcome> {
    const plainGas = plainTransfer === undefined ? undefined : await runPlainTransfer(plainTransfer, transaction);
    if (plainGas !== undefined) return { gasUsed: plainGas, success: true, logsBloom: emptyBloom, logs: [], contractAddress: undefined };
    const block = engineBlock();
    const ran = await this.runThroughEngine(transaction, block, blockGasUsed);
    await creditMinimumGasPriceShare(this.state, block.header.coinbase, ran.gasUsed, block.header.baseFeePerGas ?? 0n);
    return {
      gasUsed: ran.gasUsed,
      success: ran.success,
      logsBloom: ran.logsBloom,
      logs: ran.logs.map(([address, topics, data]) => ({ address, topics, data })),
      contractAddress: ran.contractAddress,
    };
  }

  /**
   * The lean path when it takes the transaction, else runTx. A failure of the engine itself inside
   * a frame (a store it cannot read, say) escapes past the frames' checkpoints, and runTx's and
   * the lean path's own revert only the innermost: the state is taken back to where the
   * transaction started (the fee and the nonce it took) and the transient storage emptied (the
   * EVM empties it after a top-level message that ends, which this one did not).
   */
  private async runThroughEngine(transaction: ChainTransaction, block: EngineBlock, blockGasUsed: bigint): Promise<EngineOutcome> {
    const checkpointsBefore = openCheckpoints(this.state);
    try {
      return (this.leanCalls ? await runLeanCall({ evm: this.evm, state: this.state, block }, transaction) : undefined) ?? (await this.runTx(transaction, block, blockGasUsed));
    } catch (error) {
      while (openCheckpoints(this.state) > checkpointsBefore) await this.state.revert();
      this.evm.transientStorage.clear();
      throw error;
    }
  }

  /** The engine's runTx, its result in the lean path's form (the created contract besides). */
  private async runTx(transaction: ChainTransaction, block: EngineBlock, blockGasUsed: bigint): Promise<EngineOutcome> {
    const { runTx } = (enginePackages ?? (await loadEnginePackages())).vm;
    const result = await runTx(this.vm, { tx: transaction.tx, block, blockGasUsed, skipHardForkValidation: true });
    return {
      gasUsed: result.totalGasSpent,
      success: result.execResult.exceptionError === undefined,
      logsBloom: result.bloom.bitvector,
      logs: result.execResult.logs ?? [],
      contractAddress: result.createdAddress?.bytes,
    };
  }

  /** Puts the working state back on a committed root (after a block that was not written). */
  async resetTo(stateRoot: Uint8Array): Promise<void> {
    await this.state.setStateRoot(stateRoot);
  }
}
