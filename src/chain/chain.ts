// The canonical chain on the store: blocks by hash and number, transaction locations, receipts,
// total difficulty and the head. Every block is written in one atomic batch with its state-trie
// nodes and the new head pointer, so after a crash the store holds whole blocks only.
//
// Blocks are appended to the tip and written behind it (group commit): while one batch is on its
// way to disk, the blocks appended meanwhile wait and then go together in the next batch, in order.
// The miner builds on the tip without waiting for the disk; readers see the head, the last block
// on disk, so nothing the RPC answers can be lost to a crash. Reads use the store's synchronous
// get: one LevelDB read costs a few microseconds, a round trip through its thread pool far more.
import type { Common } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import { bytesToBigInt } from "@ethereumjs/util";
import { GenerationalCache } from "../common/generationalCache.js";
import { bigIntToMinimalBytes, bytesToUnprefixedHex } from "../common/hex.js";
import type { StateDatabase } from "../state/stateDatabase.js";
import type { TrieNodeBatch } from "../storage/trieNodeStore.js";
import type { KeyValueStore, StoreOperation } from "../storage/keyValueStore.js";
import { DataDirectoryError } from "../storage/keyValueStore.js";
import { metadataNames, storeKeys } from "../storage/keys.js";
import { Block } from "./block.js";
import { ChainHeadListeners, type BlockWithReceipts, type ChainHeadListener, type ListenerErrorReporter, type Reorganisation } from "./events.js";
import { buildGenesisBlock, type GenesisSpec } from "./genesis.js";
import { findCanonicalDamage, startupCheckedBlocks, startupCheckedBytes } from "./integrity.js";
import { BlockHeader, summarizeStoredHeader, type HeaderFields, type StoredHeaderSummary } from "./header.js";
import { decodeBlockReceipts, encodeBlockReceipts, type ChainReceipt } from "./receipts.js";

/**
 * Version of the store layout; a store of another version is refused. 2: block hashes as the
 * reference's (RSKIP92, chain/header.ts); 1 hashed the full header.
 */
const storeFormatVersion = 2;
/** Blocks (and their receipts) kept decoded in memory. */
const recentBlockCacheSize = 512;
/**
 * Stored headers served lately whose body commitments are kept (BodyCommitments): ten chunks of a
 * long sync's 192 headers, whose bodies a peer asks for next.
 */
const servedCommitmentsCacheSize = 2048;

/** An appended block on its way to disk. */
interface StagedBlock {
  readonly block: Block;
  readonly receipts: readonly ChainReceipt[];
  readonly totalDifficulty: bigint;
  readonly operations: StoreOperation[];
  readonly trieNodes: TrieNodeBatch;
  readonly written: { resolve: () => void; reject: (error: unknown) => void };
}

/** What a header commits its block's body to: the uncles hash and the transactions root. */
export type BodyCommitments = Pick<HeaderFields, "unclesHash" | "transactionsRoot">;

/** A stored header as it is on disk, checked against its hash: what a headers answer sends a peer. */
export interface StoredHeader {
  /** The full encoding (19 fields) as stored. */
  readonly encoded: Uint8Array;
  readonly number: bigint;
  readonly parentHash: Uint8Array;
}

export interface TransactionLocation {
  readonly blockHash: Uint8Array;
  readonly index: number;
}

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/** A size-bounded map that forgets the entry used least recently. */
class RecentCache<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly capacity: number) {}
  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }
  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
  delete(key: string): void {
    this.entries.delete(key);
  }
}

/**
 * Data the store holds that is not what was written (a block whose bytes do not hash to its key,
 * receipts that do not decode, a canonical block's receipts missing): the read is refused, naming
 * what is damaged, rather than served.
 */
export class StoredDataDamagedError extends Error {}

/** A block could not be written; it and every block appended after it are gone. */
export class BlockWriteError extends Error {}

/** A revert the chain cannot do (the target is not a canonical block, or blocks are still being appended). */
export class ChainRevertError extends Error {}

/** A block the chain cannot store or switch to (its parent or a block of its branch is not stored). */
export class ChainBranchError extends Error {}

