// The one path by which a block this node did not build joins the chain (a file import now; peers
// and merged miners next), in the reference's order (rskj: co/rsk/core/bc/BlockChainImpl.java
// tryToConnect, co/rsk/RskContext.java's validation rules, co/rsk/core/bc/BlockExecutor.java):
//
//   1. already stored                        -> EXIST
//   2. parent not stored                     -> NO_PARENT
//   3. the rules that need no execution      -> INVALID_BLOCK (rules/block.ts: against the parent,
//      the block's own, the uncles, the transactions root, the parent-chain proof of work; a proof
//      checked before the importer saw the block, or a body the long sync checked against its
//      header, is not checked again)
//   4. execution on the parent's state, strict: a transaction the block builder would skip, or a
//      state root, receipts root, bloom, gas used or fees that differ from the header's, makes the
//      block INVALID_BLOCK, and the state it wrote is dropped
//   5. stored, then the fork choice: the head's child appends (group commit), a heavier block
//      elsewhere switches branches in one batch (Chain.switchHead), anything else is a side block
//
// Everything runs in the chain's write queue, so an import never interleaves with a block being
// mined, another import or a dev revert. The importer writes only through Chain.
import type { Block } from "../chain/block.js";
import type { Chain } from "../chain/chain.js";
import type { BlockHeader } from "../chain/header.js";
import type { ChainWriteQueue } from "../chain/writeQueue.js";
import type { ChainReceipt } from "../chain/receipts.js";
import { bytesToHex, bytesToUnprefixedHex } from "../common/hex.js";
import type { BlockBuilder, BlockTemplate } from "../execution/blockBuilder.js";
import type { CanonicalHashLookup } from "../execution/engine.js";
import type { StateDatabase } from "../state/stateDatabase.js";
import type { ConsensusConstants } from "./constants.js";
import { collectAncestors } from "./familyView.js";
import { selectHead } from "./forkChoice.js";
import type { BlockSource, ImportOutcome } from "./importResult.js";
import { checkMergedMiningProof, type MergedMiningProof, type MergedMiningProofCheck } from "./mergedMiningProof.js";
import { checkBlockBeforeExecution } from "./rules/block.js";
import { checkUncleOwnHeader } from "./rules/header.js";
import { checkHeaderAgainstParent, type RuleContext } from "./rules/parent.js";
import { checkUncles } from "./uncles.js";
import { firstRefusal, passed, refused, type RuleVerdict } from "./verdict.js";

export interface BlockImporterOptions {
  readonly constants: ConsensusConstants;
  /** The local clock in seconds (the dev clock on a dev node). */
  readonly now: () => bigint;
  /** The queue mined blocks, imports, reorgs and dev reverts share. */
  readonly writeQueue: ChainWriteQueue;
  /**
   * Makes the importer's own block builder (its own working state, apart from the miner's), whose
   * BLOCKHASH reads `canonicalHash`: the importer answers it along the branch of the block executing.
   */
  readonly createBuilder: (canonicalHash: CanonicalHashLookup) => Promise<BlockBuilder>;
  /**
   * With --verify-imports-with-reference-engine: a builder without the fast paths (every
   * transaction through the engine's runTx). Each imported block then runs on both, and a block
   * where they disagree is refused, naming the field.
   */
  readonly createReferenceBuilder?: ((canonicalHash: CanonicalHashLookup) => Promise<BlockBuilder>) | undefined;
}

/** Hears the outcome of every block handed to the importer (stored, refused, already there, orphaned). */
export type ImportOutcomeListener = (outcome: ImportOutcome, source: BlockSource) => void;

/** BLOCKHASH reaches this many blocks back (the EVM's window). */
const blockHashWindow = 256n;

export class BlockImporter {
  private builder: BlockBuilder | undefined;
  private referenceBuilder: BlockBuilder | undefined;
  /** State root the builder's working state is on (hex). */
  private builderRoot = "";
  /** The parent of the block executing: BLOCKHASH answers along its branch. */
  private executingParent: Block | undefined;
  private readonly outcomeListeners = new Set<ImportOutcomeListener>();

  constructor(
    private readonly chain: Chain,
    private readonly state: StateDatabase,
    private readonly options: BlockImporterOptions,
  ) {}

  /** The constants and the clock the rules judge by now (the gossip checks ahead of the import use them too). */
  ruleContext(): RuleContext {
    return { constants: this.options.constants, now: this.options.now() };
  }

  /** Imports one block (see the file's header); settles with the outcome once the queue has run it. */
  importBlock(block: Block, source: BlockSource): Promise<ImportOutcome> {
    return this.importQueued(block, source, undefined);
  }

