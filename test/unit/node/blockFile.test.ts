import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { createLegacyTx } from "@ethereumjs/tx";
import { Address } from "@ethereumjs/util";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { Block, MalformedBlockError } from "../../../src/chain/block.js";
import { BlockHeader, emptyBloom, emptyBytes, emptyListHash, emptyTrieRoot, zeroHash } from "../../../src/chain/header.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { BlockFileError, BlockFileReader, type FileBlock } from "../../../src/node/blockFile.js";
import { ChainTransferError, exportChain } from "../../../src/node/chainTransfer.js";
import { startTestNode } from "../../helpers/testNode.js";

const common = createExecutionRules(33n);
const quiet = createLogger("silent");

/** An RLP list of `payload` bytes (the payload is filler: the reader looks at the prefix only). */
function list(payload: number, fill = 0x01): Uint8Array {
  let prefix: number[];
  if (payload < 56) prefix = [0xc0 + payload];
  else {
    const length: number[] = [];
    for (let rest = payload; rest > 0; rest = Math.floor(rest / 256)) length.unshift(rest % 256);
    prefix = [0xf7 + length.length, ...length];
  }
  return Uint8Array.from([...prefix, ...new Array<number>(payload).fill(fill)]);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => [...part]));
}

describe("node/blockFile", () => {
  let directory: string;
  before(async () => {
    directory = await mkdtemp(join(tmpdir(), "chain-node-block-file-"));
  });
  after(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  async function readAll(bytes: Uint8Array, chunkBytes: number): Promise<{ blocks: FileBlock[]; error?: BlockFileError }> {
    const file = join(directory, `file-${chunkBytes}-${bytes.length}`);
    await writeFile(file, bytes);
    const reader = await BlockFileReader.open(file, { chunkBytes });
    const blocks: FileBlock[] = [];
    try {
      for await (const block of reader.blocks()) blocks.push(block);
      return { blocks };
    } catch (error) {
      if (!(error instanceof BlockFileError)) throw error;
      return { blocks, error };
    } finally {
      await reader.close();
    }
  }

  const items = [list(0), list(55, 2), list(56, 3), list(300, 4), list(70_000, 5), list(1, 6)];
  const whole = concat(items);
  const offsets = items.map((_, index) => items.slice(0, index).reduce((sum, item) => sum + item.length, 0));

  it("splits concatenated RLP lists at their prefixes, whatever the read size, each with its offset", async () => {
    for (const chunkBytes of [1, 7, 64, 1 << 20]) {
      const { blocks, error } = await readAll(whole, chunkBytes);
      expect(error, `chunks of ${chunkBytes}`).to.equal(undefined);
      expect(blocks.map(({ offset }) => offset)).to.deep.equal(offsets);
      blocks.forEach(({ bytes }, index) => expect(Buffer.compare(bytes, items[index]!), `item ${index}, chunks of ${chunkBytes}`).to.equal(0));
    }
    expect((await readAll(new Uint8Array(0), 64)).blocks).to.deep.equal([]);
  });

  it("a file cut inside a block: the whole blocks before it, then an error naming the cut block's offset", async () => {
    // Cut inside the 300-byte list's payload, then inside its 3-byte prefix (0xf9 0x01 0x2c).
    for (const [cut, left] of [
      [offsets[3]! + 100, 100],
      [offsets[3]! + 2, 2],
    ] as const) {
      const { blocks, error } = await readAll(whole.subarray(0, cut), 64);
      expect(blocks).to.have.length(3);
      expect(error?.offset).to.equal(offsets[3]);
      expect(error?.message).to.include(`the file ends inside the block at offset ${offsets[3]}`).and.include(`${left} are left`);
    }
  });

  it("bytes that are not an RLP list are refused at their offset; so are non-canonical list prefixes", async () => {
    const garbage = await readAll(concat([items[0]!, items[1]!, Uint8Array.from([0x80, 0x01, 0x02])]), 64);
    expect(garbage.blocks).to.have.length(2);
    expect(garbage.error?.offset).to.equal(offsets[2]);
    expect(garbage.error?.message).to.include("byte 0x80 does not start an RLP list");
    const text = await readAll(new TextEncoder().encode("hello, not blocks"), 64);
    expect(text.blocks).to.deep.equal([]);
    expect(text.error?.message).to.include("at offset 0: byte 0x68");
    expect((await readAll(Uint8Array.from([0xf8, 0x05, 1, 2, 3, 4, 5]), 64)).error?.message).to.include("in the long form (not canonical RLP)");
    expect((await readAll(Uint8Array.from([0xf9, 0x00, 0x40, ...new Array<number>(64).fill(1)]), 64)).error?.message).to.include("leading zero");
    // A length far past the file's end is a cut (or no length at all), not an allocation of that size.
    expect((await readAll(Uint8Array.from([0xfb, 0x01, 0x00, 0x00, 0x00, 0x01]), 64)).error?.message).to.include("the file ends inside the block at offset 0: it announces 16777221 bytes, 6 are left");
    expect((await readAll(Uint8Array.from([0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), 64)).error?.message).to.match(/^at offset 0: an RLP list announces \d+ bytes/);
  });

  it("Block.encode and Block.decode round-trip a block with transactions and an uncle; senders are recovered from the signatures", () => {
    const header = (number: bigint, extraData: Uint8Array) =>
      new BlockHeader({
        parentHash: zeroHash, unclesHash: emptyListHash, coinbase: new Uint8Array(20), stateRoot: emptyTrieRoot, transactionsRoot: emptyTrieRoot,
        receiptsRoot: emptyTrieRoot, logsBloom: emptyBloom, difficulty: 3n, number, gasLimit: 10_000_000n, gasUsed: 0n, timestamp: 1n, extraData,
        paidFees: 0n, minimumGasPrice: 0n, uncleCount: 1, mergedMiningHeader: emptyBytes, mergedMiningMerkleProof: emptyBytes, mergedMiningCoinbaseTransaction: emptyBytes,
      });
    const keys = ["cow", "cow1"].map((seed) => keccak_256(new TextEncoder().encode(seed)));
    const transactions = keys.map((key, index) =>
      decodeRawTransaction(createLegacyTx({ nonce: BigInt(index), gasLimit: 60_000n, to: new Address(new Uint8Array(20).fill(7)), data: new Uint8Array(index * 100) }, { common }).sign(key).serialize(), common),
    );
    const block = new Block(header(2n, new Uint8Array(10)), transactions, [header(1n, new Uint8Array(40))]);
    const encoded = block.encode();
    expect(encoded.length).to.equal(block.size);
    const decoded = Block.decode(encoded, common);
    expect(Buffer.compare(decoded.hash, block.hash)).to.equal(0);
    expect(decoded.uncles.map((uncle) => Buffer.from(uncle.hash).toString("hex"))).to.deep.equal(block.uncles.map((uncle) => Buffer.from(uncle.hash).toString("hex")));
    expect(decoded.transactions.map((transaction) => Buffer.from(transaction.sender).toString("hex"))).to.deep.equal(transactions.map((transaction) => Buffer.from(transaction.sender).toString("hex")));
    expect(Buffer.compare(decoded.encode(), encoded)).to.equal(0);
    expect(() => Block.decode(Uint8Array.from([0xc3, 0xc0, 0xc0, 0x80]), common)).to.throw(MalformedBlockError);
  });

  it("exportChain writes the canonical blocks a node stored, which read back block for block; refuses a range past the head and an existing file", async function () {
    this.timeout(60_000);
    const dataDir = join(directory, "chain");
    const node = await startTestNode({ dataDir });
    let from: string | undefined;
    try {
      [from] = await node.client.eth_accounts();
      for (let index = 0; index < 6; index++) await node.client.eth_sendTransaction({ from: from!, to: `0x${"aa".repeat(20)}`, value: "0x1" });
    } finally {
      await node.stop();
    }
    const network = findNetworkProfile(33)!;
    const file = join(directory, "chain.blocks");
    const report = await exportChain({ network, dataDir, genesisFile: undefined, file, from: 2n, to: undefined, force: false }, quiet);
    expect(report).to.include({ from: 2n, to: 6n, blocks: 5 });
    const reader = await BlockFileReader.open(file);
    const numbers: bigint[] = [];
    try {
      for await (const { bytes } of reader.blocks()) {
        const block = Block.decode(bytes, common);
        numbers.push(block.number);
        expect(block.transactions).to.have.length(1);
        expect(Buffer.from(block.transactions[0]!.sender).toString("hex")).to.equal(from!.slice(2).toLowerCase());
      }
    } finally {
      await reader.close();
    }
    expect(numbers).to.deep.equal([2n, 3n, 4n, 5n, 6n]);
    expect(report.bytes).to.equal((await readFile(file)).length);
    const refusal = (request: Partial<Parameters<typeof exportChain>[0]>) =>
      exportChain({ network, dataDir, genesisFile: undefined, file, from: undefined, to: undefined, force: false, ...request }, quiet).then(
        () => undefined,
        (error: unknown) => (error instanceof ChainTransferError ? error.message : `unexpected ${(error as Error).stack}`),
      );
    expect(await refusal({})).to.equal(`${file} exists: pass --force to replace it`);
    expect(await refusal({ force: true, to: 7n })).to.include("--to 7 is past the head").and.include("block 6");
    expect(await refusal({ force: true, from: 5n, to: 4n })).to.equal("--from 5 is after --to 4");
    expect(await refusal({ force: true, file: join(directory, "no-such-dir", "x") })).to.include("cannot write");
    // --force replaces it, with the range asked for.
    expect(await exportChain({ network, dataDir, genesisFile: undefined, file, from: 6n, to: 6n, force: true }, quiet)).to.include({ blocks: 1 });
    expect(Block.decode(await readFile(file), common).number).to.equal(6n);
  });
});