export class Chain {
  private headBlock: Block;
  private headTotalDifficulty: bigint;
  /** The last appended block: the head, or a block still waiting for the disk. */
  private tipBlock: Block;
  private tipTotalDifficulty: bigint;
  /** Appended blocks not yet handed to a batch, oldest first. */
  private staged: StagedBlock[] = [];
  /** Blocks in the batch being written. */
  private writing: StagedBlock[] = [];
  /** The loop writing batches, while there is anything to write. */
  private writer: Promise<void> | undefined;
  /** Settles when the tip's batch does. */
  private tipWritten: Promise<void> = Promise.resolve();
  private readonly blocks = new RecentCache<Block>(recentBlockCacheSize);
  /**
   * Blocks getBlockByHash read from the store, whose header is checked against its hash but whose
   * body is not against the header (a root to compute that an RPC read need not pay): checked once
   * before a peer is served one (servedBlock, wireBody). Blocks appended or switched to are the
   * importer's or the miner's, whole.
   */
  private readonly bodiesUnchecked = new WeakSet<Block>();
  private readonly receipts = new RecentCache<ChainReceipt[]>(recentBlockCacheSize);
  /**
   * The body commitments of stored headers read lately (checked against their hashes, which are
   * the keys): a peer syncing asks for a chunk's headers, then for the same blocks' bodies, which
   * are checked against these without reading and hashing each header again. A hash names one
   * header, so an entry never goes stale.
   */
  private readonly servedCommitments = new GenerationalCache<BodyCommitments>(servedCommitmentsCacheSize, () => 1);
  private readonly headListeners = new ChainHeadListeners();
  /** The highest number with a side block stored (the miner looks for uncles only near it). */
  private highestSideBlock: bigint | undefined;

  private constructor(
    private readonly store: KeyValueStore,
    private readonly state: StateDatabase,
    private readonly common: Common,
    readonly genesis: Block,
    head: Block,
    headTotalDifficulty: bigint,
  ) {
    this.headBlock = head;
    this.tipBlock = head;
    this.headTotalDifficulty = headTotalDifficulty;
    this.tipTotalDifficulty = headTotalDifficulty;
  }

  /**
   * Opens the chain kept in `store`, or writes the genesis block into an empty store. A store of
   * another chain, another layout version or with a broken head is refused with a clear message,
   * before anything is written.
   */
  static async open(store: KeyValueStore, state: StateDatabase, common: Common, genesisSpec: GenesisSpec): Promise<Chain> {
    const genesis = await buildGenesisBlock(genesisSpec, state);
    const identity = JSON.stringify({ chainId: common.chainId().toString(), genesisHash: `0x${bytesToUnprefixedHex(genesis.hash)}` });
    const storedVersion = await store.get(storeKeys.metadata(metadataNames.formatVersion));
    if (storedVersion === undefined) {
      const headHash = await store.get(storeKeys.metadata(metadataNames.head));
      if (headHash !== undefined || (await store.get(storeKeys.canonicalHash(0n))) !== undefined) {
        throw new DataDirectoryError(`${store.location} holds a chain database without a format version: it was not written by this node`);
      }
      // The node writes its format version with the genesis block: a database holding anything
      // without it is another program's, and is left as it is.
      if (store.isEmpty !== undefined && !(await store.isEmpty())) {
        throw new DataDirectoryError(`${store.location} holds a LevelDB database that this node did not write; choose an empty or new directory with --data-dir`);
      }
      const genesisDifficulty = genesis.header.fields.difficulty;
      const chain = new Chain(store, state, common, genesis, genesis, genesisDifficulty);
      const written = chain.stage(genesis, [], genesisDifficulty, [
        { type: "put", key: storeKeys.metadata(metadataNames.formatVersion), value: textEncoder.encode(String(storeFormatVersion)) },
        { type: "put", key: storeKeys.metadata(metadataNames.chainIdentity), value: textEncoder.encode(identity) },
      ]);
      await written;
      return chain;
    }
    const version = textDecoder.decode(storedVersion);
    if (version === "1") {
      throw new DataDirectoryError(
        `${store.location} holds a chain of format version 1, written by an earlier chain-node whose block hashes covered all three merged-mining fields; ` +
          `this node hashes blocks as the reference does (RSKIP92), so every hash of that chain would change. It is left as it is: start this node on a new --data-dir.`,
      );
    }
    if (version !== String(storeFormatVersion)) {
      throw new DataDirectoryError(`${store.location} holds a chain database of format version ${version}; this node reads version ${storeFormatVersion}`);
    }
    const storedIdentity = textDecoder.decode((await store.get(storeKeys.metadata(metadataNames.chainIdentity))) ?? new Uint8Array());
    if (storedIdentity !== identity) {
      throw new DataDirectoryError(`${store.location} holds another chain (${storedIdentity || "unknown"}); this node runs ${identity}. Use another --data-dir.`);
    }
    const headHash = await store.get(storeKeys.metadata(metadataNames.head));
    const chain = new Chain(store, state, common, genesis, genesis, 0n);
    const head = headHash === undefined ? undefined : await chain.getBlockByHash(headHash);
    const headTotalDifficulty = head === undefined ? undefined : await chain.getTotalDifficulty(head.hash);
    if (head === undefined || headTotalDifficulty === undefined) throw new DataDirectoryError(`${store.location} is damaged: the head block is missing`);
    if (!state.hasRoot(head.header.fields.stateRoot)) {
      throw new DataDirectoryError(`${store.location} is damaged: the state of head block ${head.number} is missing`);
    }
    const lowest = head.number >= startupCheckedBlocks ? head.number - startupCheckedBlocks + 1n : 0n;
    const damage = findCanonicalDamage(store, { headHash: head.hash, headNumber: head.number, lowest, byteBudget: startupCheckedBytes }).next();
    if (!damage.done) {
      throw new DataDirectoryError(
        `${store.location} is damaged: canonical block ${damage.value.number}: ${damage.value.problem}. The node does not serve a chain with holes or wrong blocks; ` +
          `\`chain-node verify --data-dir ${store.location}\` lists every problem. (LevelDB's recovery at open may have rewritten its own files; the data is as it was.)`,
      );
    }
    chain.headBlock = chain.tipBlock = head;
    chain.headTotalDifficulty = chain.tipTotalDifficulty = headTotalDifficulty;
    for (const { key } of await store.entries(storeKeys.sideBlocksAt(0n).subarray(0, 1))) {
      const blockNumber = new DataView(key.buffer, key.byteOffset + 1, 8).getBigUint64(0);
      if (chain.highestSideBlock === undefined || blockNumber > chain.highestSideBlock) chain.highestSideBlock = blockNumber;
    }
    return chain;
  }