  /**
   * Imports a block this node built and executed itself (a merged-mining template, now proven):
   * every rule runs as for any block, but not the execution, whose receipts are given, as long as
   * the state the execution wrote is still there (a refused import in between drops unwritten trie
   * nodes: the block is then executed like any other).
   */
  importBuiltBlock(block: Block, receipts: ChainReceipt[], source: BlockSource): Promise<ImportOutcome> {
    return this.importQueued(block, source, receipts);
  }

  private importQueued(block: Block, source: BlockSource, builtReceipts: ChainReceipt[] | undefined): Promise<ImportOutcome> {
    return this.options.writeQueue.run(async () => {
      await this.options.writeQueue.yieldIfDue();
      const outcome = await this.importNow(block, builtReceipts);
      for (const listener of this.outcomeListeners) listener(outcome, source);
      return outcome;
    });
  }

  /** Tells `listener` the outcome of every block imported from now on; answers the function that unsubscribes. */
  subscribeOutcomes(listener: ImportOutcomeListener): () => void {
    this.outcomeListeners.add(listener);
    return () => this.outcomeListeners.delete(listener);
  }

  private async importNow(block: Block, builtReceipts: ChainReceipt[] | undefined): Promise<ImportOutcome> {
    const { chain } = this;
    if (chain.hasBlock(block.hash)) return { status: "EXIST", block };
    const parentHash = block.header.fields.parentHash;
    const parent = await chain.getBlockFromTip(parentHash);
    const parentTotalDifficulty = parent === undefined ? undefined : await chain.getTotalDifficultyFromTip(parentHash);
    if (parent === undefined || parentTotalDifficulty === undefined) return { status: "NO_PARENT", block };

    const verdict = await this.checkBeforeExecution(block, parent);
    if (!verdict.ok) return { status: "INVALID_BLOCK", block, rule: verdict.rule, reason: verdict.reason };
    const executed = builtReceipts !== undefined && this.state.hasRoot(block.header.fields.stateRoot) ? { ok: true as const, receipts: builtReceipts } : await this.execute(block, parent);
    if (!executed.ok) return { status: "INVALID_BLOCK", block, rule: executed.rule, reason: executed.reason };

    const totalDifficulty = parentTotalDifficulty + block.cumulativeDifficulty;
    const tip = chain.tip;
    const selection = selectHead(
      { totalDifficulty, paidFees: block.header.fields.paidFees, hash: block.hash },
      { totalDifficulty: chain.tipWeight, paidFees: tip.header.fields.paidFees, hash: tip.hash },
    );
    if (!selection.becomesHead) {
      await chain.storeSideBlock(block, executed.receipts, totalDifficulty);
      return { status: "IMPORTED_NOT_BEST", block };
    }
    if (Buffer.compare(parentHash, tip.hash) === 0) {
      // The head's child: appended behind the tip like a mined block (on disk once chain.whenTipWritten settles).
      const written = chain.appendBlock(block, executed.receipts);
      written.catch(() => undefined);
    } else {
      await chain.switchHead(block, executed.receipts, totalDifficulty);
    }
    return { status: "IMPORTED_BEST", block };
  }

  /**
   * Step 3: every rule that needs no execution (rules/block.ts), with the uncles and the proof of
   * work. The uncles hash and the transactions root are not computed again for a block whose body
   * was checked against its header before (recordBodyMatchesHeader).
   */
  private async checkBeforeExecution(block: Block, parent: Block): Promise<RuleVerdict> {
    const { constants } = this.options;
    const context: RuleContext = { constants, now: this.options.now() };
    const bodyMatchesHeader = bodiesMatchingHeaders.has(block);
    // The uncle rules read the block's line back a few generations (and the uncles those included).
    const ancestors = block.uncles.length === 0 ? [] : await collectAncestors(block.number, parent.hash, constants.uncleGenerationLimit, (hash) => this.chain.getBlockFromTip(hash));
    return checkBlockBeforeExecution(block, parent.header.fields, context, {
      uncles: () =>
        checkUncles(
          block,
          { ancestors },
          {
            ownHeader: (uncle) => firstRefusal<string>([() => checkProofOfWork(uncle), () => checkUncleOwnHeader(uncle.fields, context)]),
            againstParent: (uncle, uncleParent) => checkHeaderAgainstParent(uncle.fields, uncleParent.fields, context),
          },
          constants,
          bodyMatchesHeader,
        ),
      proofOfWork: () => checkProofOfWork(block.header),
    }, bodyMatchesHeader);
  }

