// Sending transactions and reading them back: blocks, receipts, balances, nonces, and every
// pool rejection with its code and message.
import { expect } from "chai";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { JsonRpcProvider, Signature, Transaction, Wallet, concat, getBytes, hexlify, keccak256, toQuantity, toUtf8Bytes } from "ethers";
import { postJson } from "../../helpers/http.js";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { withoutSigner } from "../../helpers/signatures.js";
import { RpcClient } from "../../../generated/client.js";
import type { RecoveryOffload } from "../../../src/node/recoveryOffload.js";
import type { KeyValueStore } from "../../../src/storage/keyValueStore.js";
import { startServerWithHandlers, startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const stranger = "0x00000000000000000000000000000000000000aa";

/** Signs a legacy transaction of `cow` with ethers. */
async function signed(fields: { nonce: number; to?: string; value?: bigint; gasLimit?: bigint; gasPrice?: bigint; data?: string; chainId?: bigint }): Promise<string> {
  const wallet = new Wallet(cowKey);
  return wallet.signTransaction({ type: 0, chainId: 33n, gasLimit: 21_000n, gasPrice: 0n, to: stranger, value: 1n, ...fields });
}

describe("chain: sending and reading transactions", () => {
  let node: TestNode;
  beforeEach(async () => (node = await startTestNode()));
  afterEach(() => node.stop());

  it("starts at genesis with the ten development accounts funded and unlocked, then the miner's account", async () => {
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
    const accounts = await node.client.eth_accounts();
    expect(accounts).to.have.length(11);
    expect(accounts[0]).to.equal(cow);
    expect(await node.client.eth_getBalance(accounts[9]!, "latest")).to.equal(`0x${(10n ** 30n).toString(16)}`);
    // The coinbase, as the reference lists it: unlocked, not funded.
    expect(accounts[10]).to.equal(await node.client.eth_coinbase());
    expect(accounts[10]).to.equal("0xec4ddeb4380ad69b3e509baad9f158cdf4e4681d");
    expect(await node.client.eth_getBalance(accounts[10]!, "latest")).to.equal("0x0");
    const signed = await node.client.eth_sendTransaction({ from: accounts[10]!, to: stranger });
    expect((await node.client.eth_getTransactionReceipt(signed))!.status).to.equal("0x1");
    const genesis = await node.client.eth_getBlockByNumber("earliest", false);
    expectValidResult("eth_getBlockByNumber", genesis);
    expect(genesis!.number).to.equal("0x0");
    expect(genesis!.extraData).to.equal("0x686f727365");
  });

  it("mines each sent transaction into its own block and serves block, transaction and receipt", async () => {
    const hash = await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x2a" });
    expect(await node.client.eth_blockNumber()).to.equal("0x1");
    const receipt = await node.client.eth_getTransactionReceipt(hash);
    expectValidResult("eth_getTransactionReceipt", receipt);
    expect(receipt).to.include({ transactionHash: hash, blockNumber: "0x1", status: "0x1", gasUsed: "0x5208", from: cow, to: stranger, contractAddress: null });

    const byNumber = await node.client.eth_getBlockByNumber("0x1", true);
    const byHash = await node.client.eth_getBlockByHash(receipt!.blockHash, false);
    expectValidResult("eth_getBlockByNumber", byNumber);
    expect(byHash!.hash).to.equal(byNumber!.hash).and.to.equal(receipt!.blockHash);
    expect(byHash!.transactions).to.deep.equal([hash]);
    expect(byNumber!.totalDifficulty).to.equal("0x2");
    expect(byNumber!.gasUsed).to.equal("0x5208");

    const transaction = await node.client.eth_getTransactionByHash(hash);
    expectValidResult("eth_getTransactionByHash", transaction);
    expect(transaction).to.include({ hash, from: cow, to: stranger, value: "0x2a", gas: "0x15f90", gasPrice: "0x0", nonce: "0x0", blockNumber: "0x1", transactionIndex: "0x0", type: "0x0" });
    expect(await node.client.eth_getTransactionByBlockNumberAndIndex("0x1", "0x0")).to.deep.equal(transaction);
    expect(await node.client.eth_getTransactionByBlockHashAndIndex(receipt!.blockHash, "0x1")).to.equal(null);
    expect(await node.client.eth_getBlockTransactionCountByHash(receipt!.blockHash)).to.equal("0x1");

    expect(await node.client.eth_getBalance(stranger, "latest")).to.equal("0x2a");
    expect(await node.client.eth_getBalance(stranger, "0x0")).to.equal("0x0");
    expect(await node.client.eth_getBalance(stranger, { blockHash: receipt!.blockHash, requireCanonical: true })).to.equal("0x2a");
    // The reference node reads requireCanonical as the strings "true" and "false".
    for (const requireCanonical of ["true", "false", false] as const) {
      expect(await node.client.eth_getBalance(stranger, { blockHash: receipt!.blockHash, requireCanonical })).to.equal("0x2a");
    }
    const otherString = postJson(node.url, { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [stranger, { blockHash: receipt!.blockHash, requireCanonical: "yes" }] });
    expect(((await otherString).json as { error: unknown }).error).to.deep.equal({ code: -32602, message: 'invalid argument 1: field requireCanonical: "yes" is not one of: "true", "false"' });
    expect(await node.client.eth_getTransactionCount(cow, "latest")).to.equal("0x1");
    expect(await node.client.eth_getTransactionCount(cow, "earliest")).to.equal("0x0");
    expect(await node.client.eth_getTransactionCount(cow, "pending")).to.equal("0x1");
  });

  it("answers balances and nonces of the head as they change, read again and again", async () => {
    // The second read of each pair is answered from the head's state view without waiting.
    const readTwice = async () => {
      const reads = [];
      for (let round = 0; round < 2; round++) {
        reads.push([await node.client.eth_getBalance(stranger, "latest"), await node.client.eth_getTransactionCount(cow, "latest")]);
      }
      expect(reads[1]).to.deep.equal(reads[0]);
      return reads[0];
    };
    expect(await readTwice()).to.deep.equal(["0x0", "0x0"]);
    await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x2a" });
    expect(await readTwice()).to.deep.equal(["0x2a", "0x1"]);
    await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x1" });
    expect(await readTwice()).to.deep.equal(["0x2b", "0x2"]);
    expect(await node.client.eth_getBalance(stranger, "0x1")).to.equal("0x2a");
  });

  it("answers null or -32600 for what does not exist, as the reference does", async () => {
    const missing = `0x${"ab".repeat(32)}`;
    expect(await node.client.eth_getBlockByNumber("0x5", false)).to.equal(null);
    expect(await node.client.eth_getBlockByHash(missing, false)).to.equal(null);
    expect(await node.client.eth_getTransactionByHash(missing)).to.equal(null);
    expect(await node.client.eth_getTransactionReceipt(missing)).to.equal(null);
    expect(await node.client.eth_getBlockTransactionCountByHash(missing)).to.equal(null);
    await expectRpcError(node.client.eth_getBalance(cow, "0x5"), -32600, "Block 0x5 not found");
    await expectRpcError(node.client.eth_getBalance(cow, { blockHash: missing }), -32600, `Block with hash ${missing} not found`);
    await expectRpcError(node.client.eth_getUncleCountByBlockHash(missing), -32600, `Block with hash ${missing} not found`);
    expect(await node.client.eth_getUncleCountByBlockNumber("latest")).to.equal("0x0");
    expect(await node.client.eth_getUncleByBlockNumberAndIndex("latest", "0x0")).to.equal(null);
    await expectRpcError(node.client.eth_getBlockByNumber("pending" as "latest", false), -32602, /invalid argument 0: .*pending/);
  });

  it("accepts raw transactions signed with EIP-155 and unprotected (v = 27/28) signatures", async () => {
    const protectedHash = await node.client.eth_sendRawTransaction(await signed({ nonce: 0 }));
    const unprotected = Transaction.from({ type: 0, nonce: 1, gasLimit: 21_000n, gasPrice: 0n, to: stranger, value: 1n });
    unprotected.signature = new Wallet(cowKey).signingKey.sign(unprotected.unsignedHash);
    const unprotectedHash = await node.client.eth_sendRawTransaction(unprotected.serialized);
    expect((await node.client.eth_getTransactionByHash(unprotectedHash))!.v).to.match(/^0x1[bc]$/);
    expect((await node.client.eth_getTransactionReceipt(protectedHash))!.status).to.equal("0x1");
    expect(await node.client.eth_getBalance(stranger, "latest")).to.equal("0x2");
  });

  it("rejects malformed, typed and foreign-chain transactions with clear errors", async () => {
    await expectRpcError(node.client.eth_sendRawTransaction("0xc0"), -32602, "Invalid input: a legacy transaction is an RLP list of 9 byte strings");
    await expectRpcError(node.client.eth_sendRawTransaction("0xf8"), -32602, "Invalid input: invalid RLP: the input ends inside an item");
    const typed = await new Wallet(cowKey).signTransaction({ type: 2, chainId: 33n, nonce: 0, gasLimit: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, to: stranger });
    await expectRpcError(node.client.eth_sendRawTransaction(typed), -32602, /^Invalid input: typed transactions are not supported \(type 0x02\)/);
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 0, chainId: 5n })), -32010, "Invalid chainId: 5");
    const highS = Transaction.from(await signed({ nonce: 0 }));
    const order = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const flipped = highS.clone();
    flipped.signature = { r: highS.signature!.r, s: `0x${(order - BigInt(highS.signature!.s)).toString(16).padStart(64, "0")}`, v: highS.signature!.v === 27 ? 28 : 27 } as never;
    await expectRpcError(node.client.eth_sendRawTransaction(flipped.serialized), -32010, /^invalid transaction signature/);
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
  });

  it("rejects what the pool cannot take, with the reference wording", async () => {
    await node.client.eth_sendRawTransaction(await signed({ nonce: 0 }));
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 0, value: 2n })), -32010, "transaction nonce too low");
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 1, value: 10n ** 31n })), -32010, "insufficient funds");
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 1, gasLimit: 10_000_001n })), -32010, "transaction's gas limit of 10000001 is higher than the block's gas limit of 10000000");
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 1, gasLimit: 20_999n })), -32010, "transaction's basic cost is above the gas limit");
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 1, gasLimit: 9_000_000n, data: `0x${"01".repeat(131_072)}` })), -32010, /^transaction's size is higher than defined maximum: \d+ > 131072$/);
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 1, to: undefined, gasLimit: 9_000_000n, data: `0x${"01".repeat(49_153)}` })), -32010, "transaction's init code size is invalid");
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 40 })), -32010, "transaction nonce too high");
    await expectRpcError(node.client.eth_sendTransaction({ from: stranger, to: cow }), -32602, `Could not find account for address: ${stranger}`);
    expect(await node.client.eth_blockNumber()).to.equal("0x1");
  });

  it("refuses what it cannot sign for eth_sendTransaction as it refuses the same transaction sent raw", async () => {
    const before = await node.client.eth_blockNumber();
    await expectRpcError(node.client.eth_sendTransaction({ from: cow, to: stranger, gasPrice: `0x${"f".repeat(64)}` }), -32602, /^Invalid input: gas limit \* gasPrice cannot exceed MAX_INTEGER/);
    await expectRpcError(node.client.eth_sendTransaction({ from: cow, to: stranger, nonce: "0xffffffffffffffff" }), -32602, /^Invalid input: .*nonce cannot equal or exceed MAX_UINT64/);
    await expectRpcError(node.client.eth_sendTransaction({ from: cow, gas: "0x989680", data: `0x${"00".repeat(50_000)}` }), -32010, "transaction's init code size is invalid");
    expect(await node.client.eth_blockNumber()).to.equal(before);
  });

  it("queues a transaction behind a nonce gap and mines both once the gap is filled", async () => {
    const later = await node.client.eth_sendRawTransaction(await signed({ nonce: 1 }));
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
    expect(await node.client.eth_getTransactionByHash(later)).to.equal(null);
    expect(await node.client.eth_getTransactionCount(cow, "pending")).to.equal("0x0");
    await node.client.eth_sendRawTransaction(await signed({ nonce: 0 }));
    expect(await node.client.eth_blockNumber()).to.equal("0x2");
    expect((await node.client.eth_getTransactionReceipt(later))!.blockNumber).to.equal("0x2");
  });
});