  /** The last block on disk: what every reader sees. */
  get head(): Block {
    return this.headBlock;
  }

  /** The total difficulty of the head (what peers compare in their status). */
  get headWeight(): bigint {
    return this.headTotalDifficulty;
  }

  /** The block the next block builds on: the head, or a later block still waiting for the disk. */
  get tip(): Block {
    return this.tipBlock;
  }

  /**
   * Tells `listener` about every change of the head from now on: blocks added once they are on
   * disk (see chain/events.ts). A listener's error goes to `reportError`, never to the chain.
   * Answers the function that unsubscribes.
   */
  subscribeHead(listener: ChainHeadListener, reportError: ListenerErrorReporter): () => void {
    return this.headListeners.subscribe(listener, reportError);
  }

  async getBlockByHash(hash: Uint8Array): Promise<Block | undefined> {
    const key = bytesToUnprefixedHex(hash);
    const cached = this.blocks.get(key);
    if (cached !== undefined) return cached;
    const encodedHeader = this.store.getSync(storeKeys.header(hash));
    const encodedBody = encodedHeader === undefined ? undefined : this.store.getSync(storeKeys.body(hash));
    if (encodedHeader === undefined || encodedBody === undefined) return undefined;
    let block: Block;
    try {
      block = Block.decodeBody(BlockHeader.decode(encodedHeader), encodedBody, this.common);
    } catch (error) {
      throw new StoredDataDamagedError(`the stored block 0x${key} is damaged: ${(error as Error).message}`);
    }
    // Decoding hashes the header anyway: bytes that do not hash to their key are not that block.
    if (Buffer.compare(block.hash, hash) !== 0) throw new StoredDataDamagedError(`the stored block 0x${key} is damaged: its header hashes to 0x${bytesToUnprefixedHex(block.hash)}`);
    this.bodiesUnchecked.add(block);
    this.blocks.set(key, block);
    return block;
  }

  /**
   * A stored block to send a peer: getBlockByHash's, its body checked against its header as well.
   * A block whose body is not its header's is refused (StoredDataDamagedError), never served.
   */
  async servedBlock(hash: Uint8Array): Promise<Block | undefined> {
    const block = await this.getBlockByHash(hash);
    return block === undefined ? undefined : this.bodyChecked(block);
  }

  private bodyChecked(block: Block): Block {
    if (!this.bodiesUnchecked.has(block)) return block;
    const problem = block.bodyMismatch();
    if (problem !== undefined) throw new StoredDataDamagedError(`the stored block 0x${bytesToUnprefixedHex(block.hash)} is damaged: ${problem}`);
    this.bodiesUnchecked.delete(block);
    return block;
  }

