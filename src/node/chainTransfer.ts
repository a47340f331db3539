// `chain-node export` and `chain-node import`: canonical blocks out of a stopped node's data dir
// into a file of blocks (node/blockFile.ts), and a file of blocks into a data dir through the
// block importer, which proves each block as it proves a peer's. Both refuse a data dir a running
// node holds (LevelDB's lock). The CLI (cli/export.ts, cli/import.ts) shows the progress and the
// outcome; what is refused here is a ChainTransferError, whose message says what and why.
import { open, rename, rm, stat } from "node:fs/promises";
import { RLP } from "@ethereumjs/rlp";
import { Block, MalformedBlockError } from "../chain/block.js";
import { Chain, StoredDataDamagedError } from "../chain/chain.js";
import { BlockHeader } from "../chain/header.js";
import type { NetworkProfile } from "../chain/networks.js";
import { bytesToHex } from "../common/hex.js";
import type { Logger } from "../common/logger.js";
import { installFastRlp } from "../common/rlp.js";
import { createExecutionRules } from "../execution/rules.js";
import { StateDatabase } from "../state/stateDatabase.js";
import { DataDirectoryError } from "../storage/keyValueStore.js";
import { findLevelLockHolder } from "../storage/leveldb/lockHolder.js";
import { openLevelStore } from "../storage/levelStore.js";
import { BlockFileError, BlockFileReader } from "./blockFile.js";
import { ChainOpeningError, loadGenesis, openChainServices, type ChainServices } from "./chainServices.js";
import { defaultChainOptions } from "./options.js";

/** An export or import refused or stopped for a reason the message gives (exit code 1, no stack). */
export class ChainTransferError extends Error {}

/** The data dir an export reads or an import writes, and the chain it must hold. */
export interface ChainLocation {
  readonly network: NetworkProfile;
  readonly dataDir: string;
  /** The --genesis file the chain was started with; undefined: the network's own genesis. */
  readonly genesisFile: string | undefined;
}

async function refuseInUse(dataDir: string): Promise<void> {
  const holder = await findLevelLockHolder(dataDir);
  if (holder !== undefined) throw new ChainTransferError(`${dataDir} is in use by process ${holder} (it holds LevelDB's lock): stop the node first`);
}

/** Blocks gathered before one write to the file. */
const exportWriteBytes = 1 << 20;

export interface ExportRequest extends ChainLocation {
  readonly file: string;
  /** First block written; default 1 (genesis is in every node already). */
  readonly from: bigint | undefined;
  /** Last block written; default the head. */
  readonly to: bigint | undefined;
  /** Replace `file` when it exists (else an existing file is refused). */
  readonly force: boolean;
}

export interface ExportProgress {
  readonly done: number;
  readonly total: number;
  readonly bytes: number;
}

export interface ExportReport {
  readonly from: bigint;
  readonly to: bigint;
  readonly blocks: number;
  readonly bytes: number;
  readonly headNumber: bigint;
  readonly headHash: Uint8Array;
}

/**
 * Writes canonical blocks `from`..`to` of a stopped node's data dir to `file` in the wire form,
 * streamed: one block in memory at a time (and a megabyte of them waiting for the write). The blocks
 * go to a temporary file beside `file`, which is synced and renamed to `file` at the end: an export
 * cut short (an error, a signal, a crash) never leaves a file that looks whole. An existing `file`
 * is refused unless `force`. Opening the store applies the batches the node's write-ahead log holds
 * (as a start of the node would); nothing else is written to the data dir.
 */
