// One sender with many transactions in the pool while blocks wait (--no-mining, --block-time): all
// executable ones are taken, whether the node chose the nonces (eth_sendTransaction) or the sender
// signed them (eth_sendRawTransaction); only those behind a nonce gap are bounded; the pool's
// answers, the "pending" reads and the journal across a restart hold them all.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { batchCall } from "../../../generated/client.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const cowWallet = new Wallet(keccak256(toUtf8Bytes("cow")));
const stranger = "0x00000000000000000000000000000000000000aa";
const many = 100;
/** Nonces that may wait behind a gap: the 16 slots from the next executable nonce, less that one. */
const queuedSlots = 15;

function signedTransfer(nonce: number): Promise<string> {
  return cowWallet.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice: 0n, to: stranger, value: 1n });
}

async function sendManyFromCow(node: TestNode): Promise<string[]> {
  const hashes: string[] = [];
  for (let index = 0; index < many; index++) hashes.push(await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1", gas: "0x5208" }));
  return hashes;
}

/** Every hash has a successful receipt; answers their block numbers. */
async function expectMined(node: TestNode, hashes: readonly string[]): Promise<string[]> {
  const receipts = await Promise.all(hashes.map((hash) => node.client.eth_getTransactionReceipt(hash)));
  for (const [index, receipt] of receipts.entries()) expect(receipt?.status, `transaction ${index}`).to.equal("0x1");
  return receipts.map((receipt) => receipt!.blockNumber);
}

async function expectPool(node: TestNode, pending: number, queued: number): Promise<void> {
  expect(await node.client.txpool_status()).to.deep.equal({ pending, queued });
  const content = await node.client.txpool_content();
  const nonces = (section: typeof content.pending) => Object.keys(section[cow.slice(2)] ?? {}).map(Number);
  expect(nonces(content.pending)).to.have.length(pending);
  expect(nonces(content.queued)).to.have.length(queued);
}

describe("txpool: many transactions of one sender without automine", () => {
  let node: TestNode;
  beforeEach(async () => (node = await startTestNode({ chain: { mining: { kind: "off" } } })));
  afterEach(() => node.stop());

  it(`takes ${many} eth_sendTransaction of one account, reads them as pending, and one evm_mine mines them all`, async () => {
    const balanceBefore = BigInt(await node.client.eth_getBalance(cow, "latest"));
    const hashes = await sendManyFromCow(node);
    await expectPool(node, many, 0);
    expect(await node.client.eth_getTransactionCount(cow, "pending")).to.equal(`0x${many.toString(16)}`);
    expect(await node.client.eth_getTransactionCount(cow, "latest")).to.equal("0x0");
    expect(BigInt(await node.client.eth_getBalance(cow, "pending"))).to.equal(balanceBefore - BigInt(many));
    expect(await node.client.eth_getBlockTransactionCountByNumber("pending")).to.equal(`0x${many.toString(16)}`);
    expect((await node.client.eth_getTransactionByHash(hashes[many - 1]!))?.nonce).to.equal(`0x${(many - 1).toString(16)}`);

    expect(await node.client.evm_mine()).to.equal(null);
    expect(new Set(await expectMined(node, hashes))).to.deep.equal(new Set(["0x1"]));
    expect((await node.client.eth_getBlockByNumber("0x1", false))!.transactions).to.deep.equal(hashes);
    await expectPool(node, 0, 0);
    expect(await node.client.eth_getTransactionCount(cow, "latest")).to.equal(`0x${many.toString(16)}`);
  });

  it(`takes ${many} signed transactions of one sender with consecutive nonces, and bounds only those behind a gap to ${queuedSlots}`, async () => {
    const hashes: string[] = [];
    for (let nonce = 0; nonce < many; nonce++) hashes.push(await node.client.eth_sendRawTransaction(await signedTransfer(nonce)));
    await expectPool(node, many, 0);

    // Nonce 100 is the gap: 101 to 115 wait behind it, 116 is one too many.
    const behindGap: string[] = [];
    for (let nonce = many + 1; nonce <= many + queuedSlots; nonce++) behindGap.push(await node.client.eth_sendRawTransaction(await signedTransfer(nonce)));
    await expectRpcError(node.client.eth_sendRawTransaction(await signedTransfer(many + queuedSlots + 1)), -32010, "transaction nonce too high");
    await expectPool(node, many, queuedSlots);
    expect(await node.client.eth_getTransactionCount(cow, "pending")).to.equal(`0x${many.toString(16)}`);

    // The gap filled, all are executable and the slots start after them.
    const gap = await node.client.eth_sendRawTransaction(await signedTransfer(many));
    await expectPool(node, many + 1 + queuedSlots, 0);
    await node.client.evm_mine();
    expect(new Set(await expectMined(node, [...hashes, gap, ...behindGap]))).to.deep.equal(new Set(["0x1"]));
    await expectPool(node, 0, 0);
  });
});

describe("txpool: many transactions of one sender with --block-time", () => {
  let node: TestNode;
  before(async () => (node = await startTestNode({ chain: { mining: { kind: "interval", blockTimeSeconds: 1 } } })));
  after(() => node.stop());

  it(`takes a batch of ${many} eth_sendTransaction of one account and mines them all in nonce order`, async () => {
    const outcomes = await node.client.batch(Array.from({ length: many }, () => batchCall("eth_sendTransaction", { from: cow, to: stranger, value: "0x1", gas: "0x5208" })));
    const hashes = outcomes.map((outcome, index) => {
      if (!outcome.ok) throw new Error(`send ${index} refused: ${outcome.error.code} ${outcome.error.message}`);
      return outcome.result as string;
    });
    const deadline = Date.now() + 10_000;
    while ((await node.client.eth_getTransactionCount(cow, "latest")) !== `0x${many.toString(16)}`) {
      if (Date.now() > deadline) throw new Error("the interval blocks did not take the transactions within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await expectMined(node, hashes);
    const nonces = await Promise.all(hashes.map(async (hash) => (await node.client.eth_getTransactionByHash(hash))!.nonce));
    expect(nonces).to.deep.equal(hashes.map((_, index) => `0x${index.toString(16)}`));
  });
});

describe("txpool: many transactions of one sender across a restart", function () {
  this.timeout(60_000);
  let directory: string;
  before(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-pool-many-"))));
  after(() => rm(directory, { recursive: true, force: true }));

  it(`takes back ${many} pending and ${queuedSlots} queued transactions of one sender from the journal`, async () => {
    const options = { dataDir: directory, chain: { mining: { kind: "off" as const } } };
    let node = await startTestNode(options);
    let hashes: string[];
    try {
      hashes = await sendManyFromCow(node);
      for (let nonce = many + 1; nonce <= many + queuedSlots; nonce++) hashes.push(await node.client.eth_sendRawTransaction(await signedTransfer(nonce)));
      await expectPool(node, many, queuedSlots);
    } finally {
      await node.stop();
    }
    node = await startTestNode(options);
    try {
      await expectPool(node, many, queuedSlots);
      hashes.push(await node.client.eth_sendRawTransaction(await signedTransfer(many)));
      await node.client.evm_mine();
      await expectMined(node, hashes);
      await expectPool(node, 0, 0);
    } finally {
      await node.stop();
    }
  });
});