  /** A stored block's header, checked against its hash like getBlockByHash's block, without reading the body. */
  getHeaderByHash(hash: Uint8Array): BlockHeader | undefined {
    const key = bytesToUnprefixedHex(hash);
    const cached = this.blocks.get(key);
    if (cached !== undefined) return cached.header;
    const encoded = this.store.getSync(storeKeys.header(hash));
    if (encoded === undefined) return undefined;
    let header: BlockHeader;
    try {
      header = BlockHeader.decode(encoded);
    } catch (error) {
      throw new StoredDataDamagedError(`the stored header 0x${key} is damaged: ${(error as Error).message}`);
    }
    if (Buffer.compare(header.hash, hash) !== 0) throw new StoredDataDamagedError(`the stored header 0x${key} is damaged: it hashes to 0x${bytesToUnprefixedHex(header.hash)}`);
    return header;
  }

  /**
   * A stored header to send a peer, as it is on disk: split into its fields, not decoded, and
   * checked as getHeaderByHash's (every field a byte string, the bytes hashing to `hash`). A headers
   * answer sends the stored bytes, with no header object made and encoded again.
   */
  servedHeader(hash: Uint8Array): StoredHeader | undefined {
    const key = bytesToUnprefixedHex(hash);
    const cached = this.blocks.get(key);
    if (cached !== undefined) return { encoded: cached.header.encoded, number: cached.number, parentHash: cached.header.fields.parentHash };
    const encoded = this.store.getSync(storeKeys.header(hash));
    if (encoded === undefined) return undefined;
    const { number, parentHash } = this.checkedStoredHeader(hash, key, encoded);
    return { encoded, number, parentHash };
  }

  /**
   * A stored header read in one pass (summarizeStoredHeader), checked against its hash, its body
   * commitments kept for the bodies a peer asks for next (servedCommitments). Throws
   * StoredDataDamagedError, in getHeaderByHash's words.
   */
  private checkedStoredHeader(hash: Uint8Array, key: string, encoded: Uint8Array): StoredHeaderSummary {
    let summary: StoredHeaderSummary;
    try {
      summary = summarizeStoredHeader(encoded);
    } catch (error) {
      throw new StoredDataDamagedError(`the stored header 0x${key} is damaged: ${(error as Error).message}`);
    }
    if (Buffer.compare(summary.hash, hash) !== 0) throw new StoredDataDamagedError(`the stored header 0x${key} is damaged: it hashes to 0x${bytesToUnprefixedHex(summary.hash)}`);
    // Copies: the payloads are views into the stored bytes, which they would keep alive.
    this.servedCommitments.set(key, { unclesHash: new Uint8Array(summary.unclesHash), transactionsRoot: new Uint8Array(summary.transactionsRoot) });
    return summary;
  }

  /**
   * A stored block's body in its wire form (Block.encodeWireBody), its transactions not decoded,
   * checked against the stored header (which must hash to `hash`): a body that is not its header's
   * is refused (StoredDataDamagedError), never served.
   */
  wireBody(hash: Uint8Array): Uint8Array | undefined {
    const key = bytesToUnprefixedHex(hash);
    const cached = this.blocks.get(key);
    if (cached !== undefined) return this.bodyChecked(cached).encodeWireBody();
    const encodedBody = this.store.getSync(storeKeys.body(hash));
    if (encodedBody === undefined) return undefined;
    const commitments = this.servedCommitments.get(key) ?? this.storedBodyCommitments(hash, key);
    try {
      return Block.wireBodyFromStored(encodedBody, commitments);
    } catch (error) {
      throw new StoredDataDamagedError(`the stored body of 0x${key} is damaged: ${(error as Error).message}`);
    }
  }

  /**
   * What a stored header commits its body to, for a body whose header was not served lately: read
   * and checked without decoding the header (checkedStoredHeader).
   */
  private storedBodyCommitments(hash: Uint8Array, key: string): BodyCommitments {
    const encoded = this.store.getSync(storeKeys.header(hash));
    if (encoded === undefined) throw new StoredDataDamagedError(`the stored body of 0x${key} is damaged: it has no header`);
    return this.checkedStoredHeader(hash, key, encoded);
  }

  async getCanonicalHash(blockNumber: bigint): Promise<Uint8Array | undefined> {
    if (blockNumber > this.headBlock.number || blockNumber < 0n) return undefined;
    if (blockNumber === this.headBlock.number) return this.headBlock.hash;
    return this.store.getSync(storeKeys.canonicalHash(blockNumber));
  }

  /** Canonical hash on the chain that ends at the tip (for BLOCKHASH while building). */
  async getCanonicalHashFromTip(blockNumber: bigint): Promise<Uint8Array | undefined> {
    for (const staged of [...this.writing, ...this.staged]) if (staged.block.number === blockNumber) return staged.block.hash;
    return this.getCanonicalHash(blockNumber);
  }

