// Blocks decoded one step ahead of an import, their senders recovered on the recovery worker: the
// same block, senders and refusals as Block.decode, with the worker and without it.
import { expect } from "chai";
import { RLP } from "@ethereumjs/rlp";
import { createLegacyTx } from "@ethereumjs/tx";
import { Address } from "@ethereumjs/util";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { Block, MalformedBlockError } from "../../../src/chain/block.js";
import { BlockHeader, emptyBloom, emptyBytes, emptyListHash, emptyTrieRoot, zeroHash } from "../../../src/chain/header.js";
import { decodeSignedTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { decodeBlockAhead } from "../../../src/node/blockReadAhead.js";
import { RecoveryOffload } from "../../../src/node/recoveryOffload.js";

const common = createExecutionRules(33n);
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

function header(number: bigint, extraData: Uint8Array): BlockHeader {
  return new BlockHeader({
    parentHash: zeroHash, unclesHash: emptyListHash, coinbase: new Uint8Array(20), stateRoot: emptyTrieRoot, transactionsRoot: emptyTrieRoot,
    receiptsRoot: emptyTrieRoot, logsBloom: emptyBloom, difficulty: 3n, number, gasLimit: 10_000_000n, gasUsed: 0n, timestamp: 1n, extraData,
    paidFees: 0n, minimumGasPrice: 0n, uncleCount: 1, mergedMiningHeader: emptyBytes, mergedMiningMerkleProof: emptyBytes, mergedMiningCoinbaseTransaction: emptyBytes,
  });
}

function signedRaw(seed: number, nonce: bigint): Uint8Array {
  const key = keccak_256(new TextEncoder().encode(`key ${seed}`));
  return createLegacyTx({ nonce, gasLimit: 30_000n, gasPrice: 1n, to: new Address(new Uint8Array(20).fill(seed)), value: BigInt(seed) }, { common }).sign(key).serialize();
}

/** The wire form of a block holding `raws` (RLP-encoded items, or byte strings for a typed transaction) and an uncle. */
function blockBytes(raws: readonly Uint8Array[]): Uint8Array {
  const items = raws.map((raw) => (raw[0]! >= 0xc0 ? RLP.decode(raw) : raw));
  return RLP.encode([RLP.decode(header(2n, new Uint8Array(4)).encoded), items, [RLP.decode(header(1n, new Uint8Array(8)).encoded)]] as never);
}

/** What decoding gives, as text: the block's hash, senders and transaction hashes, or the refusal. */
function outcome(decode: () => Block): string {
  try {
    const block = decode();
    return JSON.stringify({ hash: hex(block.hash), senders: block.transactions.map((transaction) => hex(transaction.sender)), hashes: block.transactions.map((transaction) => hex(transaction.hash)), uncles: block.uncles.map((uncle) => hex(uncle.hash)) });
  } catch (error) {
    if (!(error instanceof MalformedBlockError)) throw error;
    return `refused: ${error.message}`;
  }
}

describe("node/blockReadAhead", function () {
  this.timeout(20_000);
  let offload: RecoveryOffload;
  before(async () => {
    offload = new RecoveryOffload(createLogger("error"));
    offload.recoverAhead(decodeSignedTransaction(signedRaw(1, 0n), common).signature)?.release(); // starts the worker
    expect(await offload.ready, "the worker serves").to.equal(true);
  });
  after(async () => {
    await offload.close();
  });

  it("gives the block Block.decode gives, senders recovered on the worker or on this thread", () => {
    const bytes = blockBytes(Array.from({ length: 30 }, (_, index) => signedRaw(index + 1, BigInt(index))));
    const expected = outcome(() => Block.decode(bytes, common));
    expect(expected).to.not.match(/^refused/);
    expect(outcome(() => decodeBlockAhead(bytes, common, offload).finish())).to.equal(expected);
    expect(outcome(() => decodeBlockAhead(bytes, common, undefined).finish())).to.equal(expected);
    expect(offload.recoveryCounts.byWorker, "recoveries on the worker").to.be.above(0);
  });

  it("refuses what Block.decode refuses, with its message: a signature without a signer, a typed transaction, a broken header, not RLP", () => {
    const good = signedRaw(3, 0n);
    const fields = RLP.decode(good) as Uint8Array[];
    let noSigner: Uint8Array | undefined;
    // The smallest r that is no point's x coordinate: a signature without a signer.
    for (let x = 1; noSigner === undefined && x < 100; x++) {
      const candidate = RLP.encode([...fields.slice(0, 7), Uint8Array.of(x), fields[8]!]);
      if (outcome(() => Block.decode(blockBytes([good, candidate]), common)).includes("signature")) noSigner = candidate;
    }
    expect(noSigner, "a signature without a signer").to.not.equal(undefined);
    const headerBroken = RLP.encode([[new Uint8Array(3)], [], []]);
    for (const bytes of [blockBytes([good, noSigner!]), blockBytes([good, Uint8Array.from([0x01, 0x02])]), headerBroken, Uint8Array.from([0xc3, 0x80]), RLP.encode([[], []])]) {
      const expected = outcome(() => Block.decode(bytes, common));
      expect(expected).to.match(/^refused: /);
      for (const recovery of [offload, undefined]) {
        expect(outcome(() => decodeBlockAhead(bytes, common, recovery).finish())).to.equal(expected);
      }
    }
    // Let go unread, the recoveries leave the worker serving the next block.
    decodeBlockAhead(blockBytes([good, signedRaw(4, 0n)]), common, offload).release();
    const next = blockBytes([signedRaw(5, 0n)]);
    expect(outcome(() => decodeBlockAhead(next, common, offload).finish())).to.equal(outcome(() => Block.decode(next, common)));
  });
});
