// Rules a header passes on its own, without its parent, execution or the proof of work
// (rskj: co/rsk/validators/BlockTimeStampValidationRule.java, GasLimitRule.java, ExtraDataRule.java,
// ValidGasUsedRule.java). The link between the timestamp and the parent-chain header's time
// (RSKIP179) needs that header decoded: it belongs with the proof of work.
import { firstRefusal, passed, refused, type RuleVerdict } from "../verdict.js";
import type { RuleContext, RuleHeader } from "./parent.js";

export type HeaderRule = "futureTimestamp" | "minimumGasLimit" | "extraData" | "gasUsed";

/** Not further ahead of the local clock than the network allows; off where that limit is 0 (regtest). */
export function checkFutureTimestamp(header: RuleHeader, context: RuleContext): RuleVerdict<HeaderRule> {
  const limit = context.constants.newBlockMaxSecondsInTheFuture;
  if (limit === 0n || header.timestamp - context.now <= limit) return passed;
  return refused("futureTimestamp", `timestamp ${header.timestamp} is more than ${limit} s after the local clock's ${context.now}`);
}

/** At least the network's minimum gas limit: a chain must stay able to hold transactions. */
export function checkMinimumGasLimit(header: RuleHeader, context: RuleContext): RuleVerdict<HeaderRule> {
  const minimum = context.constants.minimumGasLimit;
  return header.gasLimit < minimum ? refused("minimumGasLimit", `gas limit ${header.gasLimit} is below the minimum ${minimum}`) : passed;
}

export function checkExtraData(header: RuleHeader, context: RuleContext): RuleVerdict<HeaderRule> {
  const maximum = context.constants.maximumExtraDataSize;
  return header.extraData.length > maximum ? refused("extraData", `extra data of ${header.extraData.length} bytes, at most ${maximum} allowed`) : passed;
}

export function checkGasUsed(header: RuleHeader): RuleVerdict<HeaderRule> {
  return header.gasUsed > header.gasLimit ? refused("gasUsed", `gas used ${header.gasUsed} is above the gas limit ${header.gasLimit}`) : passed;
}

/**
 * An uncle's own header rules apart from the proof of work (the reference's uncle header set:
 * proof of work, fork-detection data, timestamp, gas used); the importer adds the proof in front.
 */
export function checkUncleOwnHeader(uncle: RuleHeader, context: RuleContext): RuleVerdict<HeaderRule> {
  return firstRefusal<HeaderRule>([() => checkFutureTimestamp(uncle, context), () => checkGasUsed(uncle)]);
}
