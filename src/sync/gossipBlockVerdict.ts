// What the node does with a block gossiped to it, before the importer sees it (network brief 6.5;
// rskj: BlockRelayValidatorImpl, NodeBlockProcessor, BlockSyncService): accept it (gossip relays
// it and the importer takes it), ignore it (no relay, no penalty), or reject it (no relay, the
// sender is scored). Only what can be checked without executing: the importer judges the rest, and
// a later INVALID_BLOCK scores the sender then. In order:
//   1. too far ahead (more than 192 × 20 above the best), too old (more than 7 below: it can no
//      longer even be an uncle), already stored or held           -> ignore
//   2. the rules a header passes alone: proof of work, extra data, not too far in the future
//                                                                -> reject
//   3. parent not stored                                           -> orphan (held, parent asked for)
//   4. the rules against the parent (number, difficulty, gas limit, minimum gas price, time)
//                                                                -> reject
//   5.                                                            -> accept
import type { Block } from "../chain/block.js";
import type { BlockHeader } from "../chain/header.js";
import { checkProofOfWork } from "../consensus/blockImporter.js";
import { checkExtraData, checkFutureTimestamp } from "../consensus/rules/header.js";
import { checkHeaderAgainstParent, type RuleContext } from "../consensus/rules/parent.js";
import { firstRefusal } from "../consensus/verdict.js";

export interface GossipBlockContext {
  readonly rules: RuleContext;
  readonly bestNumber: bigint;
  /** Stored (any branch) or held in the orphan pool. */
  isKnown(hash: Uint8Array): boolean;
  /** The stored parent's header, or undefined. */
  parentOf(block: Block): Promise<BlockHeader | undefined>;
}

export type GossipBlockVerdict =
  | { readonly kind: "accept" }
  | { readonly kind: "orphan" }
  | { readonly kind: "ignore"; readonly reason: string }
  | { readonly kind: "reject"; readonly rule: string; readonly reason: string };

/** Blocks further ahead than this are for a long sync (rskj NodeBlockProcessor.isAdvancedBlock: 192 × 20). */
export const gossipMaxAheadOfBest = 192n * 20n;
/** Blocks further behind than this can be neither the best nor an uncle (rskj: 7 generations). */
export const gossipMaxBehindBest = 7n;

export async function judgeGossipBlock(block: Block, context: GossipBlockContext): Promise<GossipBlockVerdict> {
  const { number } = block;
  if (number > context.bestNumber + gossipMaxAheadOfBest) return { kind: "ignore", reason: `block ${number} is more than ${gossipMaxAheadOfBest} ahead of the best ${context.bestNumber}` };
  if (number + gossipMaxBehindBest < context.bestNumber) return { kind: "ignore", reason: `block ${number} is more than ${gossipMaxBehindBest} behind the best ${context.bestNumber}` };
  if (context.isKnown(block.hash)) return { kind: "ignore", reason: "known" };
  const fields = block.header.fields;
  const own = firstRefusal<string>([() => checkProofOfWork(block.header), () => checkExtraData(fields, context.rules), () => checkFutureTimestamp(fields, context.rules)]);
  if (!own.ok) return { kind: "reject", rule: own.rule, reason: own.reason };
  const parent = await context.parentOf(block);
  if (parent === undefined) return { kind: "orphan" };
  const againstParent = checkHeaderAgainstParent(fields, parent.fields, context.rules);
  if (!againstParent.ok) return { kind: "reject", rule: againstParent.rule, reason: againstParent.reason };
  return { kind: "accept" };
}
