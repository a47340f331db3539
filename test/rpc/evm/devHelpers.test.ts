// The anvil_/hardhat_ test helpers and the new evm_ methods over real HTTP: each under both names,
// state edits visible at "latest" at once and gone after evm_revert, impersonated sends (also across
// a restart from the pool's journal), and each bad input's error, after which nothing changed.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const stranger = "0x00000000000000000000000000000000000000aa";
const other = "0x00000000000000000000000000000000000000bb";
const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const word = (value: number) => `0x${value.toString(16).padStart(64, "0")}`;

describe("anvil_/hardhat_ test helpers and evm_ mining controls over HTTP", function () {
  this.timeout(60_000);
  let node: TestNode;
  const rawCall = (method: string, ...params: unknown[]) => (node.client.call as (name: string, ...values: unknown[]) => Promise<unknown>)(method, ...params);
  const head = async () => (await node.client.eth_getBlockByNumber("latest", false))!;

  beforeEach(async () => {
    node = await startTestNode();
  });
  afterEach(async () => {
    await node.stop();
  });

  it("sets balance, code, storage and nonce under both names: seen at latest at once, the block before unchanged, gone after evm_revert", async () => {
    const id = await node.client.evm_snapshot();
    const before = await head();
    expect(await rawCall("anvil_setBalance", stranger, "0xde0b6b3a7640000")).to.equal(null);
    expect(await rawCall("hardhat_setCode", stranger, "0x600160005260206000f3")).to.equal(true);
    expect(await rawCall("anvil_setStorageAt", stranger, "0x0", word(0x69))).to.equal(null);
    expect(await rawCall("hardhat_setNonce", stranger, "0xa")).to.equal(true);
    expect(await node.client.eth_getBalance(stranger, "latest")).to.equal("0xde0b6b3a7640000");
    expect(await node.client.eth_getCode(stranger, "latest")).to.equal("0x600160005260206000f3");
    expect(await node.client.eth_getStorageAt(stranger, "0x0", "latest")).to.equal(word(0x69));
    expect(await node.client.eth_getTransactionCount(stranger, "latest")).to.equal("0xa");
    // A call runs the new code on the new state.
    expect(await node.client.eth_call({ to: stranger }, "latest")).to.equal(word(1));
    // Each edit is one dev block, with the parent's timestamp and no transaction.
    const after = await head();
    expect(BigInt(after.number!) - BigInt(before.number!)).to.equal(4n);
    expect(after.timestamp).to.equal(before.timestamp);
    expect(after.transactions).to.deep.equal([]);
    expect(await node.client.eth_getBalance(stranger, before.number!)).to.equal("0x0");
    // Later edits of the same account keep the others; a zero value clears a slot.
    expect(await rawCall("hardhat_setStorageAt", stranger, word(0), word(0))).to.equal(true);
    expect(await node.client.eth_getStorageAt(stranger, "0x0", "latest")).to.equal(word(0));
    expect(await node.client.eth_getCode(stranger, "latest")).to.equal("0x600160005260206000f3");

    expect(await node.client.evm_revert(id)).to.equal(true);
    expect((await head()).hash).to.equal(before.hash);
    expect(await node.client.eth_getBalance(stranger, "latest")).to.equal("0x0");
    expect(await node.client.eth_getCode(stranger, "latest")).to.equal("0x");
    expect(await node.client.eth_getTransactionCount(stranger, "latest")).to.equal("0x0");
  });

  it("answers bad input to the account edits with -32602 and changes nothing", async () => {
    const before = await head();
    await expectRpcError(rawCall("anvil_setBalance", "0x1234", "0x1"), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("hardhat_setBalance", stranger, "1000"), -32602, /^invalid argument 1: /);
    await expectRpcError(rawCall("anvil_setBalance", stranger), -32602, /^missing value for required argument 1/);
    await expectRpcError(rawCall("anvil_setCode", stranger, "0x123"), -32602, /^invalid argument 1: /);
    await expectRpcError(rawCall("hardhat_setStorageAt", stranger, "0x0", "0x69"), -32602, /^invalid argument 2: /);
    await expectRpcError(rawCall("anvil_setStorageAt", stranger, "slot", word(1)), -32602, /^invalid argument 1: /);
    await expectRpcError(rawCall("anvil_setNonce", stranger, "0xffffffffffffffff"), -32602, "invalid argument 1: nonce must be at most 18446744073709551614, got 18446744073709551615");
    await expectRpcError(rawCall("hardhat_setNonce", stranger, "0x10000000000000000"), -32602, /^invalid argument 1: /);
    expect((await head()).hash).to.equal(before.hash);
    expect(await node.client.eth_getTransactionCount(stranger, "latest")).to.equal("0x0");
  });

  it("sends from an impersonated account without its key: the right sender, a stable hash; stopping ends it", async () => {
    await expectRpcError(node.client.eth_sendTransaction({ from: stranger, to: other, value: "0x1" }), -32602, `Could not find account for address: ${stranger}`);
    expect(await rawCall("anvil_impersonateAccount", stranger)).to.equal(null);
    await rawCall("anvil_setBalance", stranger, "0x100000");
    const hash = await node.client.eth_sendTransaction({ from: stranger, to: other, value: "0x5", gas: "0x5208" });
    const receipt = (await node.client.eth_getTransactionReceipt(hash))!;
    expect(receipt.from).to.equal(stranger);
    expect(receipt.status).to.equal("0x1");
    const transaction = (await node.client.eth_getTransactionByHash(hash))!;
    expect(transaction.hash).to.equal(hash);
    expect(transaction.from).to.equal(stranger);
    expect(transaction.s).to.equal("0x1");
    expect((await node.client.eth_getBlockByNumber(receipt.blockNumber, false))!.transactions).to.deep.equal([hash]);
    expect(await node.client.eth_getBalance(other, "latest")).to.equal("0x5");
    expect(await node.client.eth_getTransactionCount(stranger, "latest")).to.equal("0x1");
    // The same fields from another impersonated sender make another hash.
    await rawCall("hardhat_impersonateAccount", other);
    const fromOther = await node.client.eth_sendTransaction({ from: other, to: other, value: "0x0", gas: "0x5208", nonce: "0x0" });
    expect(fromOther).not.to.equal(hash);
    expect(await rawCall("hardhat_stopImpersonatingAccount", other)).to.equal(true);
    expect(await rawCall("hardhat_stopImpersonatingAccount", other)).to.equal(false);
    expect(await rawCall("anvil_stopImpersonatingAccount", stranger)).to.equal(null);
    await expectRpcError(node.client.eth_sendTransaction({ from: stranger, to: other, value: "0x1" }), -32602, `Could not find account for address: ${stranger}`);
    await expectRpcError(rawCall("anvil_impersonateAccount", "0xzz"), -32602, /^invalid argument 0: /);
  });

  it("mines several blocks with anvil_mine and hardhat_mine, an interval apart, and refuses a bad count", async () => {
    const start = BigInt((await head()).number!);
    expect(await rawCall("anvil_mine", "0xa", "0x0")).to.equal(null);
    expect(BigInt((await head()).number!)).to.equal(start + 10n);
    expect(await rawCall("hardhat_mine", "0x3", "0x3c")).to.equal(true);
    const last = await head();
    const first = (await node.client.eth_getBlockByNumber(`0x${(start + 11n).toString(16)}`, false))!;
    expect(BigInt(last.number!)).to.equal(start + 13n);
    expect(BigInt(last.timestamp) - BigInt(first.timestamp)).to.equal(120n);
    expect(await rawCall("anvil_mine")).to.equal(null);
    expect(BigInt((await head()).number!)).to.equal(start + 14n);
    await expectRpcError(rawCall("anvil_mine", "0x0"), -32602, "invalid argument 0: count must be 1 to 10000, got 0");
    await expectRpcError(rawCall("hardhat_mine", "0x2711"), -32602, "invalid argument 0: count must be 1 to 10000, got 10001");
    await expectRpcError(rawCall("hardhat_mine", "ten"), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("anvil_mine", "0x1", "-1"), -32602, /^invalid argument 1: /);
    await expectRpcError(rawCall("anvil_mine", "0x2", "0x7fffffffffffffff"), -32602, /^invalid argument 1: .*largest block timestamp/);
    // The refused series mined its first block only: the one the clock could still stamp.
    expect(BigInt((await head()).number!)).to.equal(start + 15n);
  });

  it("switches automine and interval mining, answers getAutomine under both names, and drops pooled transactions", async () => {
    expect(await rawCall("anvil_getAutomine")).to.equal(true);
    expect(await rawCall("evm_setAutomine", false)).to.equal(null);
    expect(await rawCall("hardhat_getAutomine")).to.equal(false);
    const number = (await head()).number;
    const first = await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
    const second = await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x2" });
    expect((await head()).number).to.equal(number);
    expect(await rawCall("anvil_dropTransaction", second)).to.equal(second);
    expect(await rawCall("anvil_dropTransaction", second)).to.equal(null);
    expect(await rawCall("hardhat_dropTransaction", second)).to.equal(false);
    expect(await node.client.txpool_status()).to.deep.equal({ pending: 1, queued: 0 });
    expect(await rawCall("evm_setAutomine", true)).to.equal(null);
    expect((await node.client.eth_getTransactionReceipt(first))!.status).to.equal("0x1");
    expect(await node.client.eth_getTransactionReceipt(second)).to.equal(null);

    await rawCall("evm_setAutomine", false);
    expect(await rawCall("evm_setIntervalMining", 1)).to.equal(null);
    expect(await node.client.eth_mining()).to.equal(true);
    const third = await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x3" });
    const deadline = Date.now() + 5_000;
    while ((await node.client.eth_getTransactionReceipt(third)) === null) {
      if (Date.now() > deadline) expect.fail("no interval block within 5 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await rawCall("evm_setIntervalMining", "0x0")).to.equal(null);
    expect(await node.client.eth_mining()).to.equal(false);

    await expectRpcError(rawCall("evm_setAutomine", "yes"), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("evm_setIntervalMining", -1), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("evm_setIntervalMining", 3_000_000), -32602, "invalid argument 0: interval must be at most 2147483 seconds, got 3000000");
    await expectRpcError(rawCall("anvil_dropTransaction", "0x12"), -32602, /^invalid argument 0: /);
    expect(await node.client.eth_mining()).to.equal(false);
  });

  it("sets the coinbase of later blocks under both names", async () => {
    const earlier = await head();
    expect(await rawCall("anvil_setCoinbase", stranger)).to.equal(null);
    expect(await node.client.eth_coinbase()).to.equal(stranger);
    await node.client.evm_mine();
    expect((await head()).miner).to.equal(stranger);
    expect(await rawCall("hardhat_setCoinbase", other)).to.equal(true);
    await node.client.evm_mine();
    expect((await head()).miner).to.equal(other);
    expect((await node.client.eth_getBlockByHash(earlier.hash!, false))!.miner).to.equal(earlier.miner);
    await expectRpcError(rawCall("hardhat_setCoinbase", "0x00"), -32602, /^invalid argument 0: /);
    expect(await node.client.eth_coinbase()).to.equal(other);
  });

  it("gives the next block exactly the time evm_setNextBlockTimestamp names, and refuses one not after the head's", async () => {
    const at = BigInt((await head()).timestamp) + 5_000n;
    expect(await rawCall("evm_setNextBlockTimestamp", `0x${at.toString(16)}`)).to.equal(null);
    await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
    expect(BigInt((await head()).timestamp)).to.equal(at);
    await expectRpcError(rawCall("evm_setNextBlockTimestamp", Number(at)), -32602, `timestamp ${at} is not greater than the parent block's timestamp ${at}`);
    await expectRpcError(rawCall("evm_setNextBlockTimestamp", "0xffffffffffffffff"), -32602, /^invalid argument 0: .*largest block timestamp/);
    await expectRpcError(rawCall("evm_setNextBlockTimestamp", "soon"), -32602, /^invalid argument 0: /);
    await node.client.evm_mine();
    expect(BigInt((await head()).timestamp) - at < 60n).to.equal(true);
  });

  it("keeps 100 automined blocks within a second of the clock, and evm_increaseTime(3600) + evm_mine 3,600 s after it (real time)", async () => {
    for (let index = 0; index < 100; index++) await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
    const clock = Math.floor(Date.now() / 1000);
    expect(Math.abs(Number(BigInt((await head()).timestamp)) - clock)).to.be.at.most(1);
    await node.client.evm_increaseTime(3600);
    const before = Math.floor(Date.now() / 1000);
    await node.client.evm_mine();
    const after = Math.floor(Date.now() / 1000);
    const stamped = Number(BigInt((await head()).timestamp));
    expect(stamped).to.be.within(before + 3600, after + 3600);
  });
});

describe("impersonated sends across a restart", function () {
  this.timeout(60_000);
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "chain-node-impersonation-"));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("keeps a pooled impersonated transaction with its sender in the pool's journal, and mines it after the restart", async () => {
    let node = await startTestNode({ dataDir });
    const call = (method: string, ...params: unknown[]) => (node.client.call as (name: string, ...values: unknown[]) => Promise<unknown>)(method, ...params);
    await call("hardhat_setBalance", stranger, "0x100000");
    await call("evm_setAutomine", false);
    await call("hardhat_impersonateAccount", stranger);
    const hash = await node.client.eth_sendTransaction({ from: stranger, to: other, value: "0x7", gas: "0x5208" });
    await node.stop();

    node = await startTestNode({ dataDir, chain: { mining: { kind: "off" } } });
    try {
      expect((await node.client.eth_getTransactionByHash(hash))!.from).to.equal(stranger);
      await node.client.evm_mine();
      const receipt = (await node.client.eth_getTransactionReceipt(hash))!;
      expect(receipt.from).to.equal(stranger);
      expect(await node.client.eth_getBalance(other, "latest")).to.equal("0x7");
    } finally {
      await node.stop();
    }
  });
});
