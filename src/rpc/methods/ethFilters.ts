// eth_ logs and filters: eth_getLogs, and filters installed and polled (spec 2.10, 3.1). Parameters
// become LogCriteria and block bounds here; matching, queries and filters live in logs/.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { BlockNumberOrTag, FilterAddress, FilterOptions, Topics } from "../../../generated/types.js";
import type { Chain } from "../../chain/chain.js";
import { bytesToHex, hexToBytes } from "../../common/hex.js";
import {
  blockLogsOf,
  LogMatcher,
  queryBlockLogs,
  queryLogRange,
  resolveBlockRange,
  TooManyFiltersError,
  type BlockBound,
  type BlockLogIndex,
  type BlockLogs,
  type FilterManager,
  type LocatedLog,
  type LogQueryLimits,
} from "../../logs/index.js";
import { EncodedJson, type RpcCallContext } from "../dispatch.js";
import { blockHashNotFoundError, filterNotFoundError, logQueryErrorToRpc, tooManyFiltersError, withErrorsMapped } from "../errors.js";
import { encodeLocatedLogs, formatLocatedLogs, prepareLogTexts } from "../format.js";

export interface EthFilterDependencies {
  chain: Chain;
  filters: FilterManager;
  logIndex: BlockLogIndex;
  logLimits: LogQueryLimits;
  /** The largest answer the dispatcher sends (--rpc-response-limit). */
  responseLimitBytes: number;
}

/** Room left in an answer for its envelope ({"jsonrpc":"2.0","id":…,"result":…}) besides the result. */
const answerEnvelopeBytes = 1024;

/**
 * The result of a poll as JSON text, with as many of `items` (in order) as fit in `budgetBytes`;
 * answers the text and how many it holds. Each item is encoded once, and the text is not encoded
 * again by the dispatcher.
 */
function encodeFitting(items: readonly unknown[], budgetBytes: number): { json: EncodedJson; count: number } {
  const parts: string[] = [];
  let bytes = 2;
  for (const item of items) {
    const part = JSON.stringify(item);
    // Byte length: logs and hashes are ASCII, so characters are bytes. The first item always goes:
    // one larger than the whole limit could never be answered (the dispatcher refuses it).
    if (parts.length > 0 && bytes + part.length + 1 > budgetBytes) break;
    parts.push(part);
    bytes += part.length + 1;
  }
  return { json: new EncodedJson(`[${parts.join(",")}]`), count: parts.length };
}

type EthFilterMethod =
  | "eth_newFilter"
  | "eth_newBlockFilter"
  | "eth_newPendingTransactionFilter"
  | "eth_getFilterChanges"
  | "eth_getFilterLogs"
  | "eth_uninstallFilter"
  | "eth_getLogs";

/** "latest" and "pending" follow the head (the pending block has no logs yet); "earliest" is block 0. */
function blockBound(parameter: BlockNumberOrTag | undefined): BlockBound {
  switch (parameter) {
    case undefined:
    case "latest":
    case "pending":
      return { kind: "head" };
    case "earliest":
      return { kind: "number", number: 0n };
    default:
      return { kind: "number", number: BigInt(parameter) };
  }
}

function addressList(address: FilterAddress | undefined): Uint8Array[] {
  if (address === undefined) return [];
  return (typeof address === "string" ? [address] : address).map(hexToBytes);
}

/** A position holding null, an empty list or a list with null in it allows any topic. */
function topicPositions(topics: Topics | undefined): (Uint8Array[] | null)[] {
  return (topics ?? []).map((entry) => {
    if (entry === null) return null;
    if (typeof entry === "string") return [hexToBytes(entry)];
    return entry.length === 0 || entry.includes(null) ? null : (entry as string[]).map(hexToBytes);
  });
}

export function matcherOf(options: Pick<FilterOptions, "address" | "topics">): LogMatcher {
  return new LogMatcher({ addresses: addressList(options.address), topics: topicPositions(options.topics) });
}

/** Installs a filter; past the limit of installed filters, a clear error. */
function installing(install: () => string): string {
  try {
    return install();
  } catch (error) {
    if (error instanceof TooManyFiltersError) throw tooManyFiltersError(error.message);
    throw error;
  }
}

/** Blocks queried ahead of clients (see createEthFilterHandlers): enough calls for V8 to compile the query's functions. */
const logQueryWarmUps = 200;