export async function exportChain(request: ExportRequest, log: Logger, onProgress: (progress: ExportProgress) => void = () => undefined, signal?: AbortSignal): Promise<ExportReport> {
  const { dataDir, file } = request;
  if (!(await stat(`${dataDir}/CURRENT`).catch(() => undefined))?.isFile()) throw new ChainTransferError(`${dataDir} holds no chain (no LevelDB database there)`);
  await refuseInUse(dataDir);
  if (!request.force && (await stat(file).catch(() => undefined)) !== undefined) throw new ChainTransferError(`${file} exists: pass --force to replace it`);
  installFastRlp();
  const genesis = await loadGenesisFor(request);
  let store;
  try {
    store = await openLevelStore(dataDir, { warn: (details, message) => log.warn(details, message) });
  } catch (error) {
    if (error instanceof DataDirectoryError) throw new ChainTransferError(error.message);
    throw error;
  }
  try {
    const common = createExecutionRules(request.network.chainId);
    let chain: Chain;
    try {
      chain = await Chain.open(store, new StateDatabase(store, common), common, genesis);
    } catch (error) {
      if (error instanceof DataDirectoryError) throw new ChainTransferError(error.message);
      throw error;
    }
    const head = chain.head;
    const from = request.from ?? 1n;
    const to = request.to ?? head.number;
    if (to > head.number) throw new ChainTransferError(`--to ${to} is past the head of the chain in ${dataDir}, block ${head.number}`);
    if (from > to) {
      throw new ChainTransferError(request.from === undefined && request.to === undefined ? `the chain in ${dataDir} holds its genesis block only: nothing to export` : `--from ${from} is after --to ${to}`);
    }
    const total = Number(to - from + 1n);
    const temporary = `${file}.${process.pid}.partial`;
    const output = await open(temporary, "wx").catch((error: NodeJS.ErrnoException) => {
      throw new ChainTransferError(`cannot write ${temporary}: ${error.message}`);
    });
    let done = 0;
    let bytes = 0;
    try {
      let pending: Uint8Array[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        for (let written = 0; written < pending.length; ) written += (await output.writev(pending.slice(written, written + 1000))).buffers.length;
        pending = [];
        pendingBytes = 0;
      };
      for (let number = from; number <= to; number++) {
        if (signal?.aborted) throw new ChainTransferError(`interrupted after ${done} blocks: ${file} not written`);
        let block: Block | undefined;
        try {
          block = await chain.getBlockByNumber(number);
        } catch (error) {
          if (error instanceof StoredDataDamagedError) throw new ChainTransferError(`canonical block ${number}: ${error.message}; \`chain-node verify --data-dir ${dataDir}\` lists every problem`);
          throw error;
        }
        if (block === undefined) throw new ChainTransferError(`canonical block ${number} is missing from ${dataDir}; \`chain-node verify --data-dir ${dataDir}\` lists every problem`);
        const encoded = block.encode();
        pending.push(encoded);
        pendingBytes += encoded.length;
        bytes += encoded.length;
        done++;
        if (pendingBytes >= exportWriteBytes) {
          await flush();
          onProgress({ done, total, bytes });
        }
      }
      await flush();
      await output.datasync();
      await output.close();
      if (!request.force && (await stat(file).catch(() => undefined)) !== undefined) throw new ChainTransferError(`${file} appeared while the blocks were written: pass --force to replace it`);
      await rename(temporary, file);
      onProgress({ done, total, bytes });
    } catch (error) {
      await output.close().catch(() => undefined);
      await rm(temporary, { force: true });
      if ((error as NodeJS.ErrnoException).code !== undefined) throw new ChainTransferError(`cannot write ${file}: ${(error as Error).message}`);
      throw error;
    }
    return { from, to, blocks: done, bytes, headNumber: head.number, headHash: head.hash };
  } finally {
    await store.close();
  }
}

async function loadGenesisFor(location: ChainLocation) {
  try {
    return await loadGenesis(location.network, location.genesisFile);
  } catch (error) {
    if (error instanceof ChainOpeningError) throw new ChainTransferError(error.message);
    throw error;
  }
}

export interface ImportRequest extends ChainLocation {
  readonly file: string;
  /** Take blocks holding EIP-2930 and EIP-1559 transactions (a chain made with --typed-transactions). */
  readonly typedTransactions?: boolean;
  /** Execute each block a second time on the untuned engine and refuse it where the two disagree. */
  readonly verifyWithReferenceEngine?: boolean;
}

export interface ImportProgress {
  /** Blocks read from the file and handed to the importer. */
  readonly blocks: number;
  readonly imported: number;
  readonly existing: number;
  /** Gas used by the blocks imported (not by those already present). */
  readonly gasUsed: bigint;
  readonly bytesRead: number;
  readonly fileBytes: number;
  /** Milliseconds since the first block was handed to the importer (the chain's opening not counted). */
  readonly elapsedMs: number;
}

export interface HeadSummary {
  readonly number: bigint;
  readonly hash: Uint8Array;
}

/** Why an import ended before the end of the file. */
export interface ImportStop {
  readonly kind: "invalid" | "malformed" | "noParent" | "interrupted";
  /** Where the block starts in the file. */
  readonly offset: number;
  /** The block's number and hash, when its header decodes. */
  readonly number?: bigint;
  readonly hash?: Uint8Array;
  readonly reason: string;
}

export interface ImportReport {
  /** Blocks stored (on the canonical chain or a side branch). */
  readonly imported: number;
  /** Of those, the ones stored on a side branch (not the heaviest chain). */
  readonly sideBranch: number;
  /** Blocks the data dir held already (skipped). */
  readonly existing: number;
  readonly gasUsed: bigint;
  readonly headBefore: HeadSummary;
  readonly headAfter: HeadSummary;
  readonly fileBytes: number;
  /** Milliseconds from the first block handed to the importer to the last one on disk. */
  readonly elapsedMs: number;
  /** Undefined when every block of the file was read. */
  readonly stop?: ImportStop;
}

