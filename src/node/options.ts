// Everything a node is built from; the CLI maps flags onto it, tests build it directly.
import { defaultNetworkId, regtestMinerAccount } from "../chain/networks.js";
import type { LogLevel } from "../common/logger.js";
import type { CallLimits } from "../execution/callService.js";
import { defaultLogOptions, type LogOptions } from "../logs/index.js";
import type { MinerKind, MiningMode } from "../mining/miner.js";
import type { P2pOptions } from "../p2p/index.js";
import type { SyncOptions } from "../sync/syncManager.js";
import { defaultRpcOptions, type RpcOptions } from "../rpc/options.js";
import { defaultTraceServiceOptions } from "../tracing/index.js";

export interface StorageOptions {
  /** Where the chain is kept; undefined means ./.chain-node/<network name>. */
  dataDir: string | undefined;
  /** Keep the chain in memory only (throwaway chains, tests). */
  inMemory: boolean;
}

export interface ChainOptions {
  /** A JSON file with a custom genesis allocation (see chain/genesis.ts); undefined: the profile's. */
  genesisFile: string | undefined;
  mining: MiningMode;
  /** "builtin": the node proves its own blocks (the mode above); "external": blocks come only from merged miners' submissions. */
  miner: MinerKind;
  /** The merged-mining server's settings (mining/mergedMiningServer.ts). */
  mergedMining: MergedMiningOptions;
  /** Address the block fees are paid to. */
  coinbase: Uint8Array;
  /** extraData of the blocks this node mines (at most 32 bytes). */
  extraData: Uint8Array;
  /** Limits of eth_call and eth_estimateGas. */
  calls: CallLimits;
  /** Whether calls on stored blocks of a chain on disk run on a second thread (node/callWorkers.ts). */
  callWorker: boolean;
  /**
   * Where plain calls on stored blocks are first tried with the synchronous interpreter
   * (execution/synchronousCalls.ts): all on the thread that answers requests ("main"); on the
   * call worker, with those that come alone on the main thread ("worker"; all on the main thread
   * without a worker); or nowhere ("off"). See docs/measurements.md (issue 39) for the choice.
   */
  synchronousCalls: "main" | "worker" | "off";
  /**
   * Whether the senders of transactions that arrive together are recovered on a second thread
   * (node/recoveryOffload.ts), on a machine with more than one core.
   */
  recoveryWorker: boolean;
  /** Whether each imported block is executed a second time with the untuned engine, and refused where the two disagree. */
  verifyImportsWithReferenceEngine: boolean;
  /** Limits of log queries and the lifetime of filters. */
  logs: LogOptions;
  /** Most trace requests (debug_trace*, trace_*) replaying at once; the others wait within --call-timeout. */
  tracesAtOnce: number;
  /**
   * scrypt cost of the key files personal_newAccount and personal_importRawKey write: "light"
   * (n = 2^14, about 0.1 s per unlock here) or geth's "standard" (n = 2^18, about 1.9 s). Files of
   * any cost are read.
   */
  keyStoreKdf: KeyStoreKdf;
  /**
   * Whether clients may send EIP-2930 and EIP-1559 transactions (--typed-transactions); blocks then
   * show baseFeePerGas. Off: legacy only, as the reference network.
   */
  typedTransactions: boolean;
}

export type KeyStoreKdf = "light" | "standard";

export interface MergedMiningOptions {
  /** A new template when a transaction becomes pending, not only on a new best block and every 60 s. */
  updateWorkOnNewTransaction: boolean;
  /** Milliseconds a submission must wait after the previous one; 0: no limit. */
  submissionRateLimitMs: number;
}

export interface NodeOptions {
  /** Network id of the spec: 30, 31, 32 or 33. */
  networkId: number;
  rpc: RpcOptions;
  storage: StorageOptions;
  chain: ChainOptions;
  /** The peer-to-peer network; undefined: the node runs alone and never loads libp2p. */
  p2p: P2pOptions | undefined;
  /** Tuning of the sync with peers (tests shorten its time limits); undefined: its defaults. */
  sync?: Partial<SyncOptions>;
  logLevel: LogLevel;
  /** The operators' Prometheus endpoint (--metrics-port); undefined: off. */
  metrics: { host: string; port: number } | undefined;
}

/** The reference's regtest miner address (facts 12), whose key the node holds on regtest. */
export const defaultCoinbase = regtestMinerAccount.address;

export const defaultChainOptions: ChainOptions = {
  genesisFile: undefined,
  mining: { kind: "auto" },
  miner: "builtin",
  mergedMining: { updateWorkOnNewTransaction: false, submissionRateLimitMs: 0 },
  coinbase: new Uint8Array(Buffer.from(defaultCoinbase, "hex")),
  extraData: new TextEncoder().encode("chain-node"),
  calls: { gasCap: 50_000_000n, timeLimitMs: 5_000 },
  callWorker: true,
  synchronousCalls: "worker",
  recoveryWorker: true,
  verifyImportsWithReferenceEngine: false,
  logs: defaultLogOptions,
  tracesAtOnce: defaultTraceServiceOptions.maxConcurrent,
  keyStoreKdf: "light",
  typedTransactions: false,
};

export const defaultNodeOptions: NodeOptions = {
  networkId: defaultNetworkId,
  rpc: defaultRpcOptions,
  storage: { dataDir: undefined, inMemory: false },
  chain: defaultChainOptions,
  p2p: undefined,
  logLevel: "info",
  metrics: undefined,
};
