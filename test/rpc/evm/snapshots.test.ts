// evm_snapshot / evm_revert / evm_increaseTime / evm_reset as a contract developer uses them, over
// real HTTP with ethers v6: a time-locked deposit, time moved past the lock, everything reverted.
import { expect } from "chai";
import { Contract, ContractFactory, JsonRpcProvider, NonceManager, Wallet, keccak256, parseEther, toUtf8Bytes } from "ethers";
import type { RpcClient } from "../../../generated/client.js";
import { startManualNode, type ManualNode } from "../../helpers/manualNode.js";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { compileFixture, type CompiledContract } from "../../helpers/solidity.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
const lockSeconds = 3600n;

/** What a test compares before and after a revert. */
async function chainView(client: RpcClient, addresses: readonly string[]) {
  const head = await client.eth_getBlockByNumber("latest", false);
  expectValidResult("eth_getBlockByNumber", head);
  const balances = await Promise.all(addresses.map((address) => client.eth_getBalance(address, "latest")));
  return { number: head!.number, hash: head!.hash, timestamp: head!.timestamp, balances };
}

async function snapshot(client: RpcClient): Promise<string> {
  const id = await client.evm_snapshot();
  expectValidResult("evm_snapshot", id);
  return id;
}

async function revert(client: RpcClient, id: string): Promise<boolean> {
  const reverted = await client.evm_revert(id);
  expectValidResult("evm_revert", reverted);
  return reverted;
}

