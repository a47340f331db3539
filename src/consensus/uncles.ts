// The uncle rules of a block (rskj: co/rsk/validators/BlockUnclesValidationRule.java,
// BlockUnclesHashValidationRule.java), in the reference's order. An uncle is a block that lost a
// race within the last few generations: including it rewards its miner and adds its difficulty to
// the chain's weight, so each may count once, must really be a sibling of this chain (its parent
// an ancestor), and may not be the chain itself.
import { unclesHashOf, type BlockHeader } from "../chain/header.js";
import { bytesToHex, bytesToUnprefixedHex } from "../common/hex.js";
import type { ConsensusConstants } from "./constants.js";
import { oldestFamilyNumber, type FamilyView } from "./familyView.js";
import { firstRefusal, passed, refused, type RuleVerdict } from "./verdict.js";

export type UncleRule =
  | "unclesHash"
  | "uncleListLimit"
  | "uncleHeader"
  | "uncleNotOlderThanBlock"
  | "uncleTooOld"
  | "duplicateUncle"
  | "uncleIsAncestor"
  | "uncleAlreadyUsed"
  | "uncleParentNotAncestor"
  | "uncleAgainstParent";

/** The header rules an uncle must pass; the importer composes them (the proof of work is another module's). */
export interface UncleHeaderChecks {
  /** Its own header rules: proof of work, timestamp against the clock, gas used within the gas limit. */
  ownHeader(uncle: BlockHeader): RuleVerdict;
  /** The rules against its own parent (rules/parent.ts checkHeaderAgainstParent). */
  againstParent(uncle: BlockHeader, parent: BlockHeader): RuleVerdict;
}

export type UncleLimits = Pick<ConsensusConstants, "uncleListLimit" | "uncleGenerationLimit">;

const hashKey = (header: BlockHeader) => bytesToUnprefixedHex(header.hash);

/**
 * The uncle rules in the reference's order. With `unclesHashChecked` (the body was checked against
 * this header already), the uncles hash passes without being computed again.
 */
export function checkUncles(
  block: { readonly header: BlockHeader; readonly uncles: readonly BlockHeader[] },
  family: FamilyView,
  checks: UncleHeaderChecks,
  limits: UncleLimits,
  unclesHashChecked = false,
): RuleVerdict<UncleRule> {
  if (!unclesHashChecked && Buffer.compare(unclesHashOf(block.uncles), block.header.fields.unclesHash) !== 0) {
    return refused("unclesHash", "the uncles do not match the header's uncles hash");
  }
  if (block.uncles.length === 0) return passed;
  if (block.uncles.length > limits.uncleListLimit) {
    return refused("uncleListLimit", `${block.uncles.length} uncles, at most ${limits.uncleListLimit} allowed`);
  }
  const blockNumber = block.header.number;
  // The view may hold more than the window: only these generations count.
  const window = family.ancestors.filter((ancestor) => ancestor.header.number >= oldestFamilyNumber(blockNumber, limits.uncleGenerationLimit));
  const ancestors = new Map(window.map((ancestor) => [hashKey(ancestor.header), ancestor.header]));
  const used = new Set(window.flatMap((ancestor) => ancestor.uncles.map(hashKey)));
  const seen = new Set<string>();

  for (const uncle of block.uncles) {
    const key = hashKey(uncle);
    const named = (reason: string) => `uncle ${bytesToHex(uncle.hash)} ${reason}`;
    const parent = ancestors.get(bytesToUnprefixedHex(uncle.fields.parentHash));
    const verdict = firstRefusal<UncleRule>([
      () => wrapped("uncleHeader", named("fails its header rules"), checks.ownHeader(uncle)),
      () => (uncle.number >= blockNumber ? refused("uncleNotOlderThanBlock", named(`is number ${uncle.number}, not below the block's ${blockNumber}`)) : passed),
      // Its parent must be at most `uncleGenerationLimit` blocks below the block.
      () =>
        uncle.number - 1n < blockNumber - BigInt(limits.uncleGenerationLimit)
          ? refused("uncleTooOld", named(`is number ${uncle.number}: more than ${limits.uncleGenerationLimit} generations below the block's ${blockNumber}`))
          : passed,
      () => (seen.has(key) ? refused("duplicateUncle", named("is included twice")) : passed),
      () => (ancestors.has(key) ? refused("uncleIsAncestor", named("is an ancestor of the block")) : passed),
      () => (used.has(key) ? refused("uncleAlreadyUsed", named(`is already an uncle of an ancestor within ${limits.uncleGenerationLimit} generations`)) : passed),
      () => (parent === undefined ? refused("uncleParentNotAncestor", named("has a parent that is not an ancestor of the block")) : passed),
      () => wrapped("uncleAgainstParent", named("fails the rules against its parent"), checks.againstParent(uncle, parent!)),
    ]);
    if (!verdict.ok) return verdict;
    seen.add(key);
  }
  return passed;
}

/** An uncle's header refusal, named as an uncle rule, with the inner rule and reason kept in the text. */
function wrapped(rule: UncleRule, context: string, verdict: RuleVerdict): RuleVerdict<UncleRule> {
  return verdict.ok ? passed : refused(rule, `${context}: ${verdict.rule}: ${verdict.reason}`);
}
