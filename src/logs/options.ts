// Limits of log queries and the lifetime of filters.
import type { LogQueryLimits } from "./logQuery.js";

export interface LogOptions extends LogQueryLimits {
  /** A filter not polled with eth_getFilterChanges for this long is removed. */
  readonly filterTimeoutMs: number;
}

/** The reference node's defaults (facts 11.1, 11.3): 5000 blocks, 20000 logs, 5 minutes. */
export const defaultLogOptions: LogOptions = {
  blockRangeLimit: 5000,
  resultLimit: 20_000,
  filterTimeoutMs: 5 * 60 * 1000,
};
