// logs: which logs match a filter (addresses, topics, blooms), log queries over block ranges with
// their limits, and installed filters fed by the chain's head events and the pool. Owns no storage
// and no JSON-RPC shapes: it reads the chain through Chain and answers domain objects and errors.
export { bloomMayContain, bloomProbe, LogMatcher, type BloomProbe, type LogCriteria } from "./logCriteria.js";
export {
  collectBlockLogs,
  InvalidBlockRangeError,
  isWithinBounds,
  LogBlockRangeExceededError,
  LogResultLimitExceededError,
  queryBlockLogs,
  queryLogRange,
  resolveBlockRange,
  type BlockBound,
  type LocatedLog,
  type LogQueryLimits,
} from "./logQuery.js";
export { blockLogsOf, compactBlockLogs, type BlockLogs, type TransactionLogs } from "./blockLogs.js";
export { BlockLogIndex, defaultBlockLogIndexOptions, heldWithoutLogs, type BlockLogIndexOptions } from "./blockLogIndex.js";
export { FilterManager, maxChangesHeld, maxChangesPerFilter, maxInstalledFilters, TooManyFiltersError, type FilterChanges, type FilterManagerOptions, type LogFilterQuery } from "./filterManager.js";
export { defaultLogOptions, type LogOptions } from "./options.js";
