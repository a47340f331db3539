// Merged mining for pools (issue 37): a node started with --miner external makes no block itself;
// a pool takes mnr_getWork's template, builds a real parent-chain block around it with bitcoinjs-lib
// (a segwit coinbase paying several outputs, the commitment in an OP_RETURN output last, other
// transactions), searches the header's nonce at a difficulty where it takes thousands of tries,
// and submits it in each of the three forms, and through eth_submitWork. Every block becomes the
// head, and a second data dir importing the exported chain accepts each. Every refusal answers its
// code and message and leaves the chain as it was.
import { expect } from "chai";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import type { RpcClient } from "../../../generated/client.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { createLogger } from "../../../src/common/logger.js";
import { encodeParentHeader, sha256d } from "../../../src/consensus/parentChain.js";
import { exportChain, importChain } from "../../../src/node/chainTransfer.js";
import { minePoolBlock, opReturnScript, type PoolBlock } from "../../helpers/parentChainProofs.js";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
const cow = new Wallet(cowKey);
const stranger = "0x00000000000000000000000000000000000000aa";
/** Enough that a nonce takes thousands of tries (the difficulty rule raises it from there). */
const genesisDifficulty = 4096n;
const unprefixed = (hex: string) => hex.replace(/^0x/, "");
const ascii = (hex: string) => Buffer.from(unprefixed(hex), "hex").toString("ascii");

interface Work {
  hashForMergedMining: Uint8Array;
  target: bigint;
  parentBlockHash: string;
  notify: boolean;
  feesPaidToMiner: string;
}

async function getWork(client: RpcClient): Promise<Work> {
  const work = await client.mnr_getWork();
  expectValidResult("mnr_getWork", work);
  return {
    hashForMergedMining: Buffer.from(unprefixed(work.blockHashForMergedMining), "hex"),
    target: BigInt(work.target),
    parentBlockHash: work.parentBlockHash,
    notify: work.notify,
    feesPaidToMiner: work.feesPaidToMiner,
  };
}

async function headNumber(client: RpcClient): Promise<bigint> {
  return BigInt(await client.eth_blockNumber());
}

let nextNonce = 0;
async function sendTransfers(client: RpcClient, count: number): Promise<string[]> {
  const hashes: string[] = [];
  for (let index = 0; index < count; index++) {
    const raw = await cow.signTransaction({ type: 0, to: stranger, value: 1n, gasLimit: 21_000n, gasPrice: 0n, nonce: nextNonce++, chainId: 33n });
    hashes.push(await client.eth_sendRawTransaction(raw));
  }
  return hashes;
}

function poolBlockFor(work: Work, otherTransactions = 5, seed = 1): PoolBlock {
  return minePoolBlock({ hashForMergedMining: work.hashForMergedMining, target: work.target, otherTransactions, seed });
}