  async getBlockByNumber(blockNumber: bigint): Promise<Block | undefined> {
    const hash = await this.getCanonicalHash(blockNumber);
    return hash === undefined ? undefined : this.getBlockByHash(hash);
  }

  /** Whether the block is on the canonical chain. */
  async isCanonical(block: Block): Promise<boolean> {
    const hash = await this.getCanonicalHash(block.number);
    return hash !== undefined && Buffer.compare(hash, block.hash) === 0;
  }

  async getTotalDifficulty(blockHash: Uint8Array): Promise<bigint | undefined> {
    if (Buffer.compare(blockHash, this.headBlock.hash) === 0) return this.headTotalDifficulty;
    const stored = this.store.getSync(storeKeys.totalDifficulty(blockHash));
    return stored === undefined ? undefined : bytesToBigInt(stored);
  }

  async getReceipts(blockHash: Uint8Array): Promise<ChainReceipt[] | undefined> {
    const key = bytesToUnprefixedHex(blockHash);
    const cached = this.receipts.get(key);
    if (cached !== undefined) return cached;
    const stored = this.store.getSync(storeKeys.receipts(blockHash));
    if (stored === undefined) return undefined;
    let receipts: ChainReceipt[];
    try {
      receipts = decodeBlockReceipts(stored);
    } catch (error) {
      throw new StoredDataDamagedError(`the stored receipts of block 0x${key} are damaged: ${(error as Error).message}`);
    }
    this.receipts.set(key, receipts);
    return receipts;
  }

  /** Where a mined transaction is, if its block is canonical. */
  async getTransactionLocation(transactionHash: Uint8Array): Promise<TransactionLocation | undefined> {
    const stored = this.store.getSync(storeKeys.transactionLocation(transactionHash));
    if (stored === undefined) return undefined;
    const [blockHash, index] = RLP.decode(stored) as [Uint8Array, Uint8Array];
    const block = await this.getBlockByHash(blockHash);
    if (block === undefined || !(await this.isCanonical(block))) return undefined;
    return { blockHash, index: Number(bytesToBigInt(index)) };
  }

  /**
   * Appends a block built on the tip, with its receipts and the state-trie nodes written since the
   * last append. The block is the tip at once; the promise settles once it is on disk and the head
   * (or rejects with BlockWriteError: then the tip is back on the head).
   */
  appendBlock(block: Block, receipts: readonly ChainReceipt[]): Promise<void> {
    if (Buffer.compare(block.header.fields.parentHash, this.tipBlock.hash) !== 0) {
      return Promise.reject(new Error(`block ${block.number} does not extend the tip ${this.tipBlock.number}`));
    }
    return this.stage(block, receipts, this.tipTotalDifficulty + block.cumulativeDifficulty, []);
  }

  /**
   * Resolves once the tip (and so every block before it) is on disk; rejects with BlockWriteError
   * when it could not be written.
   */
  whenTipWritten(): Promise<void> {
    return this.tipWritten;
  }

  /** Whether a block with this hash is stored (on any branch) with its total difficulty. */
  hasBlock(hash: Uint8Array): boolean {
    if (this.blocks.get(bytesToUnprefixedHex(hash)) !== undefined) return true;
    if (this.stagedBlock(hash) !== undefined) return true;
    return this.store.getSync(storeKeys.totalDifficulty(hash)) !== undefined;
  }

  /**
   * Every stored header at `blockNumber`, on any branch: the canonical block's and those of side
   * blocks (the miner picks uncles among them).
   */
  async headersAt(blockNumber: bigint): Promise<BlockHeader[]> {
    const hashes = [...this.sideBlockHashesAt(blockNumber)];
    const canonical = await this.getCanonicalHashFromTip(blockNumber);
    if (canonical !== undefined) hashes.unshift(canonical);
    const headers: BlockHeader[] = [];
    const seen = new Set<string>();
    for (const hash of hashes) {
      const key = bytesToUnprefixedHex(hash);
      if (seen.has(key)) continue;
      seen.add(key);
      const block = await this.getBlockFromTip(hash);
      if (block !== undefined) headers.push(block.header);
    }
    return headers;
  }

  /** A block by hash, those still on their way to disk included (the importer reads parents there). */
  async getBlockFromTip(hash: Uint8Array): Promise<Block | undefined> {
    const staged = this.stagedBlock(hash);
    if (staged !== undefined) return staged.block;
    return this.getBlockByHash(hash);
  }

