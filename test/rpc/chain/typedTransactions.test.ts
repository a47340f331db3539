// Typed transactions (EIP-2930, EIP-1559) on a node started with --typed-transactions: ethers' and
// viem's default sends, what the sender pays (the effective gas price), access lists, the type's
// fields in reads, a restart on LevelDB, and the bad inputs; without the flag, the legacy-only
// refusal and block shape stay as they were.
import { expect } from "chai";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonRpcProvider, SigningKey, Transaction, Wallet, concat, encodeRlp, keccak256, toBeArray, toUtf8Bytes } from "ethers";
import { createPublicClient, createWalletClient, defineChain, http, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { verifyDataDirectory } from "../../../src/node/verifyDataDirectory.js";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const stranger = "0x00000000000000000000000000000000000000aa";
/** Returns storage slot 0: PUSH1 0 SLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN. */
const slotReader = "0x00000000000000000000000000000000000000cc";
const slotZero = `0x${"00".repeat(32)}`;
const gwei = 1_000_000_000n;
/** The chain's minimum gas price in these tests, and so every block's base fee. */
const minimumGasPrice = gwei;
const regtest = defineChain({ id: 33, name: "regtest", nativeCurrency: { name: "RBTC", symbol: "RBTC", decimals: 18 }, rpcUrls: { default: { http: ["http://127.0.0.1:4444"] } } });

const legacyRefusal = (type: string) =>
  `Invalid input: typed transactions are not supported (type ${type}); send a legacy (type 0) transaction: --legacy in Foundry, type: 0 in ethers and viem, defaultTransactionType "0x0" in web3.js`;

/** Signs a transaction of `cow` with ethers (chain 33, to the stranger, 21,000 gas unless told). */
function signed(fields: Record<string, unknown>): Promise<string> {
  return new Wallet(cowKey).signTransaction({ chainId: 33n, gasLimit: 21_000n, to: stranger, value: 1n, ...fields });
}

async function balance(node: TestNode, address: string, block = "latest"): Promise<bigint> {
  return BigInt(await node.client.eth_getBalance(address, block));
}

describe("chain: typed transactions", function () {
  this.timeout(60_000);
  let directory: string;
  let genesisFile: string;
  before(async () => {
    directory = await mkdtemp(join(tmpdir(), "chain-node-typed-"));
    genesisFile = join(directory, "genesis.json");
    await writeFile(
      genesisFile,
      JSON.stringify({
        minimumGasPrice: `0x${minimumGasPrice.toString(16)}`,
        alloc: { [cow]: { balance: "0xffffffffffffffffffffff" }, [slotReader]: { code: "0x60005460005260206000f3", storage: { [slotZero]: "0x2a" } } },
      }),
    );
  });
  after(() => rm(directory, { recursive: true, force: true }));

  describe("without --typed-transactions", () => {
    let node: TestNode;
    before(async () => (node = await startTestNode({ chain: { genesisFile } })));
    after(() => node.stop());

    it("refuses types 1 and 2 with the message that says how to send legacy, and blocks have no baseFeePerGas", async () => {
      await expectRpcError(node.client.eth_sendRawTransaction(await signed({ type: 2, nonce: 0, maxFeePerGas: 2n * gwei, maxPriorityFeePerGas: 0n })), -32602, legacyRefusal("0x02"));
      await expectRpcError(node.client.eth_sendRawTransaction(await signed({ type: 1, nonce: 0, gasPrice: gwei })), -32602, legacyRefusal("0x01"));
      await expectRpcError(node.client.eth_sendRawTransaction("0x03c0"), -32602, legacyRefusal("0x03"));
      // eth_sendTransaction ignores the fee-market fields, as the reference node: a legacy transaction.
      const hash = await node.client.eth_sendTransaction({ from: cow, to: stranger, gasPrice: `0x${gwei.toString(16)}`, maxFeePerGas: "0x1", maxPriorityFeePerGas: "0x1", type: "0x2" });
      const transaction = (await node.client.eth_getTransactionByHash(hash))!;
      expect(transaction.type).to.equal("0x0");
      expect(transaction).to.not.have.property("maxFeePerGas");
      const block = (await node.client.eth_getBlockByNumber("latest", false))!;
      expect(block).to.not.have.property("baseFeePerGas");
      expect(block.minimumGasPrice).to.equal(`0x${minimumGasPrice.toString(16)}`);
    });
  });

  describe("with --typed-transactions", () => {
    let node: TestNode;
    beforeEach(async () => (node = await startTestNode({ chain: { genesisFile, typedTransactions: true } })));
    afterEach(() => node.stop());

    it("takes ethers' default send (EIP-1559): the sender pays gas used × the effective gas price, which the receipt and the block count", async () => {
      const provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true, cacheTimeout: -1, polling: true });
      provider.pollingInterval = 50;
      try {
        const before = await balance(node, cow);
        const coinbaseBefore = await balance(node, await node.client.eth_coinbase());
        const sent = await new Wallet(cowKey, provider).sendTransaction({ to: stranger, value: 1000n });
        expect(sent.type).to.equal(2);
        // ethers' fee cap: twice the base fee plus the node's priority fee suggestion (0).
        expect(sent.maxFeePerGas).to.equal(2n * minimumGasPrice);
        const receipt = (await sent.wait())!;
        const json = (await node.client.eth_getTransactionReceipt(sent.hash))!;
        expectValidResult("eth_getTransactionReceipt", json);
        expect(json.type).to.equal("0x2");
        // min(maxFeePerGas, base fee + priority fee) = the base fee: not the fee cap.
        expect(BigInt(json.effectiveGasPrice)).to.equal(minimumGasPrice);
        expect(receipt.gasPrice).to.equal(minimumGasPrice);
        const paid = BigInt(json.gasUsed) * minimumGasPrice;
        expect(before - (await balance(node, cow))).to.equal(paid + 1000n);
        const block = (await node.client.eth_getBlockByNumber(json.blockNumber, true))!;
        expectValidResult("eth_getBlockByNumber", block);
        expect(block.baseFeePerGas).to.equal(block.minimumGasPrice);
        expect(BigInt(block.paidFees)).to.equal(paid);
        expect((await balance(node, await node.client.eth_coinbase())) - coinbaseBefore).to.equal(paid);
      } finally {
        provider.destroy();
      }
    });

    it("takes viem's default send (EIP-1559), and its fee fields through eth_sendTransaction", async () => {
      const publicClient = createPublicClient({ chain: regtest, transport: http(node.url), cacheTime: 0 });
      // A local account: viem prices the transaction with the block's base fee and signs type 2.
      const local = createWalletClient({ account: privateKeyToAccount(cowKey as Hex), chain: regtest, transport: http(node.url) });
      let before = await balance(node, cow);
      let hash = await local.sendTransaction({ to: stranger, value: 7n });
      let receipt = await publicClient.getTransactionReceipt({ hash });
      let transaction = await publicClient.getTransaction({ hash });
      expect(receipt.type).to.equal("eip1559");
      expect(transaction.type).to.equal("eip1559");
      // viem's fee cap: 1.2 × the base fee plus the priority fee (0); it pays the base fee.
      expect(transaction.maxFeePerGas).to.equal((minimumGasPrice * 12n) / 10n);
      expect(receipt.effectiveGasPrice).to.equal(minimumGasPrice);
      expect(before - (await balance(node, cow))).to.equal(receipt.gasUsed * receipt.effectiveGasPrice + 7n);
      // A JSON-RPC account: viem passes the fee fields on, the node signs type 2 with them.
      const remote = createWalletClient({ account: cow as Hex, chain: regtest, transport: http(node.url) });
      before = await balance(node, cow);
      hash = await remote.sendTransaction({ to: stranger, value: 7n, maxFeePerGas: 5n * gwei, maxPriorityFeePerGas: 2n * gwei });
      receipt = await publicClient.getTransactionReceipt({ hash });
      transaction = await publicClient.getTransaction({ hash });
      expect(transaction.type).to.equal("eip1559");
      expect(transaction.maxFeePerGas).to.equal(5n * gwei);
      expect(receipt.effectiveGasPrice).to.equal(3n * gwei);
      expect(before - (await balance(node, cow))).to.equal(receipt.gasUsed * 3n * gwei + 7n);
    });

    it("charges min(maxFeePerGas, base fee + maxPriorityFeePerGas) and shows the type's fields", async () => {
      const cases = [
        { maxFeePerGas: 5n * gwei, maxPriorityFeePerGas: 2n * gwei, effective: 3n * gwei },
        { maxFeePerGas: (3n * gwei) / 2n, maxPriorityFeePerGas: gwei, effective: (3n * gwei) / 2n },
      ];
      for (const [nonce, { maxFeePerGas, maxPriorityFeePerGas, effective }] of cases.entries()) {
        const before = await balance(node, cow);
        const hash = await node.client.eth_sendRawTransaction(await signed({ type: 2, nonce, maxFeePerGas, maxPriorityFeePerGas }));
        const receipt = (await node.client.eth_getTransactionReceipt(hash))!;
        expect(BigInt(receipt.effectiveGasPrice)).to.equal(effective);
        expect(before - (await balance(node, cow))).to.equal(21_000n * effective + 1n);
        const transaction = (await node.client.eth_getTransactionByHash(hash))!;
        expectValidResult("eth_getTransactionByHash", transaction);
        expect(transaction).to.include({
          type: "0x2",
          chainId: "0x21",
          maxFeePerGas: `0x${maxFeePerGas.toString(16)}`,
          maxPriorityFeePerGas: `0x${maxPriorityFeePerGas.toString(16)}`,
          gasPrice: `0x${effective.toString(16)}`,
        });
        expect(transaction.accessList).to.deep.equal([]);
        expect(transaction.yParity).to.be.oneOf(["0x0", "0x1"]);
        expect(transaction.v).to.equal(transaction.yParity);
        // What ethers makes of the node's answer is the transaction that was signed.
        const { signature } = Transaction.from(await signed({ type: 2, nonce, maxFeePerGas, maxPriorityFeePerGas }));
        expect(BigInt(transaction.r)).to.equal(BigInt(signature!.r));
        expect(BigInt(transaction.s)).to.equal(BigInt(signature!.s));
      }
    });

    it("mines an EIP-2930 transaction whose access list changes its gas as the list says", async () => {
      const call = { type: 1, to: slotReader, value: 0n, gasPrice: gwei, gasLimit: 100_000n };
      const without = await node.client.eth_sendRawTransaction(await signed({ ...call, nonce: 0 }));
      const withList = await node.client.eth_sendRawTransaction(await signed({ ...call, nonce: 1, accessList: [{ address: slotReader, storageKeys: [slotZero] }] }));
      const gasWithout = BigInt((await node.client.eth_getTransactionReceipt(without))!.gasUsed);
      const receipt = (await node.client.eth_getTransactionReceipt(withList))!;
      expect(receipt.status).to.equal("0x1");
      expect(receipt.type).to.equal("0x1");
      expect(BigInt(receipt.effectiveGasPrice)).to.equal(gwei);
      // The list costs 2,400 for the address and 1,900 for the slot, and the SLOAD is warm: 100 instead of 2,100.
      expect(BigInt(receipt.gasUsed) - gasWithout).to.equal(2_400n + 1_900n - 2_000n);
      const transaction = (await node.client.eth_getTransactionByHash(withList))!;
      expectValidResult("eth_getTransactionByHash", transaction);
      expect(transaction).to.include({ type: "0x1", chainId: "0x21", gasPrice: `0x${gwei.toString(16)}` });
      expect(transaction).to.not.have.property("maxFeePerGas");
      expect(transaction.accessList).to.deep.equal([{ address: slotReader, storageKeys: [slotZero] }]);
    });

    it("signs type 2 for eth_sendTransaction with a fee cap, type 1 with an access list, legacy otherwise", async () => {
      const quantity = (value: bigint) => `0x${value.toString(16)}`;
      const typeOf = async (hash: string) => (await node.client.eth_getTransactionByHash(hash))!.type;
      expect(await typeOf(await node.client.eth_sendTransaction({ from: cow, to: stranger, maxFeePerGas: quantity(2n * gwei) }))).to.equal("0x2");
      const defaulted = await node.client.eth_sendTransaction({ from: cow, to: stranger, type: "0x2" });
      // Without a fee cap: the base fee plus the priority fee (0).
      expect((await node.client.eth_getTransactionByHash(defaulted))!.maxFeePerGas).to.equal(quantity(minimumGasPrice));
      expect(await typeOf(await node.client.eth_sendTransaction({ from: cow, to: slotReader, gasPrice: quantity(gwei), accessList: [{ address: slotReader, storageKeys: [slotZero] }] }))).to.equal("0x1");
      expect(await typeOf(await node.client.eth_sendTransaction({ from: cow, to: stranger, gasPrice: quantity(gwei) }))).to.equal("0x0");
    });

    it("refuses bad typed inputs with clear errors", async () => {
      // ethers and viem refuse to sign a priority fee above the fee cap: encoded and signed here.
      const fields = [toBeArray(33n), toBeArray(0n), toBeArray(3n * gwei), toBeArray(2n * gwei), toBeArray(21_000n), stranger, toBeArray(0n), "0x", []];
      const signature = new SigningKey(cowKey).sign(keccak256(concat(["0x02", encodeRlp(fields)])));
      const tipAboveCap = concat(["0x02", encodeRlp([...fields, toBeArray(signature.yParity), signature.r, signature.s])]);
      await expectRpcError(node.client.eth_sendRawTransaction(tipAboveCap), -32602, `Invalid input: transaction's maxPriorityFeePerGas (${3n * gwei}) is higher than its maxFeePerGas (${2n * gwei})`);
      await expectRpcError(node.client.eth_sendRawTransaction(await signed({ type: 2, nonce: 0, chainId: 5n, maxFeePerGas: 2n * gwei, maxPriorityFeePerGas: 0n })), -32010, "Invalid chainId: 5");
      await expectRpcError(node.client.eth_sendRawTransaction(await signed({ type: 1, nonce: 0, chainId: 5n, gasPrice: gwei })), -32010, "Invalid chainId: 5");
      for (const type of ["0x03", "0x04"]) {
        await expectRpcError(
          node.client.eth_sendRawTransaction(`${type}c0`),
          -32602,
          `Invalid input: transaction type ${type} is not supported; this node takes legacy (0x00), EIP-2930 (0x01) and EIP-1559 (0x02) transactions`,
        );
      }
      await expectRpcError(
        node.client.eth_sendRawTransaction(await signed({ type: 2, nonce: 0, maxFeePerGas: gwei - 1n, maxPriorityFeePerGas: 0n })),
        -32010,
        `transaction's maxFeePerGas (${gwei - 1n}) is lower than the block's minimum gas price (${gwei}), which is its base fee`,
      );
      await expectRpcError(node.client.eth_sendTransaction({ from: cow, to: stranger, type: "0x3" }), -32602, "invalid argument 0: transaction type 0x3 is not supported; this node signs legacy (0x0), EIP-2930 (0x1) and EIP-1559 (0x2) transactions");
      await expectRpcError(node.client.eth_sendTransaction({ from: cow, to: stranger, gasPrice: "0x1", maxFeePerGas: "0x1" }), -32602, "invalid argument 0: both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified");
      await expectRpcError(
        node.client.eth_sendTransaction({ from: cow, to: stranger, maxFeePerGas: `0x${gwei.toString(16)}`, maxPriorityFeePerGas: `0x${(2n * gwei).toString(16)}` }),
        -32602,
        `Invalid input: transaction's maxPriorityFeePerGas (${2n * gwei}) is higher than its maxFeePerGas (${gwei})`,
      );
      expect(await node.client.eth_blockNumber()).to.equal("0x0");
    });
  });

  it("holds a type 2 transaction to the price cap and the replacement bump by what it would pay (its effective gas price)", async () => {
    const node = await startTestNode({ chain: { genesisFile, typedTransactions: true, mining: { kind: "off" } } });
    try {
      // A fee cap of 100 × the minimum pays 1 × it without a priority fee: under the 80 × cap.
      const first = await node.client.eth_sendRawTransaction(await signed({ type: 2, nonce: 0, maxFeePerGas: 100n * gwei, maxPriorityFeePerGas: 0n }));
      await expectRpcError(node.client.eth_sendRawTransaction(await signed({ type: 2, nonce: 1, maxFeePerGas: 100n * gwei, maxPriorityFeePerGas: 80n * gwei })), -32010, "transaction's gas price exceeds cap");
      // Replacing it: 1.3 × is not the 40 % bump, 1.4 × is (a legacy replacement is held to the same).
      await expectRpcError(node.client.eth_sendRawTransaction(await signed({ type: 2, nonce: 0, maxFeePerGas: 100n * gwei, maxPriorityFeePerGas: (3n * gwei) / 10n })), -32010, "gas price not enough to bump transaction");
      const replacement = await node.client.eth_sendRawTransaction(await signed({ type: 2, nonce: 0, maxFeePerGas: 100n * gwei, maxPriorityFeePerGas: (4n * gwei) / 10n }));
      expect(await node.client.eth_getTransactionByHash(first)).to.equal(null);
      await expectRpcError(node.client.eth_sendRawTransaction(await signed({ type: 0, nonce: 0, gasPrice: (19n * gwei) / 10n })), -32010, "gas price not enough to bump transaction");
      await node.client.eth_sendRawTransaction(await signed({ type: 0, nonce: 0, gasPrice: 2n * gwei }));
      expect(await node.client.eth_getTransactionByHash(replacement)).to.equal(null);
    } finally {
      await node.stop();
    }
  });

  it("reads typed transactions back after a restart on LevelDB, with or without the flag", async () => {
    const dataDir = join(directory, "chain");
    let node = await startTestNode({ dataDir, chain: { genesisFile, typedTransactions: true } });
    let feeMarket: string;
    let accessList: string;
    try {
      feeMarket = await node.client.eth_sendRawTransaction(await signed({ type: 2, nonce: 0, maxFeePerGas: 5n * gwei, maxPriorityFeePerGas: 2n * gwei }));
      accessList = await node.client.eth_sendRawTransaction(await signed({ type: 1, nonce: 1, to: slotReader, value: 0n, gasPrice: gwei, gasLimit: 100_000n, accessList: [{ address: slotReader, storageKeys: [slotZero] }] }));
    } finally {
      await node.stop();
    }
    const seenBefore = { feeMarket: "", accessList: "" };
    for (const typedTransactions of [true, false]) {
      node = await startTestNode({ dataDir, chain: { genesisFile, typedTransactions } });
      try {
        const fee = (await node.client.eth_getTransactionByHash(feeMarket))!;
        const list = (await node.client.eth_getTransactionByHash(accessList))!;
        expect(fee).to.include({ type: "0x2", maxFeePerGas: `0x${(5n * gwei).toString(16)}`, gasPrice: `0x${(3n * gwei).toString(16)}`, from: cow });
        expect(list).to.include({ type: "0x1", from: cow });
        expect(list.accessList).to.deep.equal([{ address: slotReader, storageKeys: [slotZero] }]);
        expect(BigInt((await node.client.eth_getTransactionReceipt(feeMarket))!.effectiveGasPrice)).to.equal(3n * gwei);
        // The block's body decodes on the call thread too (a call at that block).
        expect(await node.client.eth_call({ to: slotReader }, list.blockNumber!)).to.equal(`0x${"2a".padStart(64, "0")}`);
        if (typedTransactions) {
          seenBefore.feeMarket = JSON.stringify(fee);
          seenBefore.accessList = JSON.stringify(list);
        } else {
          expect(JSON.stringify(fee)).to.equal(seenBefore.feeMarket);
          expect(JSON.stringify(list)).to.equal(seenBefore.accessList);
          expect(await node.client.eth_getBlockByNumber(list.blockNumber!, false)).to.not.have.property("baseFeePerGas");
        }
      } finally {
        await node.stop();
      }
    }
  });

  it("keeps typed transactions waiting in the pool across a restart with the flag; without it drops them with the refusal a send gets", async () => {
    const dataDir = join(directory, "pool");
    const paused = { genesisFile, mining: { kind: "off" as const } };
    let node = await startTestNode({ dataDir, chain: { ...paused, typedTransactions: true } });
    let hash: string;
    try {
      hash = await node.client.eth_sendRawTransaction(await signed({ type: 2, nonce: 0, maxFeePerGas: 5n * gwei, maxPriorityFeePerGas: 2n * gwei }));
    } finally {
      await node.stop();
    }
    node = await startTestNode({ dataDir, chain: { ...paused, typedTransactions: true } });
    try {
      const pending = (await node.client.eth_getTransactionByHash(hash))!;
      expect(pending).to.include({ type: "0x2", blockNumber: null, from: cow, gasPrice: `0x${(5n * gwei).toString(16)}` });
      expect(await node.client.txpool_status()).to.deep.equal({ pending: 1, queued: 0 });
    } finally {
      await node.stop();
    }
    node = await startTestNode({ dataDir, chain: paused });
    try {
      expect(await node.client.eth_getTransactionByHash(hash)).to.equal(null);
      const dropped = node.logs.find((record) => record.msg === "unreadable entry of the pool's journal deleted");
      expect(dropped?.reason).to.match(/^typed transactions are not supported \(type 0x02\)/);
    } finally {
      await node.stop();
    }
  });

  it("sends typed transactions from an impersonated account, traces and verifies them", async () => {
    const dataDir = join(directory, "impersonated");
    const node = await startTestNode({ dataDir, chain: { genesisFile, typedTransactions: true } });
    try {
      const impersonated = "0x00000000000000000000000000000000000000ee";
      await node.client.anvil_setBalance(impersonated, `0x${(10n ** 18n).toString(16)}`);
      await node.client.anvil_impersonateAccount(impersonated);
      const hash = await node.client.eth_sendTransaction({ from: impersonated, to: stranger, value: "0x5", maxFeePerGas: `0x${(5n * gwei).toString(16)}`, maxPriorityFeePerGas: `0x${gwei.toString(16)}` });
      const transaction = (await node.client.eth_getTransactionByHash(hash))!;
      expect(transaction).to.include({ type: "0x2", from: impersonated, gasPrice: `0x${(2n * gwei).toString(16)}` });
      expect(await balance(node, impersonated)).to.equal(10n ** 18n - 21_000n * 2n * gwei - 5n);
      // A replay of the block reaches the same outcome as its execution.
      const trace = (await node.client.debug_traceTransaction(hash, { tracer: "callTracer" })) as { from: string; gasUsed: string; value: string };
      expect(trace).to.include({ from: impersonated, gasUsed: "0x5208", value: "0x5" });
      await node.client.eth_sendRawTransaction(await signed({ type: 1, nonce: 0, gasPrice: gwei, gasLimit: 30_000n, accessList: [{ address: slotReader, storageKeys: [slotZero] }] }));
    } finally {
      await node.stop();
    }
    // chain-node verify recovers the typed transactions' senders (or reads the stand-in signature's).
    const report = await verifyDataDirectory(dataDir);
    expect(report.problems).to.deep.equal([]);
    expect(report.blocksChecked).to.equal(4n);
  });
});
