// Opens the chain and the services around it (state, pool, wallet, miner) for a network profile.
import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { Common } from "@ethereumjs/common";
import { DirectoryKeyStorage, KeyStoreAccessError, lightScrypt, MemoryKeyStorage, standardScrypt, type KeyStorage } from "../accounts/keystore.js";
import { maxPassphraseFailures, passphraseWindowMs, Wallet, type WalletOptions } from "../accounts/wallet.js";
import { Chain } from "../chain/chain.js";
import { ChainWriteQueue } from "../chain/writeQueue.js";
import { GenesisFileError, parseGenesisDocument, type GenesisSpec } from "../chain/genesis.js";
import type { NetworkProfile } from "../chain/networks.js";
import { bytesToHex, bytesToUnprefixedHex } from "../common/hex.js";
import type { Logger } from "../common/logger.js";
import { installFastRlp } from "../common/rlp.js";
import type { SenderRecovery, SignatureBatchRecovery } from "../common/signatures.js";
import { BlockBuilder } from "../execution/blockBuilder.js";
import { CallService } from "../execution/callService.js";
import { createExecutionRules } from "../execution/rules.js";
import { BlockLogIndex, FilterManager, type LogQueryLimits } from "../logs/index.js";
import { ImpersonatedAccounts } from "../accounts/impersonation.js";
import { BlockImporter } from "../consensus/blockImporter.js";
import { consensusConstantsFor } from "../consensus/constants.js";
import type { MergedMiningProofBatchCheck } from "../consensus/mergedMiningProof.js";
import { MinerClock } from "../mining/clock.js";
import { DevChain } from "../mining/devChain.js";
import { HashRates, defaultHashRateOptions } from "../mining/hashRates.js";
import { MergedMiningServer, defaultMergedMiningServerOptions } from "../mining/mergedMiningServer.js";
import { Miner } from "../mining/miner.js";
import { PendingState } from "../mining/pendingState.js";
import { StateDatabase } from "../state/stateDatabase.js";
import { defaultTraceServiceOptions, TraceService } from "../tracing/index.js";
import { createMemoryStore, DataDirectoryError, type KeyValueStore } from "../storage/keyValueStore.js";
import { metadataNames, storeKeys } from "../storage/keys.js";
import { LevelStore, openLevelStore } from "../storage/levelStore.js";
import { PoolChainFollower } from "../txpool/chainFollower.js";
import { PoolJournal } from "../txpool/poolJournal.js";
import { createTransactionIntake, type TransactionIntake } from "../txpool/transactionIntake.js";
import { TransactionPool } from "../txpool/transactionPool.js";
import { CallWorkers } from "./callWorkers.js";
import { BatchCheckThread } from "./batchChecks.js";
import { RecoveryOffload } from "./recoveryOffload.js";
import type { ChainOptions, StorageOptions } from "./options.js";