describe("mnr_: merged mining for pools (--miner external)", function () {
  this.timeout(120_000);
  let directory: string;
  let genesisFile: string;
  let node: TestNode;

  async function startNode(chain: Record<string, unknown> = {}): Promise<TestNode> {
    return startTestNode({ dataDir: join(directory, `data-${Math.random().toString(16).slice(2)}`), chain: { genesisFile, miner: "external", mining: { kind: "off" }, ...chain } });
  }

  beforeEach(async () => {
    nextNonce = 0;
    directory = await mkdtemp(join(tmpdir(), "chain-node-mnr-"));
    genesisFile = join(directory, "genesis.json");
    await writeFile(genesisFile, JSON.stringify({ difficulty: genesisDifficulty.toString(), timestamp: String(Math.floor(Date.now() / 1000)), alloc: { [cow.address]: { balance: "1000000000000000000000" } } }));
    node = await startNode();
  });
  afterEach(async () => {
    await node.stop();
    await rm(directory, { recursive: true, force: true });
  });

  it("mines a block through each of the three submissions and eth_submitWork; another data dir imports them", async () => {
    const client = node.client;
    const submitted: string[] = [];
    const expectImportedBest = async (answer: Promise<{ blockImportedResult: string; blockHash: string; blockIncludedHeight: string }>, method: string) => {
      const info = await answer;
      expectValidResult(method, info);
      expect(ascii(info.blockImportedResult), method).to.equal("IMPORTED_BEST");
      const head = await client.eth_getBlockByNumber("latest", false);
      expect(head!.hash, method).to.equal(info.blockHash);
      expect(head!.number).to.equal(info.blockIncludedHeight);
      submitted.push(info.blockHash);
      return head!;
    };

    // 1: a whole block; the pending transfers go into it.
    const pending = await sendTransfers(client, 3);
    let work = await getWork(client);
    expect(work.notify).to.equal(true);
    // A header meets it once in 4,096 tries or more on average.
    expect(work.target <= (1n << 256n) / genesisDifficulty).to.equal(true);
    const first = poolBlockFor(work, 6, 1);
    const firstHead = await expectImportedBest(client.mnr_submitParentBlock(first.blockHex), "mnr_submitParentBlock");
    expect(firstHead.transactions).to.deep.equal(pending);
    expect(await client.txpool_status()).to.deep.equal({ pending: 0, queued: 0 });
    const receipt = await client.eth_getTransactionReceipt(pending[0]!);
    expect(receipt!.blockHash).to.equal(firstHead.hash);

    // 2: header, coinbase and every txid (display order), prefixed with 0x this time.
    work = await getWork(client);
    expect(work.notify, "a new parent").to.equal(true);
    expect(work.parentBlockHash).to.equal(firstHead.hash);
    const second = poolBlockFor(work, 4, 2);
    await expectImportedBest(client.mnr_submitParentBlockTransactions(`0x${"00".repeat(32)}`, `0x${second.headerHex}`, `0x${second.coinbaseHex}`, second.txidsDisplayHex.map((txid) => `0x${txid}`).join(" ")), "mnr_submitParentBlockTransactions");

    // 3: header, coinbase and its merkle branch, as a stratum pool holds them. The work was built
    // when block 2 came: transfers sent now wait for the next template (no --update-work-on-new-transaction).
    work = await getWork(client);
    const late = await sendTransfers(client, 2);
    const third = poolBlockFor(work, 7, 3);
    const thirdHead = await expectImportedBest(
      client.mnr_submitParentBlockPartialMerkle("00".repeat(32), third.headerHex, third.coinbaseHex, third.merkleHashesHex.join("\n"), third.transactionCount.toString(16)),
      "mnr_submitParentBlockPartialMerkle",
    );
    expect(thirdHead.transactions).to.deep.equal([]);

    // 4: eth_getWork / eth_submitWork, as openrpc.json describes the mapping.
    const [powHash, merkleRoot, target] = await client.eth_getWork();
    expectValidResult("eth_getWork", [powHash, merkleRoot, target]);
    const solution = solveLegacyWork(Buffer.from(unprefixed(merkleRoot!), "hex"), BigInt(target!));
    expect(await client.eth_submitWork(`0x${solution.nonce.toString(16).padStart(16, "0")}`, powHash!, `0x${"00".repeat(32)}`), "a wrong mixDigest").to.equal(false);
    expect(await headNumber(client)).to.equal(3n);
    expect(await client.eth_submitWork(`0x${solution.nonce.toString(16).padStart(16, "0")}`, powHash!, `0x${Buffer.from(solution.mixDigest).toString("hex")}`)).to.equal(true);
    expect(await headNumber(client)).to.equal(4n);
    const fourth = await client.eth_getBlockByNumber("0x4", false);
    submitted.push(fourth!.hash!);
    expect(fourth!.hashForMergedMining).to.equal(powHash);
    expect(fourth!.transactions).to.deep.equal(late);

    // Another data dir takes the four blocks through the one import path.
    const from = node.node.location;
    await node.stop();
    const network = findNetworkProfile(33)!;
    const file = join(directory, "chain.rlp");
    const quiet = createLogger("error");
    await exportChain({ network, dataDir: from, genesisFile, file, from: undefined, to: undefined, force: false }, quiet);
    const target2 = join(directory, "imported");
    const report = await importChain({ network, dataDir: target2, genesisFile, file }, quiet);
    expect(report.imported).to.equal(4);
    expect(Buffer.from(report.headAfter.hash).toString("hex")).to.equal(unprefixed(submitted[3]!));
    node = await startNode();
  });

  it("refuses stale work, a missing tag, a hash above the target, a wrong branch or transaction count, malformed hex and a truncated block; nothing changes", async () => {
    const client = node.client;
    const work = await getWork(client);
    const good = poolBlockFor(work, 5, 7);
    const unchanged = async () => {
      expect(await headNumber(client)).to.equal(0n);
      expect(await client.eth_getBlockByNumber("latest", false).then((block) => block!.hash)).to.equal(work.parentBlockHash);
    };
    const hashHex = Buffer.from(work.hashForMergedMining).toString("hex");

    // No tag in the coinbase: no template to find.
    const untagged = minePoolBlock({ hashForMergedMining: work.hashForMergedMining, target: work.target, otherTransactions: 2, commitmentScripts: [opReturnScript(new Uint8Array(41))] });
    await expectRpcError(client.mnr_submitParentBlock(untagged.blockHex), -33000, "Cannot publish block, could not find hash (none: the coinbase has no RSKBLOCK: tag followed by 32 bytes) in the cache");
    // A tag naming no template.
    const unknown = minePoolBlock({ hashForMergedMining: new Uint8Array(32).fill(7), target: work.target, otherTransactions: 2 });
    await expectRpcError(client.mnr_submitParentBlock(unknown.blockHex), -33000, `Cannot publish block, could not find hash 0x${"07".repeat(32)} in the cache`);
    // The header's hash above the target.
    const missed = minePoolBlock({ hashForMergedMining: work.hashForMergedMining, target: work.target, otherTransactions: 3, missTarget: true });
    await expectRpcError(client.mnr_submitParentBlock(missed.blockHex), -33000, new RegExp(`^Invalid block supplied by miner: [0-9a-f]{6} ${hashHex.slice(0, 6)} at height 1: parent-chain header hash [0-9a-f]{64} above the target`));
    // A branch that leads elsewhere.
    const wrongBranch = [...good.merkleHashesHex];
    wrongBranch[1] = "ab".repeat(32);
    await expectRpcError(
      client.mnr_submitParentBlockPartialMerkle("00".repeat(32), good.headerHex, good.coinbaseHex, wrongBranch.join(" "), good.transactionCount.toString(16)),
      -33000,
      /^Invalid block supplied by miner: .* at height 1: coinbase [0-9a-f]{64} and merkle proof lead to root [0-9a-f]{64}, not the header's [0-9a-f]{64}$/,
    );
    // A transaction list missing one: another root.
    await expectRpcError(client.mnr_submitParentBlockTransactions("00".repeat(32), good.headerHex, good.coinbaseHex, good.txidsDisplayHex.slice(0, -1).join(" ")), -33000, /merkle proof lead to root/);
    // A count the branch does not fit.
    await expectRpcError(
      client.mnr_submitParentBlockPartialMerkle("00".repeat(32), good.headerHex, good.coinbaseHex, good.merkleHashesHex.join(" "), (good.transactionCount * 4).toString(16)),
      -32602,
      "invalid argument 4: blockTxnCountHex: a parent block of 24 transactions has a coinbase merkle branch of 5 hashes, but the branch holds 3",
    );
    await expectRpcError(client.mnr_submitParentBlockPartialMerkle("00".repeat(32), good.headerHex, good.coinbaseHex, "", "6"), -33000, "The list of merkle hashes can't be empty");
    // Malformed hex: the schema names the parameter.
    await expectRpcError(client.mnr_submitParentBlock(`${good.blockHex}0`), -32602, /^invalid argument 0: /);
    await expectRpcError(client.mnr_submitParentBlock(`zz${good.blockHex}`), -32602, /^invalid argument 0: /);
    await expectRpcError(client.mnr_submitParentBlockTransactions("00".repeat(32), good.headerHex.slice(2), good.coinbaseHex, good.txidsDisplayHex.join(" ")), -32602, /^invalid argument 1: /);
    await expectRpcError(client.mnr_submitParentBlockTransactions("00".repeat(32), good.headerHex, good.coinbaseHex, "12 34"), -32602, /^invalid argument 3: /);
    // Bytes that do not parse: a truncated block, a coinbase with bytes after it.
    await expectRpcError(client.mnr_submitParentBlock(good.blockHex.slice(0, -20)), -32602, /^invalid argument 0: parentBlockHex: not a parent-chain block: /);
    await expectRpcError(client.mnr_submitParentBlockPartialMerkle("00".repeat(32), good.headerHex, `${good.coinbaseHex}00`, good.merkleHashesHex.join(" "), "6"), -32602, "invalid argument 2: coinbaseHex: 1 bytes after its transaction");
    await unchanged();

    // The good block, unprefixed, still goes in.
    const info = await client.mnr_submitParentBlock(good.blockHex);
    expect(ascii(info.blockImportedResult)).to.equal("IMPORTED_BEST");
    // Sent again: the block is there already.
    const again = await client.mnr_submitParentBlockPartialMerkle("00".repeat(32), good.headerHex, good.coinbaseHex, good.merkleHashesHex.join(" "), good.transactionCount.toString(16));
    expect(ascii(again.blockImportedResult)).to.equal("EXIST");
    expect(await headNumber(client)).to.equal(1n);
  });

  it("hands out work with notify once per parent; keeps the last 20 templates", async () => {
    await node.stop();
    node = await startNode({ mergedMining: { updateWorkOnNewTransaction: true, submissionRateLimitMs: 0 } });
    const client = node.client;
    const first = await getWork(client);
    expect(first.notify).to.equal(true);
    expect((await getWork(client)).notify).to.equal(false);
    // Each new pending transaction makes a new template on the same parent: notify stays false.
    const templates = [first];
    for (let index = 0; index < 20; index++) {
      await sendTransfers(client, 1);
      let work = await getWork(client);
      for (let tries = 0; tries < 50 && templates.some((known) => Buffer.compare(known.hashForMergedMining, work.hashForMergedMining) === 0); tries++) work = await getWork(client);
      expect(work.notify).to.equal(false);
      expect(BigInt(work.feesPaidToMiner)).to.equal(0n);
      templates.push(work);
    }
    // 21 templates: the first is gone, the second still there.
    const stale = poolBlockFor(templates[0]!, 2, 11);
    await expectRpcError(client.mnr_submitParentBlock(stale.blockHex), -33000, `Cannot publish block, could not find hash 0x${Buffer.from(templates[0]!.hashForMergedMining).toString("hex")} in the cache`);
    expect(await headNumber(client)).to.equal(0n);
    const oldest = poolBlockFor(templates[1]!, 2, 12);
    const info = await client.mnr_submitParentBlock(oldest.blockHex);
    expect(ascii(info.blockImportedResult)).to.equal("IMPORTED_BEST");
    expect((await client.eth_getBlockByNumber("0x1", false))!.transactions).to.have.length(1);
    const next = await getWork(client);
    expect(next.notify, "the parent changed").to.equal(true);
    expect(next.parentBlockHash).to.equal(info.blockHash);
    expect((await getWork(client)).notify).to.equal(false);
  });

  it("limits the submission rate when asked", async () => {
    await node.stop();
    node = await startNode({ mergedMining: { updateWorkOnNewTransaction: false, submissionRateLimitMs: 60_000 } });
    const client = node.client;
    const block = poolBlockFor(await getWork(client), 2, 21);
    expect(ascii((await client.mnr_submitParentBlock(block.blockHex)).blockImportedResult)).to.equal("IMPORTED_BEST");
    const next = poolBlockFor(await getWork(client), 2, 22);
    await expectRpcError(client.mnr_submitParentBlock(next.blockHex), -33000, "Cannot publish block, block submission rate limit exceeded");
    expect(await headNumber(client)).to.equal(1n);
  });

  it("mines nothing by itself for 10 s of sends; the dev methods that mine refuse; a submission then takes the pending transactions", async () => {
    const client = node.client;
    expect(await client.eth_mining()).to.equal(false);
    const sent: string[] = [];
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      sent.push(...(await sendTransfers(client, 5)));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await headNumber(client)).to.equal(0n);
    expect(sent.length).to.be.greaterThan(100);
    const refusal = /: this node's blocks come only from merged miners \(--miner external\)/;
    await expectRpcError(client.evm_mine(), -32000, refusal);
    await expectRpcError(client.evm_setAutomine(true), -32000, refusal);
    await expectRpcError(client.evm_setIntervalMining(1), -32000, refusal);
    await expectRpcError(client.evm_startMining(), -32000, refusal);
    await expectRpcError(client.anvil_setBalance(stranger, "0x1"), -32000, refusal);
    expect(await headNumber(client)).to.equal(0n);

    const info = await client.mnr_submitParentBlock(poolBlockFor(await getWork(client), 3, 31).blockHex);
    expect(ascii(info.blockImportedResult)).to.equal("IMPORTED_BEST");
    const mined = await client.eth_getBlockByHash(info.blockHash, false);
    expect(mined!.transactions).to.deep.equal(sent);
  });

  it("reports hash rates: the network's from the best chain's difficulties, reported rates in eth_hashrate", async () => {
    const client = node.client;
    // Only genesis in the last hour so far.
    expect(await client.eth_netHashrate()).to.equal(Number(genesisDifficulty / 3600n));
    expect(await client.eth_hashrate()).to.equal("0x0");
    const info = await client.mnr_submitParentBlock(poolBlockFor(await getWork(client), 1, 41).blockHex);
    const mined = await client.eth_getBlockByHash(info.blockHash, false);
    expect(BigInt(mined!.difficulty!) >= genesisDifficulty, "the difficulty rule raises it").to.equal(true);
    expect(await client.eth_netHashrate()).to.equal(Number((genesisDifficulty + BigInt(mined!.difficulty!)) / 3600n));
    expect(await client.eth_submitHashrate(`0x${(5_000_000).toString(16).padStart(64, "0")}`, `0x${"ab".repeat(32)}`)).to.equal(true);
    expect(await client.eth_submitHashrate(`0x${(1_000_000).toString(16).padStart(64, "0")}`, `0x${"cd".repeat(32)}`)).to.equal(true);
    // The built-in miner does not run: only the reports count.
    expect(BigInt(await client.eth_hashrate())).to.equal(6_000_000n);
    // A newer report of the same miner replaces its first.
    await client.eth_submitHashrate(`0x${(2_000_000).toString(16).padStart(64, "0")}`, `0x${"ab".repeat(32)}`);
    expect(BigInt(await client.eth_hashrate())).to.equal(3_000_000n);
  });
});

