// eth_ logs and filters: eth_getLogs, and filters installed and polled (spec 2.10, 3.1). Parameters
// become LogCriteria and block bounds here; matching, queries and filters live in logs/.
import { rpcMethodTable } from "../../../generated/methodTable.js";
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { BlockNumberOrTag, FilterAddress, FilterOptions, Topics } from "../../../generated/types.js";
import type { Chain } from "../../chain/chain.js";
import { bytesToHex, hexToBytes, toQuantity } from "../../common/hex.js";
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

/** The dispatcher's check of eth_getLogs' filter, run by the warm-up queries too (its code is compiled at its first call). */
const isFilterParam = rpcMethodTable.get("eth_getLogs")!.paramValidators[0]!;

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

/**
 * Blocks with logs queried ahead of clients (see createEthFilterHandlers), and the blocks each of
 * those queries covers (the block and those below it): some 6,000 blocks in all, about what V8
 * needs to optimise the query's loop (a query of 1,000 blocks ran it as baseline code throughout,
 * its optimised code arriving after the answer). One in `logQueryWarmUpsPerRequest`, and any for
 * another address or topic than the last, is asked as a client asks (parameters checked, the
 * handler); the others run the query and the encoding only, with the last one's matcher: the
 * request's own steps (the validator, the bloom probes' hashes) cost more than the loop, and need
 * compiling only.
 */
const logQueryWarmUps = 200;
const logQueryWarmUpBlocks = 32;
const logQueryWarmUpsPerRequest = 16;

/** What a warm-up query asks: the block's first log (its address and first topic) over the blocks up to it. */
interface WarmUpQuery {
  readonly filter: FilterOptions;
  readonly from: bigint;
}

function warmUpQuery(block: BlockLogs, limits: LogQueryLimits): WarmUpQuery | undefined {
  const log = block.transactions[0]?.logs[0];
  if (log === undefined) return undefined;
  const span = BigInt(Math.max(1, Math.min(logQueryWarmUpBlocks, limits.blockRangeLimit)));
  const from = block.number >= span ? block.number - span + 1n : 0n;
  const filter = {
    fromBlock: toQuantity(from),
    toBlock: toQuantity(block.number),
    address: bytesToHex(log.address),
    ...(log.topics.length === 0 ? {} : { topics: [bytesToHex(log.topics[0]!)] }),
  } as FilterOptions;
  return { filter, from };
}

/** What a warm-up query's handler is told about its call (nothing it reads). */
const warmUpContext = { method: "eth_getLogs" } as RpcCallContext;

export function createEthFilterHandlers(deps: EthFilterDependencies): Pick<NamespaceHandlers<"eth", RpcCallContext>, EthFilterMethod> {
  const { chain, filters, logIndex, logLimits, responseLimitBytes } = deps;
  // The wire text of new blocks' logs is made in the turns after they are indexed (format.ts); the
  // first blocks with logs are also queried, for their first log over the blocks up to them, as a
  // client asks: parameters checked by the method's validator, then this module's handler and the
  // answer's encoding. So the code of the whole path is compiled, and the loop over blocks
  // optimised, before a client's first query (cold, compiling its code and running it unoptimised
  // took half of that query's main-thread time).
  let warmUpsLeft = logQueryWarmUps;
  logIndex.setPreparation((block) => {
    prepareLogTexts(block);
    if (warmUpsLeft > 0) {
      warmUpsLeft--;
      warmUpLogQuery(block);
    }
  });

  /** The matcher of the last warm-up asked as a client asks, and its filter's address and topics. */
  let warmUpMatcher: { matcher: LogMatcher; address: FilterOptions["address"]; topics: string } | undefined;

  /** Queries the block and those below it for the block's first log; the answer goes nowhere. */
  function warmUpLogQuery(block: BlockLogs): void {
    const query = warmUpQuery(block, logLimits);
    if (query === undefined) return;
    const { filter, from } = query;
    const topics = JSON.stringify(filter.topics ?? []);
    const reused = warmUpMatcher !== undefined && warmUpMatcher.address === filter.address && warmUpMatcher.topics === topics;
    if (reused && warmUpsLeft % logQueryWarmUpsPerRequest !== 0) {
      void queryLogRange(logIndex, warmUpMatcher!.matcher, from, block.number, logLimits).then(encodeLocatedLogs, () => undefined);
      return;
    }
    if (!isFilterParam(filter)) return;
    warmUpMatcher = { matcher: matcherOf(filter), address: filter.address, topics };
    void Promise.resolve(handlers.eth_getLogs([filter], warmUpContext)).catch(() => undefined);
  }

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

  const handlers: Pick<NamespaceHandlers<"eth", RpcCallContext>, EthFilterMethod> = {
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
  return handlers;
}