describe("chain: pool rules without automine", () => {
  let node: TestNode;
  let directory: string;
  before(async () => {
    directory = await mkdtemp(join(tmpdir(), "chain-node-genesis-"));
    const genesisFile = join(directory, "genesis.json");
    await writeFile(genesisFile, JSON.stringify({ minimumGasPrice: "0x3b9aca00", alloc: { [cow]: { balance: "0xffffffffffffffffffffff" } } }));
    node = await startTestNode({ chain: { mining: { kind: "off" }, genesisFile } });
  });
  after(async () => {
    await node.stop();
    await rm(directory, { recursive: true, force: true });
  });

  it("refuses a gas price under the block minimum or over 80 times it, and a replacement without a 40 % bump", async () => {
    // The minimum (10^9) times 1.1.
    expect(await node.client.eth_gasPrice()).to.equal("0x4190ab00");
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 0, gasPrice: 999_999_999n })), -32010, "transaction's gas price lower than block's minimum");
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 0, gasPrice: 80_000_000_001n })), -32010, "transaction's gas price exceeds cap");
    await expectRpcError(node.client.eth_sendTransaction({ from: cow, to: cow, gasPrice: "0x12a05f2001" }), -32010, "transaction's gas price exceeds cap");
    expect(await node.client.eth_pendingTransactions()).to.deep.equal([]);
    const first = await node.client.eth_sendRawTransaction(await signed({ nonce: 0, gasPrice: 1_000_000_000n }));
    expect((await node.client.eth_getTransactionByHash(first))!.blockHash).to.equal(null);
    expect((await node.client.eth_pendingTransactions()).map((transaction) => transaction.hash)).to.deep.equal([first]);
    await expectRpcError(node.client.eth_sendRawTransaction(await signed({ nonce: 0, gasPrice: 1_300_000_000n })), -32010, "gas price not enough to bump transaction");
    const replacement = await node.client.eth_sendRawTransaction(await signed({ nonce: 0, gasPrice: 1_400_000_000n }));
    expect(await node.client.eth_getTransactionByHash(first)).to.equal(null);
    expect((await node.client.eth_getTransactionByHash(replacement))!.gasPrice).to.equal("0x53724e00");
    const atTheCap = await node.client.eth_sendRawTransaction(await signed({ nonce: 0, gasPrice: 80_000_000_000n }));
    expect((await node.client.eth_getTransactionByHash(atTheCap))!.gasPrice).to.equal("0x12a05f2000");
    expect(await node.client.eth_getBlockTransactionCountByNumber("pending")).to.equal("0x1");
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
  });

  it("reads the pending state: the head after the pool's executable transactions", async () => {
    const recipient = "0x00000000000000000000000000000000000000bb";
    const nonce = Number(await node.client.eth_getTransactionCount(cow, "pending"));
    const cowBefore = BigInt(await node.client.eth_getBalance(cow, "pending"));
    await node.client.eth_sendRawTransaction(await signed({ nonce, to: recipient, value: 5n, gasPrice: 2_000_000_000n }));
    expect(await node.client.eth_getBalance(recipient, "latest")).to.equal("0x0");
    expect(await node.client.eth_getBalance(recipient, "pending")).to.equal("0x5");
    expect(BigInt(await node.client.eth_getBalance(cow, "pending"))).to.equal(cowBefore - 5n - 21_000n * 2_000_000_000n);
    expect(await node.client.eth_getTransactionCount(cow, "latest")).to.equal("0x0");
    expect(await node.client.eth_getTransactionCount(cow, "pending")).to.equal(`0x${(nonce + 1).toString(16)}`);
    expect(await node.client.eth_getStorageAt(recipient, "0x0", "pending")).to.equal(`0x${"0".repeat(64)}`);
  });

  it("words a call under the block minimum gas price in the chain's terms", async () => {
    // The engine calls the minimum the block's baseFeePerGas and appends its own context.
    await expectRpcError(node.client.eth_call({ from: cow, to: stranger, gasPrice: "0x1" }, "latest"), -32000, "transaction's gas price (1) lower than block's minimum (1000000000)");
  });

  it("works with ethers' JsonRpcProvider", async () => {
    const provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true });
    expect(await provider.getBlockNumber()).to.equal(0);
    expect(await provider.getBalance(cow)).to.equal(0xffffffffffffffffffffffn);
    provider.destroy();
  });
});

