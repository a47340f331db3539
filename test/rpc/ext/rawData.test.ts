// ext_ raw data: RLP headers that hash to the block hash, raw receipts as the receipts trie commits
// to them, and receipt-trie nodes verified by @ethereumjs/mpt against the header's receiptsRoot.
import { expect } from "chai";
import { verifyMerkleProof } from "@ethereumjs/mpt";
import { decodeRlp, encodeRlp, getBytes, hexlify, keccak256, toBeArray } from "ethers";
import { expectValidResult } from "../../helpers/results.js";
import { startManualNode, type ManualNode } from "../../helpers/manualNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const cow1 = "0x7986b3df570230288501eea3d890bd66948c9b79";
const stranger = "0x00000000000000000000000000000000000000aa";
const missingHash = `0x${"ab".repeat(32)}`;
/** Init code that emits one LOG0 (empty data) and deploys nothing. */
const loggingInitCode = "0x60006000a0";
/** Init code that reverts. */
const revertingInitCode = "0x60006000fd";

/** RLP of a transaction index, the receipts trie's key ("0x80" for 0). */
function indexKey(index: number): Uint8Array {
  return getBytes(encodeRlp(index === 0 ? "0x" : hexlify(toBeArray(index))));
}

function unpadded(quantity: string): string {
  return BigInt(quantity) === 0n ? "0x" : hexlify(toBeArray(BigInt(quantity)));
}

