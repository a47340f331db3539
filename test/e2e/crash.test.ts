// kill -9 at random moments while transactions are being mined: after a restart on the same data
// dir, every transaction whose hash was returned (automine: it was in a written block) is there,
// with its block, and the head is consistent. CHAIN_NODE_LONG_TESTS=1 runs 20 kills instead of 3.
// And kill -9 while transactions wait in the pool: they are back in it after the restart.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { RpcClient } from "../../generated/client.js";
import { startNodeProcess } from "../helpers/nodeProcess.js";

const kills = process.env.CHAIN_NODE_LONG_TESTS === "1" ? 20 : 3;
const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const recipient = "0x00000000000000000000000000000000000000bb";

describe("crash safety: kill -9 while mining", function () {
  this.timeout(30_000 + kills * 15_000);
  let directory: string;
  before(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-crash-"))));
  after(() => rm(directory, { recursive: true, force: true }));

  it(`keeps every returned block and receipt across ${kills} kills`, async () => {
    const returned: string[] = [];
    for (let round = 0; round < kills; round++) {
      const node = await startNodeProcess(["--port", "0", "--data-dir", directory]);
      const client = new RpcClient(node.url, { timeoutMs: 5_000 });
      const killAt = Date.now() + 150 + Math.floor(Math.random() * 600);
      const sender = (async () => {
        for (;;) {
          try {
            returned.push(await client.eth_sendTransaction({ from: cow, to: recipient, value: "0x1" }));
          } catch {
            return; // the node is gone
          }
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, killAt - Date.now()));
      await node.stop("SIGKILL");
      await sender;
    }
    expect(returned.length).to.be.greaterThan(kills);

    const node = await startNodeProcess(["--port", "0", "--data-dir", directory]);
    try {
      const client = new RpcClient(node.url, { timeoutMs: 10_000 });
      const head = BigInt(await client.eth_blockNumber());
      expect(head >= BigInt(returned.length)).to.equal(true);
      for (const hash of returned) {
        const receipt = await client.eth_getTransactionReceipt(hash);
        expect(receipt, hash).to.not.equal(null);
        const block = await client.eth_getBlockByNumber(receipt!.blockNumber, false);
        expect(block!.hash).to.equal(receipt!.blockHash);
        expect(block!.transactions).to.include(hash);
      }
      const headBlock = await client.eth_getBlockByNumber("latest", false);
      expect(BigInt(headBlock!.number!)).to.equal(head);
      expect(BigInt(await client.eth_getBalance(recipient, "latest"))).to.equal(head);
      expect(BigInt(await client.eth_getTransactionCount(cow, "latest"))).to.equal(head);
    } finally {
      await node.stop();
    }
  });
});

describe("crash safety: kill -9 with transactions waiting in the pool", function () {
  this.timeout(60_000);
  const cow1 = new Wallet(keccak256(toUtf8Bytes("cow1")));
  const signedByCow1 = (nonce: number) => cow1.signTransaction({ type: 0, chainId: 33n, nonce, gasPrice: 0n, gasLimit: 21_000n, to: recipient, value: 1n });
  let directory: string;
  before(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-pool-crash-"))));
  after(() => rm(directory, { recursive: true, force: true }));

  it("takes back every transaction a send answered for, in its place, and mines it", async () => {
    // Mining off: cow's two transactions pending, cow1's nonce 1 queued behind a gap.
    let node = await startNodeProcess(["--port", "0", "--data-dir", directory, "--no-mining"]);
    let client = new RpcClient(node.url, { timeoutMs: 5_000 });
    const first = await client.eth_sendTransaction({ from: cow, to: recipient, value: "0x1" });
    const second = await client.eth_sendTransaction({ from: cow, to: recipient, value: "0x1" });
    const gapped = await client.eth_sendRawTransaction(await signedByCow1(1));
    await node.stop("SIGKILL");

    node = await startNodeProcess(["--port", "0", "--data-dir", directory, "--no-mining"]);
    client = new RpcClient(node.url, { timeoutMs: 5_000 });
    expect(await client.txpool_status()).to.deep.equal({ pending: 2, queued: 1 });
    expect((await client.eth_getTransactionByHash(second))?.blockNumber).to.equal(null);
    const third = await client.eth_sendTransaction({ from: cow, to: recipient, value: "0x1" });
    expect(await client.eth_getTransactionCount(cow, "pending")).to.equal("0x3");
    // A revert takes a transaction out of the pool for good.
    const snapshot = await client.evm_snapshot();
    const reverted = await client.eth_sendTransaction({ from: cow, to: recipient, value: "0x2" });
    expect(await client.evm_revert(snapshot)).to.equal(true);
    await node.stop("SIGKILL");

    // Automine: what the pool takes back is mined at start (while the node already answers); the
    // queued one waits for its gap.
    node = await startNodeProcess(["--port", "0", "--data-dir", directory]);
    try {
      client = new RpcClient(node.url, { timeoutMs: 5_000 });
      for (let poll = 0; poll < 100 && (await client.txpool_status()).pending > 0; poll++) await new Promise((resolve) => setTimeout(resolve, 50));
      const receipts = await Promise.all([first, second, third].map((hash) => client.eth_getTransactionReceipt(hash)));
      expect(receipts.map((receipt) => receipt?.status)).to.deep.equal(["0x1", "0x1", "0x1"]);
      expect(receipts.map((receipt) => Number(receipt!.blockNumber))).to.deep.equal([1, 2, 3]);
      expect(await client.txpool_status()).to.deep.equal({ pending: 0, queued: 1 });
      expect(await client.eth_getTransactionByHash(reverted)).to.equal(null);
      await client.eth_sendRawTransaction(await signedByCow1(0));
      expect((await client.eth_getTransactionReceipt(gapped))?.status).to.equal("0x1");
      expect(await client.txpool_status()).to.deep.equal({ pending: 0, queued: 0 });
    } finally {
      await node.stop();
    }
  });
});