describe("mining with --miner builtin: hash rates and a pool beside the built-in miner", function () {
  this.timeout(60_000);

  it("counts the built-in miner's blocks in eth_hashrate, and takes a pool's block too", async () => {
    nextNonce = 0;
    const directory = await mkdtemp(join(tmpdir(), "chain-node-mnr-"));
    const genesisFile = join(directory, "genesis.json");
    await writeFile(genesisFile, JSON.stringify({ difficulty: genesisDifficulty.toString(), timestamp: String(Math.floor(Date.now() / 1000)), alloc: { [cow.address]: { balance: "1000000000000000000000" } } }));
    const node = await startTestNode({ chain: { genesisFile } });
    try {
      const client = node.client;
      expect(await client.eth_mining()).to.equal(true);
      await sendTransfers(client, 2);
      const blocks = await Promise.all([1, 2].map((number) => client.eth_getBlockByNumber(`0x${number}`, false)));
      const mined = blocks.reduce((sum, block) => sum + BigInt(block!.difficulty!), 0n);
      // The genesis pays no coinbase of this node's: only the two mined blocks count.
      expect(BigInt(await client.eth_hashrate())).to.equal(mined / 3600n);
      expect(await client.eth_netHashrate()).to.equal(Number((genesisDifficulty + mined) / 3600n));
      const info = await client.mnr_submitParentBlock(poolBlockFor(await getWork(client), 2, 51).blockHex);
      expect(ascii(info.blockImportedResult)).to.equal("IMPORTED_BEST");
      expect(await headNumber(client)).to.equal(3n);
      // Automine goes on from the pool's block.
      await sendTransfers(client, 1);
      expect(await headNumber(client)).to.equal(4n);
      expect((await client.eth_getBlockByNumber("0x4", false))!.parentHash).to.equal(info.blockHash);
    } finally {
      await node.stop();
      await rm(directory, { recursive: true, force: true });
    }
  });
});

/**
 * A miner written from openrpc.json's description of eth_getWork: nonces n until the byte-reversed
 * double SHA-256 of the header they make is at most the target.
 */
function solveLegacyWork(merkleRoot: Uint8Array, target: bigint): { nonce: bigint; mixDigest: Uint8Array } {
  const time = 1_750_000_000n;
  for (let low = 0n; ; low++) {
    const nonce = (time << 32n) | low;
    const header = encodeParentHeader({ version: 0x20000000, prevHash: new Uint8Array(32), merkleRoot, time: Number(time), bits: 0x207fffff, nonce: Number(low) });
    const mixDigest = sha256d(header).reverse();
    if (BigInt(`0x${Buffer.from(mixDigest).toString("hex")}`) <= target) return { nonce, mixDigest };
  }
}