  /** Total difficulty of a stored block, or of one still on its way to disk. */
  async getTotalDifficultyFromTip(hash: Uint8Array): Promise<bigint | undefined> {
    if (Buffer.compare(hash, this.tipBlock.hash) === 0) return this.tipTotalDifficulty;
    const staged = this.stagedBlock(hash);
    if (staged !== undefined) return staged.totalDifficulty;
    return this.getTotalDifficulty(hash);
  }

  /** The total difficulty of the tip: the weight a new block's chain must beat. */
  get tipWeight(): bigint {
    return this.tipTotalDifficulty;
  }

  /** Whether a side block is stored at `blockNumber` or above (a dev chain that never imported has none). */
  hasSideBlocksFrom(blockNumber: bigint): boolean {
    return this.highestSideBlock !== undefined && this.highestSideBlock >= blockNumber;
  }

  /** An appended block still on its way to disk, by hash. */
  private stagedBlock(hash: Uint8Array): StagedBlock | undefined {
    return this.writing.find((staged) => Buffer.compare(staged.block.hash, hash) === 0) ?? this.staged.find((staged) => Buffer.compare(staged.block.hash, hash) === 0);
  }

  private sideBlockHashesAt(blockNumber: bigint): Uint8Array[] {
    const stored = this.store.getSync(storeKeys.sideBlocksAt(blockNumber));
    return stored === undefined ? [] : (RLP.decode(stored) as Uint8Array[]);
  }

  /** The operation that adds `hashes` to the side-block list at `blockNumber` (given the list `pending` ops already wrote). */
  private sideBlocksPut(blockNumber: bigint, hashes: readonly Uint8Array[]): StoreOperation {
    if (this.highestSideBlock === undefined || blockNumber > this.highestSideBlock) this.highestSideBlock = blockNumber;
    const known = this.sideBlockHashesAt(blockNumber);
    const added = hashes.filter((hash) => !known.some((existing) => Buffer.compare(existing, hash) === 0));
    return { type: "put", key: storeKeys.sideBlocksAt(blockNumber), value: RLP.encode([...known, ...added]) };
  }

  /** Header, body, receipts and total difficulty of a block: what every stored block has, canonical or not. */
  private blockOperations(block: Block, receipts: readonly ChainReceipt[], totalDifficulty: bigint): StoreOperation[] {
    const hash = block.hash;
    return [
      { type: "put", key: storeKeys.header(hash), value: block.header.encoded },
      { type: "put", key: storeKeys.body(hash), value: block.encodeBody() },
      { type: "put", key: storeKeys.totalDifficulty(hash), value: bigIntToMinimalBytes(totalDifficulty) },
      { type: "put", key: storeKeys.receipts(hash), value: encodeBlockReceipts(receipts) },
    ];
  }

  /**
   * Stores a valid block that does not become the head (a side branch), with the state-trie nodes
   * its execution wrote, in one batch. The head does not move and no listener hears of it.
   */
  async storeSideBlock(block: Block, receipts: readonly ChainReceipt[], totalDifficulty: bigint): Promise<void> {
    const operations = this.blockOperations(block, receipts, totalDifficulty);
    operations.push(this.sideBlocksPut(block.number, [block.hash]));
    const trieNodes = this.state.takeWrites(operations);
    try {
      await this.store.write(operations);
    } catch (error) {
      this.state.writeAbandoned(trieNodes);
      throw new BlockWriteError(`block ${block.number} could not be written: ${(error as Error).message}`);
    }
    this.state.writeFinished(trieNodes);
  }