/** Queries the block (held by the index) for its first log and encodes the answer, which goes nowhere. */
function warmUpLogQuery(logIndex: BlockLogIndex, block: BlockLogs, limits: LogQueryLimits): void {
  const log = block.transactions[0]?.logs[0];
  if (log === undefined) return;
  const matcher = new LogMatcher({ addresses: [log.address], topics: log.topics.length === 0 ? [] : [[log.topics[0]!]] });
  void queryLogRange(logIndex, matcher, block.number, block.number, limits).then(encodeLocatedLogs, () => undefined);
}

export function createEthFilterHandlers(deps: EthFilterDependencies): Pick<NamespaceHandlers<"eth", RpcCallContext>, EthFilterMethod> {
  const { chain, filters, logIndex, logLimits, responseLimitBytes } = deps;
  // The wire text of new blocks' logs is made in the turns after they are indexed (format.ts); the
  // first blocks with logs are also queried once, for their first log, so that the query's code is
  // compiled before a client's first query (cold, it took most of that query's time).
  let warmUpsLeft = logQueryWarmUps;
  logIndex.setPreparation((block) => {
    prepareLogTexts(block);
    if (warmUpsLeft > 0) {
      warmUpsLeft--;
      warmUpLogQuery(logIndex, block, logLimits);
    }
  });

  /** The logs' JSON text, spliced into the answer as is (the declared result is the object form). */
  function encoded(logs: readonly LocatedLog[]): ReturnType<typeof formatLocatedLogs> {
    const json = encodeLocatedLogs(logs);
    return new EncodedJson(typeof json === "string" ? json : [json]) as unknown as ReturnType<typeof formatLocatedLogs>;
  }

  /** Runs a query over a range judged at the current head; domain errors become their JSON-RPC errors. */
  function logsInRange(matcher: LogMatcher, from: BlockBound, to: BlockBound): Promise<LocatedLog[]> {
    return withErrorsMapped(async () => {
      const range = resolveBlockRange(from, to, chain.head.number);
      return range === undefined ? [] : queryLogRange(logIndex, matcher, range.from, range.to, logLimits);
    }, logQueryErrorToRpc);
  }

  return {
    eth_getLogs: async ([options]) => {
      const blockHash = options.blockhash ?? options.blockHash;
      const matcher = matcherOf(options);
      if (blockHash === undefined) return encoded(await logsInRange(matcher, blockBound(options.fromBlock), blockBound(options.toBlock)));
      const block = await chain.getBlockByHash(hexToBytes(blockHash));
      const receipts = block === undefined ? undefined : await chain.getReceipts(block.hash);
      if (block === undefined || receipts === undefined) throw blockHashNotFoundError(blockHash);
      const logs = await withErrorsMapped(async () => queryBlockLogs(blockLogsOf(block, receipts), matcher, logLimits), logQueryErrorToRpc);
      return encoded(logs);
    },

    eth_newFilter: ([options]) => {
      const from = blockBound(options.fromBlock);
      const to = blockBound(options.toBlock);
      // Refuse now what every later poll would refuse (two numbers in the wrong order).
      try {
        resolveBlockRange(from, to, chain.head.number);
      } catch (error) {
        throw logQueryErrorToRpc(error);
      }
      return installing(() => filters.installLogFilter({ matcher: matcherOf(options), from, to }));
    },
    eth_newBlockFilter: () => installing(() => filters.installBlockFilter()),
    eth_newPendingTransactionFilter: () => installing(() => filters.installPendingTransactionFilter()),

    eth_getFilterChanges: ([filterId]) => {
      const changes = filters.takeChanges(filterId);
      if (changes === undefined) throw filterNotFoundError();
      const items = changes.kind === "logs" ? formatLocatedLogs(changes.logs) : changes.hashes.map(bytesToHex);
      // The changes have left the filter: an answer over the response limit would lose them. So
      // the answer takes what fits, and the rest stays for the next poll.
      const { json, count } = encodeFitting(items, responseLimitBytes - answerEnvelopeBytes);
      if (count < items.length) filters.returnUnsent(filterId, changes, count);
      return json as unknown as typeof items;
    },
    eth_getFilterLogs: async ([filterId]) => {
      const query = filters.logFilterQuery(filterId);
      if (query === undefined) throw filterNotFoundError();
      return encoded(await logsInRange(query.matcher, query.from, query.to));
    },
    eth_uninstallFilter: ([filterId]) => filters.uninstall(filterId),
  };
}