export interface ChainServices {
  readonly common: Common;
  readonly chain: Chain;
  readonly state: StateDatabase;
  readonly pool: TransactionPool;
  /** The one way in to the pool: decoding, sender recovery, admission (txpool/transactionIntake.ts). */
  readonly intake: TransactionIntake;
  readonly wallet: Wallet;
  readonly miner: Miner;
  readonly devChain: DevChain;
  /** The one path for blocks this node did not build (consensus/blockImporter.ts). */
  readonly importer: BlockImporter;
  /** Block templates for merged miners and their submissions (mnr_, eth_getWork). */
  readonly mergedMining: MergedMiningServer;
  readonly hashRates: HashRates;
  /** Addresses eth_sendTransaction sends from without their key (the dev modules anvil_, hardhat_). */
  readonly impersonated: ImpersonatedAccounts;
  readonly pendingState: PendingState;
  readonly calls: CallService;
  readonly filters: FilterManager;
  readonly logIndex: BlockLogIndex;
  readonly logLimits: LogQueryLimits;
  /** Replays stored transactions for debug_trace* and trace_*. */
  readonly tracer: TraceService;
  /** The thread calls on stored blocks run on; undefined for a chain in memory. */
  readonly callWorkers: CallWorkers | undefined;
  /**
   * Received transactions' signers, recovered on a second thread for sends arriving together or
   * in one batch (node/recoveryOffload.ts); undefined when that is off or the machine has one core.
   */
  readonly senderRecovery: SenderRecovery | undefined;
  /**
   * A long sync's checks that need no state, many at once (a peer's bodies' senders, a chunk's
   * proofs of work), on a thread started with the first batch or by prepare() (node/batchChecks.ts);
   * undefined as senderRecovery is.
   */
  readonly batchChecks: (SignatureBatchRecovery & MergedMiningProofBatchCheck & { prepare(): void }) | undefined;
  readonly location: string;
  /** Whether clients may send typed transactions (ChainOptions.typedTransactions). */
  readonly typedTransactions: boolean;
  /** The peer-to-peer node key kept in the store's metadata (a loose file would make the data dir "hold other files"). */
  readonly nodeKeyStore: NodeKeyStore;
  close(): Promise<void>;
}

export interface NodeKeyStore {
  read(): Uint8Array | undefined;
  write(key: Uint8Array): Promise<void>;
}

/** Options that cannot open a chain (data dir, genesis file); the message says which and why. */
export class ChainOpeningError extends Error {}

export async function loadGenesis(network: NetworkProfile, genesisFile: string | undefined): Promise<GenesisSpec> {
  if (genesisFile === undefined) return network.genesis;
  let document: unknown;
  try {
    document = JSON.parse(await readFile(genesisFile, "utf8"));
  } catch (error) {
    throw new ChainOpeningError(`cannot read --genesis ${genesisFile}: ${(error as Error).message}`);
  }
  try {
    return parseGenesisDocument(document, network.genesis);
  } catch (error) {
    if (error instanceof GenesisFileError) throw new ChainOpeningError(`--genesis ${genesisFile}: ${error.message}`);
    throw error;
  }
}

/** Takes back the transactions of the pool's journal; drops those the chain no longer admits. */
async function restorePool(pool: TransactionPool, journal: PoolJournal, log: Logger): Promise<void> {
  const { transactions, unreadable } = await journal.load();
  for (const { key, reason } of unreadable) log.warn({ key: bytesToHex(key), reason }, "unreadable entry of the pool's journal deleted");
  if (transactions.length === 0) return;
  const refused = await pool.restore(transactions);
  await pool.persist();
  const stale = refused.filter(({ reason }) => reason !== "transaction nonce too low").length;
  log.info({ taken: transactions.length - refused.length, mined: refused.length - stale, refused: stale }, "transactions of the last run taken back into the pool");
  for (const { transaction, reason } of refused) {
    if (reason !== "transaction nonce too low") log.warn({ hash: bytesToHex(transaction.hash), reason }, "transaction of the last run not taken back");
  }
}

/** Where a network's chain is kept when no --data-dir is given. */
export function defaultDataDirectory(network: NetworkProfile): string {
  return join(".chain-node", network.name);
}

function dataDirectory(network: NetworkProfile, storage: StorageOptions): string {
  return storage.dataDir ?? defaultDataDirectory(network);
}

async function openStore(network: NetworkProfile, storage: StorageOptions, log: Logger): Promise<KeyValueStore> {
  if (storage.inMemory) return createMemoryStore();
  try {
    return await openLevelStore(dataDirectory(network, storage), { warn: (details, message) => log.warn(details, message) });
  } catch (error) {
    if (error instanceof DataDirectoryError) throw new ChainOpeningError(error.message);
    throw error;
  }
}

/**
 * <data dir>/keystore; a node without a data directory keeps its keys in memory only. A folder
 * other users may reach is used, with a warning (the node does not change permissions it did not set).
 * Temp files of writes a kill cut short are deleted here, before the server takes calls.
 */