/** Number and hash of the block in `bytes` when its header decodes, for a message about it. */
function headerOf(bytes: Uint8Array): { number?: bigint; hash?: Uint8Array } {
  try {
    const items = RLP.decode(bytes) as unknown[];
    const header = BlockHeader.decode(RLP.encode(items[0] as Uint8Array[]));
    return { number: header.number, hash: header.hash };
  } catch {
    return {};
  }
}

/**
 * Reads `file` block by block into the data dir (a new one is created) through the node's block
 * importer, as blocks from a file: each proven and executed, stored whether or not it becomes the
 * head; a branch heavier than the data dir's own becomes canonical. Blocks already present are
 * counted and skipped, so importing a file twice is harmless. Stops at the first block that is
 * malformed, invalid or whose parent is unknown (the report's `stop`); the blocks before it stay
 * imported. Everything is on disk when it returns. The node's chain services open without the
 * JSON-RPC server, the miner off, no worker threads.
 */
export async function importChain(request: ImportRequest, log: Logger, onProgress: (progress: ImportProgress) => void = () => undefined, signal?: AbortSignal): Promise<ImportReport> {
  const { dataDir, file } = request;
  await refuseInUse(dataDir);
  let reader: BlockFileReader;
  try {
    reader = await BlockFileReader.open(file);
  } catch (error) {
    throw new ChainTransferError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    let services: ChainServices;
    try {
      services = await openChainServices(request.network, { dataDir, inMemory: false }, {
          ...defaultChainOptions,
          genesisFile: request.genesisFile,
          mining: { kind: "off" },
          callWorker: false,
          recoveryWorker: false,
          typedTransactions: request.typedTransactions ?? false,
          verifyImportsWithReferenceEngine: request.verifyWithReferenceEngine ?? false,
        }, log);
    } catch (error) {
      if (error instanceof ChainOpeningError) throw new ChainTransferError(error.message);
      throw error;
    }
    try {
      const { chain, common, importer } = services;
      const headBefore = { number: chain.head.number, hash: chain.head.hash };
      let blocks = 0;
      let imported = 0;
      let sideBranch = 0;
      let existing = 0;
      let gasUsed = 0n;
      let stop: ImportStop | undefined;
      let started: number | undefined;
      const elapsedMs = () => (started === undefined ? 0 : performance.now() - started);
      const progress = (): ImportProgress => ({ blocks, imported, existing, gasUsed, bytesRead: reader.offset, fileBytes: reader.size, elapsedMs: elapsedMs() });
      try {
        for await (const { bytes, offset } of reader.blocks()) {
          if (signal?.aborted) {
            stop = { kind: "interrupted", offset, reason: "interrupted" };
            break;
          }
          let block: Block;
          try {
            block = Block.decode(bytes, common, services.typedTransactions);
          } catch (error) {
            if (!(error instanceof MalformedBlockError)) throw error;
            stop = { kind: "malformed", offset, ...headerOf(bytes), reason: error.message };
            break;
          }
          started ??= performance.now();
          const outcome = await importer.importBlock(block, "file");
          blocks++;
          if (outcome.status === "INVALID_BLOCK") {
            stop = { kind: "invalid", offset, number: block.number, hash: block.hash, reason: `${outcome.reason} (rule ${outcome.rule})` };
            break;
          }
          if (outcome.status === "NO_PARENT") {
            const parent = bytesToHex(block.header.fields.parentHash);
            stop = { kind: "noParent", offset, number: block.number, hash: block.hash, reason: `its parent ${parent} is neither in the data dir nor earlier in the file (import the blocks before it first)` };
            break;
          }
          if (outcome.status === "EXIST") existing++;
          else {
            imported++;
            if (outcome.status === "IMPORTED_NOT_BEST") sideBranch++;
            gasUsed += block.header.fields.gasUsed;
          }
          onProgress(progress());
        }
      } catch (error) {
        if (!(error instanceof BlockFileError)) throw error;
        stop = { kind: "malformed", offset: error.offset, reason: error.message };
      }
      await chain.whenTipWritten();
      onProgress(progress());
      return { imported, sideBranch, existing, gasUsed, headBefore, headAfter: { number: chain.head.number, hash: chain.head.hash }, fileBytes: reader.size, elapsedMs: elapsedMs(), stop };
    } finally {
      await services.close();
    }
  } finally {
    await reader.close();
  }
}