  /**
   * Step 4: runs the block's transactions on its parent's state with the importer's builder, and
   * compares what they did with what the header says. A block refused leaves no state behind: the
   * trie nodes its execution wrote are dropped before anything else is written.
   */
  private async execute(block: Block, parent: Block): Promise<{ ok: true; receipts: ChainReceipt[] } | { ok: false; rule: string; reason: string }> {
    const builder = (this.builder ??= await this.options.createBuilder((blockNumber) => this.hashOnExecutingBranch(blockNumber)));
    const parentRoot = parent.header.fields.stateRoot;
    if (bytesToUnprefixedHex(parentRoot) !== this.builderRoot) await builder.resetTo(parentRoot);
    this.executingParent = parent;
    let refusal: { rule: string; reason: string } | undefined;
    let receipts: ChainReceipt[] = [];
    try {
      const built = await builder.build(templateOf(block, parent), block.transactions);
      receipts = built.receipts;
      refusal = executionRefusal(block, built.block, built.skipped.map(({ transaction, reason }) => ({ hash: transaction.hash, reason })));
      if (refusal === undefined && this.options.createReferenceBuilder !== undefined) refusal = await this.compareWithReferenceEngine(block, parent, built.block, receipts);
    } catch (error) {
      refusal = { rule: "execution", reason: (error as Error).message };
    } finally {
      this.executingParent = undefined;
    }
    if (refusal !== undefined) {
      // What the refused block's execution wrote into the tries goes nowhere.
      this.state.writeAbandoned(this.state.takeWrites([]));
      await builder.resetTo(parentRoot);
      this.builderRoot = bytesToUnprefixedHex(parentRoot);
      return { ok: false, ...refusal };
    }
    this.builderRoot = bytesToUnprefixedHex(block.header.fields.stateRoot);
    return { ok: true, receipts };
  }

  /**
   * Runs the block again on the untuned engine (always reset to the parent's root: it runs only
   * here) and answers the first field where the two executions differ.
   */
  private async compareWithReferenceEngine(block: Block, parent: Block, fast: Block, fastReceipts: readonly ChainReceipt[]): Promise<{ rule: string; reason: string } | undefined> {
    const reference = (this.referenceBuilder ??= await this.options.createReferenceBuilder!((blockNumber) => this.hashOnExecutingBranch(blockNumber)));
    await reference.resetTo(parent.header.fields.stateRoot);
    const built = await reference.build(templateOf(block, parent), block.transactions);
    const disagreement = (what: string) => ({ rule: "referenceEngineDisagrees", reason: `the fast execution paths and the reference engine disagree on ${what}: a fault of this node, not necessarily of the block` });
    if (built.skipped.length > 0 || built.block.transactions.length !== fast.transactions.length) return disagreement("which transactions can run");
    const differing = firstDifferingResult(fast.header, built.block.header);
    if (differing !== undefined) return disagreement(`the ${differing.field}`);
    const index = built.receipts.findIndex((receipt, position) => receipt.gasUsed !== fastReceipts[position]!.gasUsed || receipt.success !== fastReceipts[position]!.success);
    return index < 0 ? undefined : disagreement(`transaction ${index}'s gas used or status`);
  }

  /** BLOCKHASH while a block executes: the hash of block `blockNumber` on the executing block's own branch. */
  private async hashOnExecutingBranch(blockNumber: bigint): Promise<Uint8Array | undefined> {
    const parent = this.executingParent;
    if (parent === undefined || blockNumber > parent.number || blockNumber < 0n || parent.number - blockNumber >= blockHashWindow) return undefined;
    // On the canonical chain (a file import, a peer's next block) the index answers.
    const canonicalParent = await this.chain.getCanonicalHashFromTip(parent.number);
    if (canonicalParent !== undefined && Buffer.compare(canonicalParent, parent.hash) === 0) return this.chain.getCanonicalHashFromTip(blockNumber);
    let cursor: Block | undefined = parent;
    while (cursor !== undefined && cursor.number > blockNumber) cursor = await this.chain.getBlockFromTip(cursor.header.fields.parentHash);
    return cursor?.hash;
  }
}

/**
 * Verdicts of proofs checked already, by header: the merged-mining server checks a submission's
 * proof before it imports the block, gossip and long sync check a block's header before the
 * importer does; the header (immutable, like the hashes it keeps) is the same object, so the second
 * check is a lookup.
 */
const proofVerdicts = new WeakMap<BlockHeader, RuleVerdict>();

/** The parent-chain proof of work of a header (ProofOfWorkRule), as a rule verdict; checked once per header object. */
export function checkProofOfWork(header: BlockHeader): RuleVerdict {
  let verdict = proofVerdicts.get(header);
  if (verdict === undefined) {
    verdict = checkProofOfWorkNow(header);
    proofVerdicts.set(header, verdict);
  }
  return verdict;
}