async function openKeyStorage(network: NetworkProfile, storage: StorageOptions, log: Logger): Promise<KeyStorage> {
  if (storage.inMemory) return new MemoryKeyStorage();
  const keys = new DirectoryKeyStorage(join(dataDirectory(network, storage), "keystore"), (file, reason) => log.warn({ file, reason }, "key file ignored"));
  const mode = await keys.looseAccess();
  if (mode !== undefined) {
    log.warn({ keyStore: keys.location, mode: `0${mode.toString(8)}` }, "other users can reach the key-store folder: make it private (chmod 700)");
  }
  // Leftovers are harmless to reads (skipped), so a folder that refuses the deletion still opens.
  try {
    const deleted = await keys.removeUnfinishedWrites();
    if (deleted.length > 0) log.info({ keyStore: keys.location, files: deleted }, "temp files of key writes a kill cut short deleted");
  } catch (error) {
    if (!(error instanceof KeyStoreAccessError)) throw error;
    log.warn({ keyStore: keys.location, reason: error.message }, "temp files of unfinished key writes not deleted");
  }
  return keys;
}

/** A block builder made by `create` when first used; a failed making is tried again next time. */
function builtOnFirstUse(create: () => Promise<BlockBuilder>): Pick<BlockBuilder, "build" | "resetTo"> {
  let made: Promise<BlockBuilder> | undefined;
  const builder = () => {
    made ??= create().catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
  return {
    build: async (template, candidates, edit) => (await builder()).build(template, candidates, edit),
    resetTo: async (stateRoot) => (await builder()).resetTo(stateRoot),
  };
}

/**
 * `walletPolicy.unlockAllowed` is false for a node bound beyond loopback without
 * --allow-insecure-unlock (node.ts decides); left out, keys are held as on loopback.
 */
export async function openChainServices(
  network: NetworkProfile,
  storage: StorageOptions,
  options: ChainOptions,
  log: Logger,
  walletPolicy: Pick<WalletOptions, "unlockAllowed"> = {},
): Promise<ChainServices> {
  installFastRlp();
  const genesis = await loadGenesis(network, options.genesisFile);
  const store = await openStore(network, storage, log);
  try {
    const common = createExecutionRules(network.chainId);
    const state = new StateDatabase(store, common);
    let chain: Chain;
    try {
      chain = await Chain.open(store, state, common, genesis);
    } catch (error) {
      if (error instanceof DataDirectoryError) throw new ChainOpeningError(error.message);
      throw error;
    }
    const canonicalHashFromTip = (blockNumber: bigint) => chain.getCanonicalHashFromTip(blockNumber);
    const createBuilder = () => BlockBuilder.create(common, state.at(chain.tip.header.fields.stateRoot), canonicalHashFromTip);
    // The miner's builder is made when it first builds, on the state it would have had at start:
    // making it loads the EVM, which the first request seldom needs (issue 39).
    const startRoot = chain.tip.header.fields.stateRoot;
    const builder = builtOnFirstUse(() => BlockBuilder.create(common, state.at(startRoot), canonicalHashFromTip));

    // The pool judges transactions against the block the next block builds on: the tip. What it
    // held at the last stop (or crash) comes back from its journal, checked against the tip again.
    const journal = new PoolJournal(store, common, options.typedTransactions);
    const pool = new TransactionPool({
      observer: journal,
      async readAccount(address) {
        const account = await state.readAccount(chain.tip.header.fields.stateRoot, address);
        return { nonce: account?.nonce ?? 0n, balance: account?.balance ?? 0n };
      },
      limits: () => ({ blockGasLimit: chain.tip.header.fields.gasLimit, minimumGasPrice: chain.tip.header.fields.minimumGasPrice }),
    });

    const poolLog = log.child({ module: "txpool" });
    await restorePool(pool, journal, poolLog);

    const walletLog = log.child({ module: "wallet" });
    const scrypt = options.keyStoreKdf === "standard" ? standardScrypt : lightScrypt;
    const wallet = new Wallet(common, {
      keys: await openKeyStorage(network, storage, walletLog),
      scrypt,
      unlockAllowed: walletPolicy.unlockAllowed,
      onPassphraseLockout: (address) => walletLog.warn({ address: `0x${address}`, failures: maxPassphraseFailures, windowMs: passphraseWindowMs }, "wrong passphrases: the account refuses passphrases until the window ends"),
    });
    const seededAccounts = [...network.developmentAccounts];
    const { minerAccount } = network;
    if (minerAccount !== undefined && bytesToUnprefixedHex(options.coinbase) === minerAccount.address) seededAccounts.push(minerAccount);
    for (const account of seededAccounts) wallet.addSeededAccount(account.seed, account.address);
    let keyStoreAccounts: number;
    try {
      keyStoreAccounts = (await wallet.listAccounts()).length - seededAccounts.length;
    } catch (error) {
      if (error instanceof KeyStoreAccessError) throw new ChainOpeningError(error.message);
      throw error;
    }
    walletLog.info({ keyStore: wallet.keyStoreLocation, accounts: keyStoreAccounts, kdf: options.keyStoreKdf }, "key store opened");

    // Blocks (and "pending" reads) take their time from one clock, which the dev methods move. A
    // head stamped ahead of the wall clock (time moved forward before a restart) is where the
    // clock continues from: else each new block would get the head's time + 1 until the wall
    // clock caught up.
    const clock = new MinerClock();
    if (chain.head.header.fields.timestamp > clock.now()) clock.continueFrom(chain.head.header.fields.timestamp);
    // Where the rules let a block share its parent's timestamp (regtest), blocks take the clock
    // even in a burst, instead of running ahead of it one second a block.
    const consensus = consensusConstantsFor(network);
    const rules = { sameTimestampAllowed: consensus.newBlockMaxSecondsInTheFuture === 0n, difficulty: consensus, uncles: consensus };
    const minerLog = log.child({ module: "miner" });
    // Mined blocks, imported blocks, reorganisations and the dev methods' cuts, one at a time.
    const writeQueue = new ChainWriteQueue();
    const miner = new Miner(chain, pool, builder, { mode: options.mining, kind: options.miner, coinbase: options.coinbase, extraData: options.extraData, clock, rules, writeQueue }, minerLog);
    const importer = new BlockImporter(chain, state, {
      constants: consensus,
      now: () => clock.now(),
      writeQueue,
      createBuilder: (canonicalHash) => BlockBuilder.create(common, state.at(chain.tip.header.fields.stateRoot), canonicalHash),
      createReferenceBuilder: options.verifyImportsWithReferenceEngine
        ? (canonicalHash) => BlockBuilder.create(common, state.at(chain.tip.header.fields.stateRoot), canonicalHash, { plainTransfers: false, leanCalls: false })
        : undefined,
    });
    const mergedMining = new MergedMiningServer(chain, pool, miner, importer, { ...defaultMergedMiningServerOptions, ...options.mergedMining }, log.child({ module: "mergedMining" }));
    const hashRates = new HashRates(chain, { ...defaultHashRateOptions, nowSeconds: () => clock.now(), ownCoinbase: () => (miner.external ? undefined : miner.coinbase) });
    const unfollowChain = chain.subscribeHead(new PoolChainFollower(pool, poolLog), (error) => poolLog.error({ err: error }, "following the chain failed"));
    miner.start();
    // Under automine, transactions the pool took back are mined now, as if they had just arrived:
    // in the background (10,000 of them take seconds), while the node already answers; a stop ends
    // the run after the block being built.
    miner.minePending().catch((error: unknown) => minerLog.error({ err: error }, "mining the transactions taken back into the pool failed"));
    const devChain = new DevChain(chain, pool, miner, clock, minerLog);
    const blockFields = {
      get coinbase() {
        return miner.coinbase;
      },
      extraData: options.extraData,
    };
    const pendingState = new PendingState(chain, pool, state, createBuilder, blockFields, () => clock.nextBlockTime(), rules);
    // A chain on disk can be read by a second thread: calls on stored blocks run there (node/callWorkers.ts), and so do trace replays.
    const withCallWorker = options.callWorker && store instanceof LevelStore;
    const synchronousCalls = options.synchronousCalls;
    const callsHere = synchronousCalls === "off" ? "none" : synchronousCalls === "main" || !withCallWorker ? "all" : "alone";
    const calls = new CallService(common, state, canonicalHashFromTip, pendingState, options.calls, callsHere);
    const callWorkers = withCallWorker ? new CallWorkers({ directory: store.location, chainId: network.chainId, limits: options.calls, synchronousCalls: synchronousCalls === "worker" }, store, log.child({ module: "calls" })) : undefined;
    if (callWorkers !== undefined) calls.offloadTo(callWorkers);
    const recoveryOffload = options.recoveryWorker && availableParallelism() > 1 ? new RecoveryOffload(log.child({ module: "senders" })) : undefined;
    const batchChecks = recoveryOffload === undefined ? undefined : new BatchCheckThread(log.child({ module: "sync" }));
    // Clients' sends and (later) peers' transactions alike.
    const intake = createTransactionIntake({ common, typedTransactions: options.typedTransactions, pool, senderRecovery: recoveryOffload });
    const logsLog = log.child({ module: "logs" });
    const reportLogsError = (error: unknown) => logsLog.error({ err: error }, "following the chain failed");
    const logIndex = new BlockLogIndex(chain, reportLogsError);
    const filters = new FilterManager(chain, pool, {
      filterTimeoutMs: options.logs.filterTimeoutMs,
      reportError: reportLogsError,
      reportDropping: (filterId, kept) => logsLog.warn({ filterId, kept }, "filter not polled: it keeps its newest changes and drops older ones until the next poll"),
    });
    const tracer = new TraceService(common, state, chain, { ...defaultTraceServiceOptions, timeLimitMs: options.calls.timeLimitMs, maxConcurrent: options.tracesAtOnce });
    // Trace replays of stored blocks run on the same thread as calls, away from the one that answers requests.
    if (callWorkers !== undefined) tracer.offloadTo(callWorkers);
    log.info({ location: store.location, head: Number(chain.head.number), mining: options.mining.kind }, "chain opened");
    return {
      common,
      chain,
      state,
      pool,
      intake,
      wallet,
      miner,
      devChain,
      importer,
      mergedMining,
      hashRates,
      impersonated: new ImpersonatedAccounts(),
      pendingState,
      calls,
      filters,
      logIndex,
      logLimits: { blockRangeLimit: options.logs.blockRangeLimit, resultLimit: options.logs.resultLimit },
      tracer,
      callWorkers,
      senderRecovery: recoveryOffload,
      batchChecks,
      location: store.location,
      typedTransactions: options.typedTransactions,
      nodeKeyStore: {
        read: () => store.getSync(storeKeys.metadata(metadataNames.p2pNodeKey)),
        write: (key) => store.write([{ type: "put", key: storeKeys.metadata(metadataNames.p2pNodeKey), value: key }]),
      },
      async close() {
        filters.close();
        logIndex.close();
        unfollowChain();
        await mergedMining.close();
        await miner.stop();
        await pool.persist().catch((error: unknown) => poolLog.error({ err: error }, "the pool's journal could not be written"));
        await callWorkers?.close();
        await recoveryOffload?.close();
        await batchChecks?.close();
        await chain.whenTipWritten().catch(() => undefined);
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