/** `raw` with an r that is no point's x coordinate on the curve: its signature has no signer. */
function signedWithoutSigner(raw: string): string {
  const transaction = Transaction.from(raw);
  const { s, v } = transaction.signature!;
  const { rs } = withoutSigner({ messageHash: getBytes(transaction.unsignedHash), rs: getBytes(concat([transaction.signature!.r, s])), recovery: v === 27 ? 0 : 1 });
  transaction.signature = Signature.from({ r: hexlify(rs.subarray(0, 32)), s, v });
  return transaction.serialized;
}

describe("chain: sends from several clients at once", () => {
  it("mines raw sends that arrive together from eight senders, each in its own block with its sender, and refuses one without a signer among them", async () => {
    const node = await startTestNode({ logLevel: "debug" });
    const senders = ["cow", "cow1", "cow2", "cow3", "cow4", "cow5", "cow6", "cow7"].map((seed) => new Wallet(keccak256(toUtf8Bytes(seed))));
    const rounds = 10;
    const sent: { hash: string; from: string }[] = [];
    try {
      for (let round = 0; round < rounds; round++) {
        const raws = await Promise.all(senders.map((sender) => sender.signTransaction({ type: 0, chainId: 33n, nonce: round, gasLimit: 21_000n, gasPrice: 0n, to: stranger, value: 1n })));
        const bodies = [...raws.slice(0, 4), signedWithoutSigner(raws[0]!), ...raws.slice(4)];
        const answers = await Promise.all(bodies.map((raw, id) => postJson(node.url, { jsonrpc: "2.0", id, method: "eth_sendRawTransaction", params: [raw] })));
        const [refused] = answers.splice(4, 1);
        expect(refused!.json).to.deep.include({ error: { code: -32010, message: "invalid transaction signature" } });
        answers.forEach((answer, index) => sent.push({ hash: (answer.json as { result: string }).result, from: senders[index]!.address.toLowerCase() }));
      }
      expect(await node.client.eth_blockNumber()).to.equal(toQuantity(rounds * senders.length));
      const blocks = new Set<string>();
      for (const { hash, from } of sent) {
        const receipt = await node.client.eth_getTransactionReceipt(hash);
        expect(receipt, hash).to.include({ from, status: "0x1" });
        blocks.add(receipt!.blockNumber);
      }
      expect(blocks.size).to.equal(sent.length);
      expect(await node.client.eth_getBalance(stranger, "latest")).to.equal(toQuantity(rounds * senders.length));
    } finally {
      await node.stop();
    }
    const counts = node.logs.find((record) => record.msg === "senders recovered on each thread") as { byWorker: number; onMainThread: number } | undefined;
    // The worker runs on a machine with more than one core.
    if (availableParallelism() > 1) expect(counts?.byWorker, "the sender-recovery worker took part").to.be.greaterThan(0);
  });
});