describe("ext_: raw headers, raw receipts and receipt-trie nodes", function () {
  this.timeout(60_000);
  let node: ManualNode;
  /** Hashes of the transactions of block 1, in block order. */
  let hashes: string[];
  let blockHash: string;
  before(async () => {
    node = await startManualNode();
    // 17 transactions, so that indexes 0x80, 0x01..0x0f and 0x10 are all keys of one trie; the
    // pool takes 16 nonces per sender, so the last comes from a second account.
    hashes = [
      await node.client.eth_sendTransaction({ from: cow, data: loggingInitCode, nonce: "0x0" }),
      await node.client.eth_sendTransaction({ from: cow, data: revertingInitCode, nonce: "0x1" }),
    ];
    for (let nonce = 2; nonce < 16; nonce++) hashes.push(await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1", nonce: `0x${nonce.toString(16)}` }));
    hashes.push(await node.client.eth_sendTransaction({ from: cow1, to: stranger, value: "0x1", nonce: "0x0" }));
    const block = await node.mine();
    expect(block.transactions).to.have.length(17);
    blockHash = hexlify(block.hash);
  });
  after(() => node.stop());

  it("serves RLP headers by hash, number, tag and hash-as-block that decode and hash to the block hash", async () => {
    const latest = (await node.client.eth_getBlockByNumber("latest", false))!;
    expect(latest.hash).to.equal(blockHash);
    expectValidResult("eth_getBlockByNumber", latest);
    expect([latest.mixHash, latest.nonce]).to.deep.equal([`0x${"00".repeat(32)}`, "0x0000000000000000"]);
    const byHash = await node.client.ext_getRawBlockHeaderByHash(blockHash);
    expectValidResult("ext_getRawBlockHeaderByHash", byHash);
    expect(keccak256(byHash!)).to.equal(blockHash);
    const fields = decodeRlp(byHash!) as string[];
    expect(fields[0]).to.equal(latest.parentHash);
    expect(fields[3]).to.equal(latest.stateRoot);
    expect(fields[4]).to.equal(latest.transactionsRoot);
    expect(fields[5]).to.equal(latest.receiptsRoot);
    expect(BigInt(fields[8]!)).to.equal(1n);
    for (const selector of ["0x1", "latest", "pending", blockHash]) {
      const raw = await node.client.ext_getRawBlockHeaderByNumber(selector);
      expectValidResult("ext_getRawBlockHeaderByNumber", raw);
      expect(raw, selector).to.equal(byHash);
    }
    const genesis = (await node.client.eth_getBlockByNumber("earliest", false))!;
    expect(keccak256((await node.client.ext_getRawBlockHeaderByNumber("earliest"))!)).to.equal(genesis.hash);
    expect(await node.client.ext_getRawBlockHeaderByNumber("0x0")).to.equal(await node.client.ext_getRawBlockHeaderByHash(genesis.hash!));
    expect(await node.client.ext_getRawBlockHeaderByNumber("0x2")).to.equal(null);
    expect(await node.client.ext_getRawBlockHeaderByNumber(missingHash)).to.equal(null);
    expect(await node.client.ext_getRawBlockHeaderByHash(missingHash)).to.equal(null);
    expectValidResult("ext_getRawBlockHeaderByHash", null);
  });

  it("serves receipts as the receipts trie commits to them: [status, cumulative gas, bloom, logs, gas used, status]", async () => {
    for (const [index, hash] of hashes.entries()) {
      const raw = await node.client.ext_getRawTransactionReceiptByHash(hash);
      expectValidResult("ext_getRawTransactionReceiptByHash", raw);
      const receipt = (await node.client.eth_getTransactionReceipt(hash))!;
      const [status, cumulativeGasUsed, bloom, logs, gasUsed, lastStatus] = decodeRlp(raw!) as [string, string, string, string[][], string, string];
      const expectedStatus = receipt.status === "0x1" ? "0x01" : "0x";
      expect([status, lastStatus], `receipt ${index}`).to.deep.equal([expectedStatus, expectedStatus]);
      expect(cumulativeGasUsed).to.equal(unpadded(receipt.cumulativeGasUsed));
      expect(gasUsed).to.equal(unpadded(receipt.gasUsed));
      expect(bloom).to.equal(receipt.logsBloom);
      expect(logs.map(([address, topics, data]) => ({ address, topics, data }))).to.deep.equal(receipt.logs.map((log) => ({ address: log.address, topics: log.topics, data: log.data })));
    }
    expect((await node.client.eth_getTransactionReceipt(hashes[0]!))!.logs).to.have.length(1);
    expect((await node.client.eth_getTransactionReceipt(hashes[16]!))!.transactionIndex).to.equal("0x10");
    expect((await node.client.eth_getTransactionReceipt(hashes[1]!))!.status).to.equal("0x0");
    expect(await node.client.ext_getRawTransactionReceiptByHash(missingHash)).to.equal(null);
  });

  it("serves the receipt-trie path, root first, that verifies against the header's receiptsRoot", async () => {
    const receiptsRoot = (await node.client.eth_getBlockByHash(blockHash, false))!.receiptsRoot;
    for (const hash of [hashes[0]!, hashes[1]!, hashes[15]!, hashes[16]!]) {
      const index = Number((await node.client.eth_getTransactionReceipt(hash))!.transactionIndex);
      const nodes = await node.client.ext_getTransactionReceiptNodesByHash(blockHash, hash);
      expectValidResult("ext_getTransactionReceiptNodesByHash", nodes);
      expect(nodes!.length, `index ${index}`).to.be.greaterThan(1);
      expect(keccak256(nodes![0]!)).to.equal(receiptsRoot);
      const proven = await verifyMerkleProof(indexKey(index), nodes!.map((node) => getBytes(node)), { root: getBytes(receiptsRoot) });
      expect(hexlify(proven!)).to.equal(await node.client.ext_getRawTransactionReceiptByHash(hash));
    }
  });

  it("answers null for an unknown block, a transaction not in the block, and one not mined yet", async () => {
    const genesisHash = (await node.client.eth_getBlockByNumber("earliest", false))!.hash!;
    expect(await node.client.ext_getTransactionReceiptNodesByHash(missingHash, hashes[0]!)).to.equal(null);
    expect(await node.client.ext_getTransactionReceiptNodesByHash(genesisHash, hashes[0]!)).to.equal(null);
    expect(await node.client.ext_getTransactionReceiptNodesByHash(blockHash, missingHash)).to.equal(null);
    const waiting = await node.client.eth_sendTransaction({ from: cow, to: stranger, nonce: "0x10" });
    expect(await node.client.ext_getRawTransactionReceiptByHash(waiting)).to.equal(null);
    expect(await node.client.ext_getTransactionReceiptNodesByHash(blockHash, waiting)).to.equal(null);
    expectValidResult("ext_getTransactionReceiptNodesByHash", null);
  });

  it("ext_protocolVersion answers 0x3e, as eth_protocolVersion", async () => {
    const version = await node.client.ext_protocolVersion();
    expectValidResult("ext_protocolVersion", version);
    expect(version).to.equal("0x3e");
    expect(version).to.equal(await node.client.eth_protocolVersion());
  });
});