  /**
   * Makes `block`, whose parent is stored but is not the tip, the head: its branch is heavier
   * (the caller's fork choice). In one atomic batch: the block itself (as storeSideBlock), the
   * canonical index and transaction locations rewritten from the branch point up, the blocks that
   * leave the canonical chain listed as side blocks (none is deleted: either branch may be best
   * again, or give uncles), and the head pointer. Listeners then hear of the removed blocks
   * (newest first), the added ones (oldest first) and the reorganisation, whose handlers are
   * awaited. Blocks still on their way to disk are waited for first; the caller keeps others from
   * being appended meanwhile (the write queue).
   */
  async switchHead(block: Block, receipts: readonly ChainReceipt[], totalDifficulty: bigint): Promise<Reorganisation> {
    await this.whenTipWritten().catch(() => undefined);
    if (this.staged.length > 0 || this.writing.length > 0) throw new ChainBranchError("blocks are still being appended; switch branches from the write queue");
    // The new branch, newest first, down to the block both branches share.
    const branch: BlockWithReceipts[] = [{ block, receipts }];
    let cursor = await this.getBlockByHash(block.header.fields.parentHash);
    while (cursor !== undefined && !(await this.isCanonical(cursor))) {
      const cursorReceipts = await this.getReceipts(cursor.hash);
      if (cursorReceipts === undefined) throw new ChainBranchError(`block ${cursor.number} of the new branch has no receipts in the store`);
      branch.push({ block: cursor, receipts: cursorReceipts });
      cursor = await this.getBlockByHash(cursor.header.fields.parentHash);
    }
    if (cursor === undefined) throw new ChainBranchError(`block ${block.number}'s branch reaches a block that is not stored`);
    const ancestor = cursor;
    const added = branch.reverse();
    const removed = await this.canonicalBlocksAbove(ancestor.number, (message) => new ChainBranchError(message));

    const operations = this.blockOperations(block, receipts, totalDifficulty);
    for (const { block: old } of removed) {
      operations.push(this.sideBlocksPut(old.number, [old.hash]));
      if (old.number > block.number) operations.push({ type: "del", key: storeKeys.canonicalHash(old.number) });
      for (const transaction of old.transactions) operations.push({ type: "del", key: storeKeys.transactionLocation(transaction.hash) });
    }
    // The new branch's entries come after the deletions: a transaction in both branches keeps a location, its new one.
    for (const { block: joining } of added) {
      operations.push({ type: "put", key: storeKeys.canonicalHash(joining.number), value: joining.hash });
      joining.transactions.forEach((transaction, index) => {
        operations.push({ type: "put", key: storeKeys.transactionLocation(transaction.hash), value: RLP.encode([joining.hash, bigIntToMinimalBytes(BigInt(index))]) });
      });
    }
    operations.push({ type: "put", key: storeKeys.metadata(metadataNames.head), value: block.hash });
    const trieNodes = this.state.takeWrites(operations);
    try {
      await this.store.write(operations);
    } catch (error) {
      this.state.writeAbandoned(trieNodes);
      throw new BlockWriteError(`the switch to block ${block.number} could not be written: ${(error as Error).message}`);
    }
    this.state.writeFinished(trieNodes);
    const key = bytesToUnprefixedHex(block.hash);
    this.blocks.set(key, block);
    this.receipts.set(key, [...receipts]);
    this.headBlock = this.tipBlock = block;
    this.headTotalDifficulty = this.tipTotalDifficulty = totalDifficulty;
    this.tipWritten = Promise.resolve();
    const change: Reorganisation = { ancestor, removed, added };
    this.headListeners.notifyBlocksRemoved(removed);
    this.headListeners.notifyBlocksAdded(added);
    await this.headListeners.notifyReorganised(change);
    return change;
  }

  /** The canonical blocks above `blockNumber` with their receipts, newest first; a missing one is `failure`'s error. */
  private async canonicalBlocksAbove(blockNumber: bigint, failure: (message: string) => Error): Promise<BlockWithReceipts[]> {
    const blocks: BlockWithReceipts[] = [];
    for (let number = this.headBlock.number; number > blockNumber; number--) {
      const block = await this.getBlockByNumber(number);
      const receipts = block === undefined ? undefined : await this.getReceipts(block.hash);
      if (block === undefined || receipts === undefined) throw failure(`canonical block ${number} is missing from the store`);
      blocks.push({ block, receipts });
    }
    return blocks;
  }