function checkProofOfWorkNow(header: BlockHeader): RuleVerdict {
  return proofOfWorkVerdict(checkMergedMiningProof(mergedMiningProofOf(header)));
}

/** What a header's proof of work is checked on (checkMergedMiningProof's input). */
export function mergedMiningProofOf(header: BlockHeader): MergedMiningProof {
  const { fields } = header;
  return {
    hashForMergedMining: header.hashForMergedMining,
    difficulty: fields.difficulty,
    parentHeader: fields.mergedMiningHeader,
    merkleProof: fields.mergedMiningMerkleProof,
    compressedCoinbase: fields.mergedMiningCoinbaseTransaction,
  };
}

/**
 * Takes the check of `header`'s proof made elsewhere (checkMergedMiningProof of
 * mergedMiningProofOf(header), on another thread) as its verdict: checkProofOfWork answers it
 * from then on. Answers the verdict.
 */
export function recordProofOfWorkCheck(header: BlockHeader, check: MergedMiningProofCheck): RuleVerdict {
  const verdict = proofOfWorkVerdict(check);
  proofVerdicts.set(header, verdict);
  return verdict;
}

function proofOfWorkVerdict(check: MergedMiningProofCheck): RuleVerdict {
  return check.ok ? passed : refused(check.rule, check.reason);
}

/**
 * Blocks whose body was checked against their header (uncles hash, transactions root) before the
 * importer saw them: the long sync checks each body as it arrives, before recovering any sender,
 * then makes the block of that header and body. By block object, as the proof verdicts are by
 * header: a block made anew (gossip, RPC, a file), even of the same header, is checked in full.
 */
const bodiesMatchingHeaders = new WeakSet<Block>();

/**
 * Takes `block`'s body as checked against its header by the caller (its uncles hash and its
 * transactions root, as checkUncles and checkTransactionsRoot compute them): the importer does
 * not compute them again. Answers the block.
 */
export function recordBodyMatchesHeader(block: Block): Block {
  bodiesMatchingHeaders.add(block);
  return block;
}

/**
 * What makes an executed block differ from its header (rskj: BlockExecutor.validate): a transaction
 * that could not run, then the state root, receipts root, bloom, gas used and fees paid.
 */
function executionRefusal(block: Block, executed: Block, skipped: readonly { hash: Uint8Array; reason: string }[]): { rule: string; reason: string } | undefined {
  const first = skipped[0];
  if (first !== undefined) return { rule: "transactionExecution", reason: `transaction ${bytesToHex(first.hash)} cannot run on the parent's state: ${first.reason}` };
  const claimed = block.header.fields;
  // The builder stops at a transaction that does not fit in the gas left, without naming it.
  if (executed.transactions.length < block.transactions.length) {
    const left = block.transactions[executed.transactions.length]!;
    return { rule: "transactionExecution", reason: `transaction ${bytesToHex(left.hash)} does not fit in the block's gas limit ${claimed.gasLimit}` };
  }
  const differing = firstDifferingResult(executed.header, block.header);
  if (differing === undefined) return undefined;
  const { field, left: computed, right: header } = differing;
  return { rule: field, reason: `the header's ${field} ${show(header)} is not what its transactions give, ${show(computed)}` };
}

/** The header fields execution decides, in the order the reference compares them. */
const executionResultFields = ["stateRoot", "receiptsRoot", "logsBloom", "gasUsed", "paidFees"] as const;

/** The first of the execution's results where two headers differ, with both values. */
function firstDifferingResult(left: BlockHeader, right: BlockHeader): { field: (typeof executionResultFields)[number]; left: Uint8Array | bigint; right: Uint8Array | bigint } | undefined {
  for (const field of executionResultFields) {
    const [leftValue, rightValue] = [left.fields[field], right.fields[field]];
    const same = typeof leftValue === "bigint" ? leftValue === rightValue : Buffer.compare(leftValue, rightValue as Uint8Array) === 0;
    if (!same) return { field, left: leftValue, right: rightValue };
  }
  return undefined;
}

/** What the block builder needs to run `block` on `parent`: the header's own fields. */
function templateOf(block: Block, parent: Block): BlockTemplate {
  const { coinbase, timestamp, gasLimit, minimumGasPrice, difficulty, extraData } = block.header.fields;
  return { parent, coinbase, timestamp, gasLimit, minimumGasPrice, difficulty, extraData };
}

function show(value: Uint8Array | bigint): string {
  return typeof value === "bigint" ? value.toString() : bytesToHex(value);
}
