// What a consensus rule answers: the block passes, or it is refused by a named rule with a reason.
// Rules answer values instead of throwing: an invalid block from a peer is an expected outcome,
// and the importer turns the refusal into INVALID_BLOCK and a peer's score.

export interface RuleRefusal<Rule extends string = string> {
  readonly ok: false;
  /** The rule that refused, as its module names it (e.g. "parentGasLimit"). */
  readonly rule: Rule;
  readonly reason: string;
}

export type RuleVerdict<Rule extends string = string> = { readonly ok: true } | RuleRefusal<Rule>;

export const passed: { readonly ok: true } = Object.freeze({ ok: true });

export function refused<Rule extends string>(rule: Rule, reason: string): RuleRefusal<Rule> {
  return { ok: false, rule, reason };
}

/** Runs `checks` in order and answers the first refusal, or passed; later checks do not run. */
export function firstRefusal<Rule extends string>(checks: Iterable<() => RuleVerdict<Rule>>): RuleVerdict<Rule> {
  for (const check of checks) {
    const verdict = check();
    if (!verdict.ok) return verdict;
  }
  return passed;
}