describe("chain: raw sends in JSON-RPC batches", () => {
  it("mines a batch's sends in order with their senders, recovered ahead on the worker, and refuses the bad ones among them", async () => {
    const node = await startServerWithHandlers({});
    const client = new RpcClient(node.url);
    // The worker serving from the first batch on (on a machine with more than one core).
    const offload = node.services.senderRecovery as RecoveryOffload | undefined;
    offload?.start();
    if (offload !== undefined) expect(await offload.ready, "the worker serves").to.equal(true);
    const senders = ["cow", "cow1", "cow2", "cow3", "cow4", "cow5", "cow6", "cow7"].map((seed) => new Wallet(keccak256(toUtf8Bytes(seed))));
    const rounds = 5;
    try {
      for (let round = 0; round < rounds; round++) {
        const raws = await Promise.all(senders.map((sender) => sender.signTransaction({ type: 0, chainId: 33n, nonce: round, gasLimit: 21_000n, gasPrice: 0n, to: stranger, value: 1n })));
        // A send without a signer, one that cannot be decoded and one sent twice, among the others.
        const params = [...raws.slice(0, 3), signedWithoutSigner(raws[0]!), ...raws.slice(3, 6), "0x1234", raws[4]!, ...raws.slice(6)];
        const answer = await postJson(
          node.url,
          params.map((raw, id) => ({ jsonrpc: "2.0", id, method: "eth_sendRawTransaction", params: [raw] })),
        );
        const answers = answer.json as { id: number; result?: string; error?: { code: number; message: string } }[];
        expect(answers.map(({ id }) => id)).to.deep.equal(params.map((_, id) => id));
        expect(answers[3]!.error).to.deep.equal({ code: -32010, message: "invalid transaction signature" });
        expect(answers[7]!.error).to.deep.equal({ code: -32602, message: "Invalid input: typed transactions are not supported (type 0x12); send a legacy (type 0) transaction: --legacy in Foundry, type: 0 in ethers and viem, defaultTransactionType \"0x0\" in web3.js" });
        // Sent again after it was mined, as a single send would be answered.
        expect(answers[8]!.error).to.deep.equal({ code: -32010, message: "transaction nonce too low" });
        const mined = answers.filter((_, index) => ![3, 7, 8].includes(index));
        for (const [index, { result }] of mined.entries()) {
          const receipt = await client.eth_getTransactionReceipt(result!);
          expect(receipt, `round ${round}, send ${index}`).to.include({ from: senders[index]!.address.toLowerCase(), status: "0x1", blockNumber: toQuantity(round * senders.length + index + 1) });
        }
      }
      expect(await client.eth_getBalance(stranger, "latest")).to.equal(toQuantity(rounds * senders.length));

      // ethers' provider batches the requests a test makes together.
      const provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true });
      const raws = await Promise.all(senders.map((sender) => sender.signTransaction({ type: 0, chainId: 33n, nonce: rounds, gasLimit: 21_000n, gasPrice: 0n, to: stranger, value: 1n })));
      const sent = await Promise.all(raws.map((raw) => provider.broadcastTransaction(raw)));
      expect(sent.map(({ from }) => from)).to.deep.equal(senders.map(({ address }) => address));
      expect(await client.eth_getBalance(stranger, "latest")).to.equal(toQuantity((rounds + 1) * senders.length));
      provider.destroy();
      // A batch runs its sends one at a time, so only the recovery ahead gives the worker work here.
      if (offload !== undefined) expect(offload.recoveryCounts.byWorker, "the sender-recovery worker took part").to.be.greaterThan(0);
    } finally {
      await node.stop();
    }
    expect(offload !== undefined || availableParallelism() < 2, "a recovery worker on a machine with more than one core").to.equal(true);
  });

  it("lets go of the recoveries started for sends a batch cut short never ran: every slot of the ring serves again", async function () {
    if (availableParallelism() < 2) this.skip(); // no recovery worker on one core
    // Room for three answers: the fourth send runs and is answered -32011, the rest do not run.
    const server = await startServerWithHandlers({}, { rpc: { responseLimitBytes: 400 } });
    const offload = server.services.senderRecovery as RecoveryOffload;
    try {
      offload.start();
      expect(await offload.ready, "the worker serves").to.equal(true);
      const raws = await Promise.all(Array.from({ length: 12 }, (_, nonce) => signed({ nonce })));
      const answer = await postJson(
        server.url,
        raws.map((raw, id) => ({ jsonrpc: "2.0", id, method: "eth_sendRawTransaction", params: [raw] })),
      );
      const answers = answer.json as { result?: string; error?: { code: number } }[];
      expect(answers.map(({ result, error }) => (result === undefined ? error?.code : "mined"))).to.deep.equal([
        "mined",
        "mined",
        "mined",
        ...Array.from({ length: 9 }, () => -32011),
      ]);
      // A recovery let go while the worker is at it is freed by the worker when it is done.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const probe = withoutSigner({ messageHash: new Uint8Array(32).fill(1), rs: new Uint8Array(64).fill(2), recovery: 0 });
      const ring = Array.from({ length: 64 }, () => offload.recoverAhead(probe));
      expect(ring.filter((recovery) => recovery === undefined), "slots still held").to.have.length(0);
      for (const recovery of ring) recovery!.release();
    } finally {
      await server.stop();
    }
  });
});

describe("chain: a store that cannot write", () => {
  it("answers sends and evm_mine with why the block was not written, and keeps serving reads", async () => {
    const server = await startServerWithHandlers({});
    try {
      const client = new RpcClient(server.url);
      const store = (server.services.chain as unknown as { store: KeyValueStore }).store;
      store.write = () => Promise.reject(new Error("ENOSPC: no space left on device"));
      const written = /^block 1 could not be written: ENOSPC: no space left on device; the node writes no more blocks until it is restarted \(its chain is intact up to the head\)$/;
      const refused = await client.eth_sendRawTransaction(await signed({ nonce: 0 })).then(
        () => undefined,
        (error: { code: number; message: string }) => error,
      );
      expect(refused?.code).to.equal(-32009);
      expect(refused?.message.replace("Unknown error when sending transaction: ", "")).to.match(written);
      await expectRpcError(client.evm_mine(), -32000, written);
      expect(await client.eth_blockNumber()).to.equal("0x0");
    } finally {
      await server.stop();
    }
  });
});

