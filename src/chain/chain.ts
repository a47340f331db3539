// The canonical chain on the store: blocks by hash and number, transaction locations, receipts,
// total difficulty and the head. Every block is written in one atomic batch with its state-trie
// nodes and the new head pointer, so after a crash the store holds whole blocks only.
import type { Common } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import { bigIntToUnpaddedBytes, bytesToBigInt } from "@ethereumjs/util";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { StateDatabase } from "../state/stateDatabase.js";
import type { KeyValueStore, StoreOperation } from "../storage/keyValueStore.js";
import { DataDirectoryError } from "../storage/keyValueStore.js";
import { metadataNames, storeKeys } from "../storage/keys.js";
import { Block } from "./block.js";
import { buildGenesisBlock, type GenesisSpec } from "./genesis.js";
import { BlockHeader } from "./header.js";
import { decodeBlockReceipts, encodeBlockReceipts, type ChainReceipt } from "./receipts.js";

/** Version of the store layout; a store of another version is refused. */
const storeFormatVersion = 1;
/** Blocks (and their receipts) kept decoded in memory. */
const recentBlockCacheSize = 512;

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
}

export class Chain {
  private headBlock: Block;
  private readonly blocks = new RecentCache<Block>(recentBlockCacheSize);
  private readonly receipts = new RecentCache<ChainReceipt[]>(recentBlockCacheSize);

  private constructor(
    private readonly store: KeyValueStore,
    private readonly state: StateDatabase,
    private readonly common: Common,
    readonly genesis: Block,
    head: Block,
  ) {
    this.headBlock = head;
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
      const chain = new Chain(store, state, common, genesis, genesis);
      const operations: StoreOperation[] = [
        { type: "put", key: storeKeys.metadata(metadataNames.formatVersion), value: textEncoder.encode(String(storeFormatVersion)) },
        { type: "put", key: storeKeys.metadata(metadataNames.chainIdentity), value: textEncoder.encode(identity) },
      ];
      await chain.writeBlock(genesis, [], genesis.header.fields.difficulty, operations);
      return chain;
    }
    const version = textDecoder.decode(storedVersion);
    if (version !== String(storeFormatVersion)) {
      throw new DataDirectoryError(`${store.location} holds a chain database of format version ${version}; this node reads version ${storeFormatVersion}`);
    }
    const storedIdentity = textDecoder.decode((await store.get(storeKeys.metadata(metadataNames.chainIdentity))) ?? new Uint8Array());
    if (storedIdentity !== identity) {
      throw new DataDirectoryError(`${store.location} holds another chain (${storedIdentity || "unknown"}); this node runs ${identity}. Use another --data-dir.`);
    }
    const headHash = await store.get(storeKeys.metadata(metadataNames.head));
    const chain = new Chain(store, state, common, genesis, genesis);
    const head = headHash === undefined ? undefined : await chain.getBlockByHash(headHash);
    if (head === undefined) throw new DataDirectoryError(`${store.location} is damaged: the head block is missing`);
    if (!(await state.hasRoot(head.header.fields.stateRoot))) {
      throw new DataDirectoryError(`${store.location} is damaged: the state of head block ${head.number} is missing`);
    }
    chain.headBlock = head;
    return chain;
  }

  get head(): Block {
    return this.headBlock;
  }

  async getBlockByHash(hash: Uint8Array): Promise<Block | undefined> {
    const key = bytesToUnprefixedHex(hash);
    const cached = this.blocks.get(key);
    if (cached !== undefined) return cached;
    const [encodedHeader, encodedBody] = await Promise.all([this.store.get(storeKeys.header(hash)), this.store.get(storeKeys.body(hash))]);
    if (encodedHeader === undefined || encodedBody === undefined) return undefined;
    const block = Block.decodeBody(BlockHeader.decode(encodedHeader), encodedBody, this.common);
    this.blocks.set(key, block);
    return block;
  }

  async getCanonicalHash(blockNumber: bigint): Promise<Uint8Array | undefined> {
    if (blockNumber > this.headBlock.number || blockNumber < 0n) return undefined;
    if (blockNumber === this.headBlock.number) return this.headBlock.hash;
    return this.store.get(storeKeys.canonicalHash(blockNumber));
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
    const stored = await this.store.get(storeKeys.totalDifficulty(blockHash));
    return stored === undefined ? undefined : bytesToBigInt(stored);
  }

  async getReceipts(blockHash: Uint8Array): Promise<ChainReceipt[] | undefined> {
    const key = bytesToUnprefixedHex(blockHash);
    const cached = this.receipts.get(key);
    if (cached !== undefined) return cached;
    const stored = await this.store.get(storeKeys.receipts(blockHash));
    if (stored === undefined) return undefined;
    const receipts = decodeBlockReceipts(stored);
    this.receipts.set(key, receipts);
    return receipts;
  }

  /** Where a mined transaction is, if its block is canonical. */
  async getTransactionLocation(transactionHash: Uint8Array): Promise<TransactionLocation | undefined> {
    const stored = await this.store.get(storeKeys.transactionLocation(transactionHash));
    if (stored === undefined) return undefined;
    const [blockHash, index] = RLP.decode(stored) as [Uint8Array, Uint8Array];
    const block = await this.getBlockByHash(blockHash);
    if (block === undefined || !(await this.isCanonical(block))) return undefined;
    return { blockHash, index: Number(bytesToBigInt(index)) };
  }

  /**
   * Writes a block built on the head, with its receipts and the state-trie nodes written since the
   * last block, in one batch; then makes it the head.
   */
  async appendBlock(block: Block, receipts: readonly ChainReceipt[]): Promise<void> {
    if (Buffer.compare(block.header.fields.parentHash, this.headBlock.hash) !== 0) {
      throw new Error(`block ${block.number} does not extend the head ${this.headBlock.number}`);
    }
    const parentDifficulty = (await this.getTotalDifficulty(this.headBlock.hash)) ?? 0n;
    await this.writeBlock(block, receipts, parentDifficulty + block.cumulativeDifficulty, []);
  }

  private async writeBlock(block: Block, receipts: readonly ChainReceipt[], totalDifficulty: bigint, operations: StoreOperation[]): Promise<void> {
    const hash = block.hash;
    operations.push(
      { type: "put", key: storeKeys.header(hash), value: block.header.encoded },
      { type: "put", key: storeKeys.body(hash), value: block.encodeBody() },
      { type: "put", key: storeKeys.canonicalHash(block.number), value: hash },
      { type: "put", key: storeKeys.totalDifficulty(hash), value: bigIntToUnpaddedBytes(totalDifficulty) },
      { type: "put", key: storeKeys.receipts(hash), value: encodeBlockReceipts(receipts) },
    );
    block.transactions.forEach((transaction, index) => {
      operations.push({ type: "put", key: storeKeys.transactionLocation(transaction.hash), value: RLP.encode([hash, bigIntToUnpaddedBytes(BigInt(index))]) });
    });
    this.state.takeWrites(operations);
    operations.push({ type: "put", key: storeKeys.metadata(metadataNames.head), value: hash });
    try {
      await this.store.write(operations);
    } finally {
      this.state.writeFinished();
    }
    const key = bytesToUnprefixedHex(hash);
    this.blocks.set(key, block);
    this.receipts.set(key, [...receipts]);
    this.headBlock = block;
  }
}