describe("evm: snapshots, reverts and time with a time-locked contract", function () {
  this.timeout(60_000);
  let timeLock: CompiledContract;
  let node: TestNode;
  let provider: JsonRpcProvider;
  let signer: NonceManager;
  let owner: string;

  before(() => {
    timeLock = compileFixture("TimeLock.sol", "TimeLock");
  });

  beforeEach(async () => {
    node = await startTestNode();
    provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true, cacheTimeout: -1 });
    provider.pollingInterval = 20;
    const wallet = new Wallet(cowKey, provider);
    owner = wallet.address;
    signer = new NonceManager(wallet);
  });
  afterEach(async () => {
    provider.destroy();
    await node.stop();
  });

  /** A call with parameters the typed client would not let through. */
  function rawCall(method: string, ...params: unknown[]): Promise<unknown> {
    return (node.client.call as (name: string, ...values: unknown[]) => Promise<unknown>)(method, ...params);
  }

  async function deployTimeLock(): Promise<Contract> {
    const factory = new ContractFactory(timeLock.abi as never, timeLock.bytecode, signer);
    const contract = (await factory.deploy(lockSeconds, { gasLimit: 1_000_000n })) as Contract;
    await contract.waitForDeployment();
    return contract;
  }

  async function withdrawalFails(contract: Contract): Promise<void> {
    try {
      await contract.getFunction("withdraw").staticCall({ from: owner });
    } catch (error) {
      expect(String((error as Error).message)).to.contain("still locked");
      return;
    }
    expect.fail("withdraw succeeded while locked");
  }

  it("moves time past a lock period, withdraws, then reverts balances, blocks and timestamps; twice to the same snapshot", async () => {
    const contract = await deployTimeLock();
    const address = await contract.getAddress();
    const deposit = await contract.getFunction("deposit")({ value: parseEther("1"), gasLimit: 200_000n });
    await deposit.wait();
    await withdrawalFails(contract);

    const before = await chainView(node.client, [owner, address]);
    const id = await snapshot(node.client);
    expect(BigInt(id) > 0n).to.equal(true);

    for (let round = 0; round < 2; round++) {
      const offset = await node.client.evm_increaseTime(Number(lockSeconds) + 1);
      expectValidResult("evm_increaseTime", offset);
      expect(BigInt(offset)).to.equal(lockSeconds + 1n);
      const withdrawal = await contract.getFunction("withdraw")({ gasLimit: 200_000n });
      const receipt = await withdrawal.wait();
      expect(receipt!.status).to.equal(1);
      const withdrawnBlock = await node.client.eth_getBlockByNumber("latest", false);
      expect(BigInt(withdrawnBlock!.timestamp) - BigInt(before.timestamp) >= lockSeconds).to.equal(true);
      expect(await node.client.eth_getBalance(address, "latest")).to.equal("0x0");

      expect(await revert(node.client, id)).to.equal(true);
      const after = await chainView(node.client, [owner, address]);
      expect(after).to.deep.equal(before);
      expect(await node.client.eth_getBalance(address, "latest")).to.equal(`0x${parseEther("1").toString(16)}`);
      expect(await contract.getFunction("deposits")(owner)).to.equal(parseEther("1"));
      // The removed block and its transaction are unknown.
      expect(await node.client.eth_getTransactionByHash(withdrawal.hash)).to.equal(null);
      expect(await node.client.eth_getTransactionReceipt(withdrawal.hash)).to.equal(null);
      expect(await node.client.eth_getBlockByNumber(withdrawnBlock!.number!, false)).to.equal(null);
      expect(await node.client.eth_getBlockByHash(withdrawnBlock!.hash!, false)).to.equal(null);
      // The offset is the snapshot's again, and the lock holds again.
      expect(await node.client.evm_increaseTime(0)).to.equal("0x0");
      await withdrawalFails(contract);
      // The nonce went back too: ethers must count from the chain again.
      signer.reset();
    }
    expect(BigInt(await snapshot(node.client))).to.equal(BigInt(id) + 1n);
  });

  it("keeps blocks growing in time after a revert and mines at a given timestamp", async () => {
    const genesisTime = BigInt((await node.client.eth_getBlockByNumber("0x0", false))!.timestamp);
    const id = await snapshot(node.client);
    expect(await node.client.evm_mine()).to.equal(null);
    const at = BigInt((await node.client.eth_getBlockByNumber("latest", false))!.timestamp) + 1_000_000n;
    expect(await node.client.evm_mine(`0x${at.toString(16)}`)).to.equal(null);
    const mined = await node.client.eth_getBlockByNumber("latest", false);
    expect(BigInt(mined!.timestamp)).to.equal(at);
    expect(mined!.number).to.equal("0x2");
    // The clock continues from the given time (on regtest a block may share its parent's second).
    await node.client.evm_mine();
    const next = await node.client.eth_getBlockByNumber("latest", false);
    expect(BigInt(next!.timestamp) >= at && BigInt(next!.timestamp) - at < 60n, `${next!.timestamp} at or just after ${at}`).to.equal(true);

    expect(await revert(node.client, id)).to.equal(true);
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
    await node.client.evm_mine();
    const afterRevert = await node.client.eth_getBlockByNumber("latest", false);
    expect(afterRevert!.number).to.equal("0x1");
    expect(BigInt(afterRevert!.timestamp) > genesisTime).to.equal(true);
    // A later id is gone, an unknown one is false; nothing changes.
    expect(await revert(node.client, "0x63")).to.equal(false);
    expect(await revert(node.client, "0x0")).to.equal(false);
    expect(await node.client.eth_blockNumber()).to.equal("0x1");
  });

  it("drops snapshots taken after the reverted one", async () => {
    const first = await snapshot(node.client);
    await node.client.evm_mine();
    const second = await snapshot(node.client);
    await node.client.evm_mine();
    const third = await snapshot(node.client);
    expect([BigInt(first), BigInt(second), BigInt(third)]).to.deep.equal([BigInt(first), BigInt(first) + 1n, BigInt(first) + 2n]);
    expect(await revert(node.client, second)).to.equal(true);
    expect(await node.client.eth_blockNumber()).to.equal("0x1");
    expect(await revert(node.client, third)).to.equal(false);
    expect(await node.client.eth_blockNumber()).to.equal("0x1");
    expect(await revert(node.client, first)).to.equal(true);
    expect(await revert(node.client, second)).to.equal(false);
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
    // Ids are never reused.
    expect(BigInt(await snapshot(node.client))).to.equal(BigInt(third) + 1n);
  });

  it("reports the removed blocks' logs with removed: true to a log filter installed before the revert", async () => {
    const contract = await deployTimeLock();
    const address = (await contract.getAddress()).toLowerCase();
    const id = await snapshot(node.client);
    const filterId = await node.client.eth_newFilter({ address });
    const deposits = [];
    for (let i = 0; i < 2; i++) {
      const sent = await contract.getFunction("deposit")({ value: 1000n + BigInt(i), gasLimit: 200_000n });
      deposits.push((await sent.wait())!);
    }
    const added = await node.client.eth_getFilterChanges(filterId);
    expectValidResult("eth_getFilterChanges", added);
    expect((added as { removed: boolean }[]).map((log) => log.removed)).to.deep.equal([false, false]);

    expect(await revert(node.client, id)).to.equal(true);
    const removed = (await node.client.eth_getFilterChanges(filterId)) as { transactionHash: string; blockHash: string; removed: boolean }[];
    expectValidResult("eth_getFilterChanges", removed);
    // Newest block first, each log once, marked removed.
    expect(removed.map((log) => [log.transactionHash, log.blockHash, log.removed])).to.deep.equal([
      [deposits[1]!.hash, deposits[1]!.blockHash, true],
      [deposits[0]!.hash, deposits[0]!.blockHash, true],
    ]);
    expect(await node.client.eth_getLogs({ address, fromBlock: "earliest" })).to.deep.equal([]);
    // The filter goes on with the new blocks.
    signer.reset();
    const again = await (await contract.getFunction("deposit")({ value: 7n, gasLimit: 200_000n })).wait();
    const next = (await node.client.eth_getFilterChanges(filterId)) as { transactionHash: string; removed: boolean }[];
    expect(next.map((log) => [log.transactionHash, log.removed])).to.deep.equal([[again!.hash, false]]);
  });

  it("restores the pool as at the snapshot; pending-transaction and block filters keep working", async () => {
    const pendingFilter = await node.client.eth_newPendingTransactionFilter();
    const blockFilter = await node.client.eth_newBlockFilter();
    await node.client.evm_stopMining();
    expect(await node.client.eth_mining()).to.equal(false);
    const wallet = new Wallet(cowKey, provider);
    const first = await wallet.sendTransaction({ to: "0x00000000000000000000000000000000000000aa", value: 1n, gasLimit: 21_000n, nonce: 0 });
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
    const id = await snapshot(node.client);
    const second = await wallet.sendTransaction({ to: "0x00000000000000000000000000000000000000bb", value: 2n, gasLimit: 21_000n, nonce: 1 });
    expect(await node.client.eth_getFilterChanges(pendingFilter)).to.deep.equal([first.hash, second.hash]);
    await node.client.evm_mine();
    const minedBlock = await node.client.eth_getBlockByNumber("latest", false);
    expect(minedBlock!.transactions).to.deep.equal([first.hash, second.hash]);
    expect(await node.client.eth_getFilterChanges(blockFilter)).to.deep.equal([minedBlock!.hash]);

    expect(await revert(node.client, id)).to.equal(true);
    // The transaction pending at the snapshot is pending again; the later one is unknown.
    const status = await node.client.txpool_status();
    expectValidResult("txpool_status", status);
    expect(status).to.deep.equal({ pending: 1, queued: 0 });
    expect((await node.client.eth_getTransactionByHash(first.hash))!.blockNumber).to.equal(null);
    expect(await node.client.eth_getTransactionByHash(second.hash)).to.equal(null);
    expect(await node.client.eth_getTransactionCount(wallet.address, "pending")).to.equal("0x1");
    // Filters go on: the mined transaction the revert made pending again is news (as geth
    // announces what a reorganisation puts back), so is a new one; a removed block is not.
    expect(await node.client.eth_getFilterChanges(pendingFilter)).to.deep.equal([first.hash]);
    expect(await node.client.eth_getFilterChanges(blockFilter)).to.deep.equal([]);
    const third = await wallet.sendTransaction({ to: "0x00000000000000000000000000000000000000cc", value: 3n, gasLimit: 21_000n, nonce: 1 });
    expect(await node.client.eth_getFilterChanges(pendingFilter)).to.deep.equal([third.hash]);

    // Resuming automine mines what accumulated, one block each, before it returns.
    expect(await node.client.evm_startMining()).to.equal(null);
    expect(await node.client.eth_mining()).to.equal(true);
    expect(await node.client.eth_blockNumber()).to.equal("0x2");
    expect((await node.client.eth_getTransactionReceipt(first.hash))!.blockNumber).to.equal("0x1");
    expect((await node.client.eth_getTransactionReceipt(third.hash))!.blockNumber).to.equal("0x2");
    expect(await node.client.txpool_status()).to.deep.equal({ pending: 0, queued: 0 });
  });

  it("evm_reset goes back to genesis: no blocks, an empty pool, no snapshots, no offset; ids go on", async () => {
    await deployTimeLock();
    const id = await snapshot(node.client);
    await node.client.evm_increaseTime(100);
    await node.client.evm_stopMining();
    await new Wallet(cowKey, provider).sendTransaction({ to: "0x00000000000000000000000000000000000000aa", value: 1n, gasLimit: 21_000n, nonce: 1 });
    const genesis = await node.client.eth_getBlockByNumber("0x0", false);
    expect(await node.client.evm_reset()).to.equal(null);
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
    expect((await node.client.eth_getBlockByNumber("latest", false))!.hash).to.equal(genesis!.hash);
    expect(await node.client.txpool_status()).to.deep.equal({ pending: 0, queued: 0 });
    expect(await node.client.evm_increaseTime(0)).to.equal("0x0");
    expect(await revert(node.client, id)).to.equal(false);
    expect(BigInt(await snapshot(node.client))).to.equal(BigInt(id) + 1n);
    expect(await node.client.eth_getTransactionCount(owner, "latest")).to.equal("0x0");
  });

  it("answers bad input with a clear error or false and changes nothing", async () => {
    await node.client.evm_mine();
    const id = await snapshot(node.client);
    await node.client.evm_increaseTime(10);
    const head = await node.client.eth_getBlockByNumber("latest", false);
    await expectRpcError(rawCall("evm_revert", "1"), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("evm_revert", -1), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("evm_revert", 1.5), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("evm_revert"), -32602, /^missing value for required argument 0/);
    await expectRpcError(rawCall("evm_increaseTime", -5), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("evm_increaseTime", "ten"), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("evm_increaseTime", 1.5), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("evm_increaseTime", 1e20), -32602, /^invalid argument 0: .*not an exact integer/);
    await expectRpcError(node.client.evm_increaseTime("0x7fffffffffffffff"), -32602, /^invalid argument 0: .*largest block timestamp/);
    await expectRpcError(node.client.evm_mine(head!.timestamp), -32602, `timestamp ${BigInt(head!.timestamp)} is not greater than the parent block's timestamp ${BigInt(head!.timestamp)}`);
    await expectRpcError(node.client.evm_mine("0xffffffffffffffff"), -32602, /^invalid argument 0: .*largest block timestamp/);
    await expectRpcError(rawCall("evm_mine", "tomorrow"), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("evm_mine", { blocks: 10_001 }), -32602, "invalid argument 0: field blocks: must be 1 to 10000, got 10001");
    await expectRpcError(rawCall("evm_mine", { blocks: 0 }), -32602, "invalid argument 0: field blocks: must be 1 to 10000, got 0");
    await expectRpcError(rawCall("evm_mine", { blocks: 2, until: 5 }), -32602, /^invalid argument 0: /);
    await expectRpcError(rawCall("evm_snapshot", 1), -32602, /too many arguments|invalid/);
    // Nothing changed: same head, same offset, the snapshot still there.
    expect((await node.client.eth_getBlockByNumber("latest", false))!.hash).to.equal(head!.hash);
    expect(await node.client.evm_increaseTime(0)).to.equal("0xa");
    expect(await revert(node.client, id)).to.equal(true);
    expect(await node.client.evm_increaseTime("0")).to.equal("0x0");
  });

  it("mines several blocks with {blocks, timestamp}, and reverts to a snapshot given as a JSON integer", async () => {
    const id = await snapshot(node.client);
    const before = BigInt(await node.client.eth_blockNumber());
    expect(await rawCall("evm_mine", { blocks: 3 })).to.equal(null);
    expect(BigInt(await node.client.eth_blockNumber())).to.equal(before + 3n);
    const start = BigInt((await node.client.eth_getBlockByNumber("latest", false))!.timestamp) + 1_000n;
    expect(await rawCall("evm_mine", { blocks: "0x2", timestamp: `0x${start.toString(16)}` })).to.equal(null);
    const first = await node.client.eth_getBlockByNumber(`0x${(before + 4n).toString(16)}`, false);
    const second = await node.client.eth_getBlockByNumber(`0x${(before + 5n).toString(16)}`, false);
    expect(BigInt(first!.timestamp)).to.equal(start);
    // The clock continues from the first: the same second, or just after it.
    expect(BigInt(second!.timestamp) >= start && BigInt(second!.timestamp) - start < 60n).to.equal(true);
    expect(await rawCall("evm_mine", { timestamp: null })).to.equal(null);
    expect(BigInt(await node.client.eth_blockNumber())).to.equal(before + 6n);
    expect(await rawCall("evm_revert", Number(id))).to.equal(true);
    expect(BigInt(await node.client.eth_blockNumber())).to.equal(before);
  });

  it("mines no block past the largest timestamp, keeps what was sent, and mines again after a revert", async () => {
    const id = await snapshot(node.client);
    const largest = 2n ** 63n - 1n;
    await node.client.evm_mine(`0x${largest.toString(16)}`);
    const head = await node.client.eth_getBlockByNumber("latest", false);
    expect(BigInt(head!.timestamp)).to.equal(largest);
    const exhausted = `no block can follow the head: its timestamp ${largest} is the largest a block can carry; go back with evm_revert or evm_reset`;
    await expectRpcError(node.client.evm_mine(), -32000, exhausted);
    const wallet = new Wallet(cowKey);
    const nonce = Number(await node.client.eth_getTransactionCount(owner, "latest"));
    const sent = await wallet.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice: 0n, to: "0x00000000000000000000000000000000000000cc", value: 1n });
    await expectRpcError(node.client.eth_sendRawTransaction(sent), -32009, `Unknown error when sending transaction: ${exhausted}`);
    // No block was made, and the transaction waits in the pool.
    expect((await node.client.eth_getBlockByNumber("latest", false))!.hash).to.equal(head!.hash);
    expect(await node.client.txpool_status()).to.deep.equal({ pending: 1, queued: 0 });
    expect(await revert(node.client, id)).to.equal(true);
    await node.client.evm_mine();
    expect(BigInt((await node.client.eth_getBlockByNumber("latest", false))!.timestamp) < largest).to.equal(true);
  });
});

describe("evm: requests that race a revert", function () {
  this.timeout(30_000);
  let node: ManualNode;
  before(async () => (node = await startManualNode()));
  after(() => node.stop());

  it("a block or a time change asked for while a revert is queued works on the reverted chain", async () => {
    const { devChain } = node.services;
    const recipient = "0x00000000000000000000000000000000000000bb";
    const id = await devChain.snapshot();
    const wallet = new Wallet(cowKey);
    await node.client.eth_sendRawTransaction(await wallet.signTransaction({ type: 0, chainId: 33n, nonce: 0, gasLimit: 21_000n, gasPrice: 0n, to: recipient, value: 1n }));
    const offsetBefore = await devChain.increaseTime(0n);
    // Asked for in this order without waiting: the revert must come first for both others.
    const [reverted, block, offset] = await Promise.all([devChain.revert(id), devChain.mine(), devChain.increaseTime(100n)]);
    expect(reverted).to.equal(true);
    expect(block.transactions, "the reverted transaction is not mined").to.have.length(0);
    expect(offset).to.equal(offsetBefore + 100n);
    expect(await node.client.eth_getBalance(recipient, "latest")).to.equal("0x0");
  });
});