  /**
   * Makes `target`, a canonical block at or below the head, the head and the tip again. The blocks
   * above it are removed in one atomic batch with the new head pointer: their canonical-index
   * entries, transaction locations, headers, bodies, receipts and total difficulties (state-trie
   * nodes stay: tries are content-addressed and shared). Head listeners hear of the removed blocks,
   * newest first. The caller must keep blocks from being appended meanwhile (the miner's queue);
   * blocks still on their way to disk are waited for first. `alongside` goes into the same batch
   * (the pool's journal restored with the chain). Answers the removed blocks.
   */
  async revertTo(target: Block, alongside: readonly StoreOperation[] = []): Promise<BlockWithReceipts[]> {
    // A failed write already took the tip back to the head: nothing more to wait for.
    await this.whenTipWritten().catch(() => undefined);
    if (this.staged.length > 0 || this.writing.length > 0 || this.tipBlock !== this.headBlock) {
      throw new ChainRevertError("blocks are still being appended; revert from the miner's queue");
    }
    if (target.number > this.headBlock.number || !(await this.isCanonical(target))) {
      throw new ChainRevertError(`block ${target.number} is not a canonical block at or below the head`);
    }
    const targetTotalDifficulty = await this.getTotalDifficulty(target.hash);
    if (targetTotalDifficulty === undefined) throw new ChainRevertError(`block ${target.number} has no total difficulty in the store`);
    const removed = await this.canonicalBlocksAbove(target.number, (message) => new ChainRevertError(message));
    const operations: StoreOperation[] = [];
    for (const { block } of removed) {
      operations.push(
        { type: "del", key: storeKeys.canonicalHash(block.number) },
        { type: "del", key: storeKeys.header(block.hash) },
        { type: "del", key: storeKeys.body(block.hash) },
        { type: "del", key: storeKeys.totalDifficulty(block.hash) },
        { type: "del", key: storeKeys.receipts(block.hash) },
      );
      for (const transaction of block.transactions) operations.push({ type: "del", key: storeKeys.transactionLocation(transaction.hash) });
    }
    if (removed.length === 0) {
      if (alongside.length > 0) await this.store.write(alongside);
      return removed;
    }
    operations.push(...alongside, { type: "put", key: storeKeys.metadata(metadataNames.head), value: target.hash });
    await this.store.write(operations);
    for (const { block } of removed) {
      const key = bytesToUnprefixedHex(block.hash);
      this.blocks.delete(key);
      this.receipts.delete(key);
    }
    this.headBlock = this.tipBlock = target;
    this.headTotalDifficulty = this.tipTotalDifficulty = targetTotalDifficulty;
    this.tipWritten = Promise.resolve();
    this.headListeners.notifyBlocksRemoved(removed);
    return removed;
  }

  private stage(block: Block, receipts: readonly ChainReceipt[], totalDifficulty: bigint, operations: StoreOperation[]): Promise<void> {
    const hash = block.hash;
    operations.push(...this.blockOperations(block, receipts, totalDifficulty), { type: "put", key: storeKeys.canonicalHash(block.number), value: hash });
    block.transactions.forEach((transaction, index) => {
      operations.push({ type: "put", key: storeKeys.transactionLocation(transaction.hash), value: RLP.encode([hash, bigIntToMinimalBytes(BigInt(index))]) });
    });
    const trieNodes = this.state.takeWrites(operations);
    operations.push({ type: "put", key: storeKeys.metadata(metadataNames.head), value: hash });
    const written = new Promise<void>((resolve, reject) => {
      this.staged.push({ block, receipts, totalDifficulty, operations, trieNodes, written: { resolve, reject } });
    });
    // A failure reaches whoever waits on this block; without a waiter it must not crash the process.
    written.catch(() => undefined);
    this.tipWritten = written;
    this.tipBlock = block;
    this.tipTotalDifficulty = totalDifficulty;
    this.writer ??= this.writeStaged();
    return written;
  }

  /** Writes the staged blocks in one batch, then whatever was staged meanwhile, until none is left. */
  private async writeStaged(): Promise<void> {
    try {
      while (this.staged.length > 0) await this.writeBatch();
    } finally {
      // Cleared in the same turn as the loop's last check, so a block staged after it starts a new writer.
      this.writer = undefined;
    }
  }

  private async writeBatch(): Promise<void> {
    const batch = (this.writing = this.staged);
    this.staged = [];
    try {
      await this.store.write(batch.length === 1 ? batch[0]!.operations : batch.flatMap((staged) => staged.operations));
    } catch (error) {
      // Nothing of this batch is on disk, and every later block builds on it: all of them go.
      const failed = [...batch, ...this.staged];
      this.writing = [];
      this.staged = [];
      for (const staged of failed) this.state.writeAbandoned(staged.trieNodes);
      this.tipBlock = this.headBlock;
      this.tipTotalDifficulty = this.headTotalDifficulty;
      this.tipWritten = Promise.resolve();
      const cause = new BlockWriteError(`block ${batch[0]!.block.number} could not be written: ${(error as Error).message}`);
      for (const staged of failed) staged.written.reject(cause);
      return;
    }
    for (const staged of batch) {
      this.state.writeFinished(staged.trieNodes);
      const key = bytesToUnprefixedHex(staged.block.hash);
      this.blocks.set(key, staged.block);
      this.receipts.set(key, [...staged.receipts]);
    }
    const last = batch.at(-1)!;
    this.headBlock = last.block;
    this.headTotalDifficulty = last.totalDifficulty;
    this.writing = [];
    this.headListeners.notifyBlocksAdded(batch.map(({ block, receipts }) => ({ block, receipts })));
    for (const staged of batch) staged.written.resolve();
  }
}
