// Calls run without the engine's runTx (execution/leanCalls.ts): what one changes, every case left
// to runTx, which must find the state and the journal untouched, and blocks of calls built with
// and without the lean path, which must reach the same state, receipts and refusals. The
// differential test (differential.test.ts) compares generated blocks with the engine as it comes.
import { expect } from "chai";
import { Address, bytesToHex } from "@ethereumjs/util";
import { Interface, Wallet, getCreateAddress, keccak256, toUtf8Bytes } from "ethers";
import type { Block } from "../../../src/chain/block.js";
import { buildGenesisBlock, type GenesisAccount } from "../../../src/chain/genesis.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction, type ChainTransaction } from "../../../src/chain/transactions.js";
import { bytesToUnprefixedHex, hexToBytes } from "../../../src/common/hex.js";
import { BlockBuilder, type BlockTemplate, type BuiltBlock } from "../../../src/execution/blockBuilder.js";
import { createExecutionBlock, createExecutionEngine } from "../../../src/execution/engine.js";
import { leanCallsApply, runLeanCall, type LeanCallContext } from "../../../src/execution/leanCalls.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { StateDatabase } from "../../../src/state/stateDatabase.js";
import { createMemoryStore } from "../../../src/storage/keyValueStore.js";
import { compileFixture } from "../../helpers/solidity.js";

const chainId = 33n;
const network = findNetworkProfile(33)!;
const wallets = network.developmentAccounts.slice(0, 4).map((account) => new Wallet(keccak256(toUtf8Bytes(account.seed))));
const miner = "0x00000000000000000000000000000000000000cc";
const deploymentMiner = "0x00000000000000000000000000000000000000dd";
const probe = compileFixture("Probe.sol", "Probe");
const frames = compileFixture("Frames.sol", "Frames");
const probeInterface = new Interface(probe.abi as never);
const framesInterface = new Interface(frames.abi as never);
// Deployed by the first two wallets' first transactions.
const probeAddress = getCreateAddress({ from: wallets[0]!.address, nonce: 0 }).toLowerCase();
const framesAddress = getCreateAddress({ from: wallets[1]!.address, nonce: 0 }).toLowerCase();

interface Call {
  from: number;
  /** An address, or omitted for a creation. */
  to?: string;
  data?: string;
  value?: bigint;
  gasPrice?: bigint;
  gasLimit?: bigint;
  /** Skips nonces: a nonce the sender's account does not have. */
  nonceOffset?: number;
}

/** A chain at genesis (the development accounts plus `accounts`), a block deploying Probe and Frames, and a signer of calls. */
async function deployedChain(accounts: [address: string, account: GenesisAccount][] = []) {
  const common = createExecutionRules(chainId);
  const alloc = new Map(network.genesis.alloc);
  for (const [address, account] of accounts) alloc.set(address.slice(2), account);
  const database = new StateDatabase(createMemoryStore(), common);
  const genesis = await buildGenesisBlock({ ...network.genesis, alloc }, database);
  const nonces = wallets.map(() => 0);
  const sign = async ({ from, to, data = "0x", value = 0n, gasPrice = 0n, gasLimit = 200_000n, nonceOffset = 0 }: Call): Promise<ChainTransaction> => {
    const nonce = nonces[from]! + nonceOffset;
    if (nonceOffset === 0) nonces[from]!++;
    const raw = await wallets[from]!.signTransaction({ type: 0, chainId, nonce, to, data, value, gasPrice, gasLimit });
    return decodeRawTransaction(hexToBytes(raw), common);
  };
  const template = (parent: Block, minimumGasPrice = 0n): BlockTemplate => ({
    parent,
    coinbase: hexToBytes(miner),
    timestamp: parent.header.fields.timestamp + 1n,
    gasLimit: parent.header.fields.gasLimit,
    minimumGasPrice,
    difficulty: parent.header.fields.difficulty,
    extraData: new Uint8Array(),
  });
  const deployer = await BlockBuilder.create(common, database.at(genesis.header.fields.stateRoot), async () => undefined);
  const deployments = [await sign({ from: 0, data: probe.bytecode, gasLimit: 3_000_000n }), await sign({ from: 1, data: frames.bytecode, gasLimit: 3_000_000n })];
  // Another miner for the deployments: the calls' miner is as the genesis left it.
  const deployed = await deployer.build({ ...template(genesis), coinbase: hexToBytes(deploymentMiner) }, deployments);
  expect(deployed.skipped).to.deep.equal([]);
  return { common, database, parent: deployed.block, sign, template };
}

/** What a built block shows of its transactions and state. */
function outline(built: BuiltBlock) {
  return {
    stateRoot: bytesToUnprefixedHex(built.block.header.fields.stateRoot),
    receipts: built.receipts.map(({ success, gasUsed, cumulativeGasUsed, logs, logsBloom }) => ({
      success,
      gasUsed,
      cumulativeGasUsed,
      logs: logs.map(({ address, topics, data }) => [bytesToHex(address), topics.map(bytesToHex), bytesToHex(data)]),
      logsBloom: bytesToHex(logsBloom),
    })),
    skipped: built.skipped.map(({ transaction, reason, deferred }) => ({ hash: bytesToHex(transaction.hash), reason, deferred })),
  };
}

describe("execution/leanCalls", () => {
  it("apply under the node's rule set", () => {
    expect(leanCallsApply(createExecutionRules(chainId))).to.equal(true);
  });

  describe("one call", () => {
    let chain: Awaited<ReturnType<typeof deployedChain>>;
    let context: LeanCallContext;

    beforeEach(async () => {
      chain = await deployedChain();
      const state = chain.database.at(chain.parent.header.fields.stateRoot);
      const engine = await createExecutionEngine(chain.common, state, async () => undefined);
      const { number, header } = chain.parent;
      const block = createExecutionBlock(chain.common, {
        number: number + 1n,
        coinbase: hexToBytes(miner),
        timestamp: header.fields.timestamp + 1n,
        gasLimit: header.fields.gasLimit,
        baseFee: 1n,
        difficulty: header.fields.difficulty,
      });
      context = { evm: engine.vm.evm as LeanCallContext["evm"], state, block };
    });

    const account = (address: string) => context.state.getAccount(new Address(hexToBytes(address)));

    it("takes the nonce and the fee, runs the code and pays the miner above the base fee", async () => {
      const sender = wallets[2]!.address;
      const before = (await account(sender))!;
      const outcome = await runLeanCall(context, await chain.sign({ from: 2, to: probeAddress, data: probeInterface.encodeFunctionData("setStored", [7n]), gasPrice: 3n }));
      expect(outcome?.success).to.equal(true);
      const gasUsed = outcome!.gasUsed;
      expect(gasUsed > 21_000n).to.equal(true);
      const after = (await account(sender))!;
      expect(after.nonce).to.equal(before.nonce + 1n);
      expect(after.balance).to.equal(before.balance - gasUsed * 3n);
      // The base fee's share is the block builder's to pay (creditMinimumGasPriceShare).
      expect((await account(miner))!.balance).to.equal(gasUsed * 2n);
      expect(bytesToHex(await context.state.getStorage(new Address(hexToBytes(probeAddress)), new Uint8Array(32)))).to.not.equal("0x");
    });

    // Each of these is runTx's to run or refuse: the lean path leaves everything as it was.
    const leftToRunTx: [string, () => Promise<ChainTransaction>][] = [
      ["a creation", () => chain.sign({ from: 2, data: probe.bytecode, gasLimit: 3_000_000n, gasPrice: 1n })],
      ["a precompile as the recipient", () => chain.sign({ from: 2, to: "0x0000000000000000000000000000000000000004", data: "0x01", gasPrice: 1n })],
      ["a nonce the sender does not have", () => chain.sign({ from: 2, to: probeAddress, gasPrice: 1n, nonceOffset: 1 })],
      ["a gas price under the base fee", () => chain.sign({ from: 2, to: probeAddress })],
      ["less gas than the intrinsic gas", () => chain.sign({ from: 2, to: probeAddress, data: "0x01", gasLimit: 21_000n, gasPrice: 1n })],
      ["more gas than the block holds", () => chain.sign({ from: 2, to: probeAddress, gasLimit: chain.parent.header.fields.gasLimit + 1n, gasPrice: 1n })],
      ["a call that destroys an account", () => chain.sign({ from: 2, to: framesAddress, data: framesInterface.encodeFunctionData("nest", [2n]), gasLimit: 1_000_000n, gasPrice: 1n })],
    ];
    for (const [name, transaction] of leftToRunTx) {
      it(`leaves ${name} to runTx, changing nothing`, async () => {
        const rootBefore = bytesToHex(await context.state.getStateRoot());
        const signed = await transaction();
        expect(await runLeanCall(context, signed)).to.equal(undefined);
        await context.state.flush();
        expect(bytesToHex(await context.state.getStateRoot())).to.equal(rootBefore);
        const journal = context.evm.journal as unknown as { touched: Set<string>; journalHeight: number };
        expect(journal.touched.size).to.equal(0);
        expect(journal.journalHeight).to.equal(0);
      });
    }

    it("leaves a sender without the balance for the gas and the value to runTx", async () => {
      const sender = wallets[2]!.address;
      const { balance } = (await account(sender))!;
      const rootBefore = bytesToHex(await context.state.getStateRoot());
      expect(await runLeanCall(context, await chain.sign({ from: 2, to: probeAddress, value: balance, gasPrice: 1n }))).to.equal(undefined);
      expect(bytesToHex(await context.state.getStateRoot())).to.equal(rootBefore);
    });
  });

  describe("blocks built with and without it", () => {
    const fresh = "0x000000000000000000000000000000000000f00d";
    const slotOne = new Map([["00".repeat(31) + "01", hexToBytes("0x2a")]]);
    const clearer = "0x000000000000000000000000000000000000c1ea";
    const balanceReader = "0x000000000000000000000000000000000000ba1a";
    const threeSlots = new Map([1, 2, 3].map((slot) => [slot.toString(16).padStart(64, "0"), hexToBytes("0x01")]));

    interface Scenario {
      name: string;
      accounts?: [address: string, account: GenesisAccount][];
      minimumGasPrice?: bigint;
      /** The block's miner, when not the usual one. */
      coinbase?: string;
      calls: Call[];
      /** Whether the block refuses some of the calls. */
      refusals?: true;
    }

    const scenarios: Scenario[] = [
      {
        name: "stores, a refund for clearing, a revert with a reason and a call out of gas, at a gas price above the minimum",
        minimumGasPrice: 1n,
        calls: [
          { from: 2, to: probeAddress, data: probeInterface.encodeFunctionData("setStored", [5n]), gasPrice: 3n },
          { from: 2, to: probeAddress, data: probeInterface.encodeFunctionData("clearStored"), gasPrice: 2n },
          { from: 0, to: probeAddress, data: probeInterface.encodeFunctionData("failWithReason", ["nope"]), gasPrice: 1n },
          { from: 1, to: probeAddress, data: probeInterface.encodeFunctionData("spin", [200n]), gasLimit: 40_000n, gasPrice: 4n },
        ],
      },
      {
        name: "nested frames with value and logs, one destroying what it created",
        calls: [
          { from: 0, to: framesAddress, data: framesInterface.encodeFunctionData("nest", [3n]), value: 4_000n, gasLimit: 1_000_000n },
          { from: 1, to: framesAddress, data: framesInterface.encodeFunctionData("nest", [4n]), value: 4_000n, gasLimit: 1_000_000n },
          { from: 2, to: framesAddress, data: framesInterface.encodeFunctionData("noteThenFail", [9n]), gasLimit: 100_000n },
        ],
      },
      {
        name: "calls with data to accounts without code, to oneself and to a fresh address",
        minimumGasPrice: 1n,
        calls: [
          { from: 0, to: wallets[1]!.address, data: "0x1234", value: 5n, gasPrice: 2n },
          { from: 1, to: wallets[1]!.address, data: "0xff", gasPrice: 1n },
          { from: 2, to: fresh, data: "0x00", gasPrice: 1n },
          { from: 2, to: fresh, data: "0x00", value: 1n, gasPrice: 1n },
        ],
      },
      {
        name: "an empty miner holding storage, paid nothing beyond the base fee",
        accounts: [[miner, { balance: 0n, storage: slotOne }]],
        minimumGasPrice: 1n,
        calls: [{ from: 2, to: probeAddress, data: probeInterface.encodeFunctionData("setStored", [1n]), gasPrice: 1n }],
      },
      {
        name: "a refund above a fifth of the gas used (three stored slots cleared)",
        // PUSH1 0 PUSH1 n SSTORE for n = 1, 2, 3, then STOP.
        accounts: [[clearer, { balance: 0n, code: hexToBytes("0x60006001556000600255600060035500"), storage: threeSlots }]],
        calls: [{ from: 2, to: clearer, gasPrice: 2n }],
      },
      {
        name: "balances read of the sender, the contract, the miner and a precompile, all warm from the start (EIP-2929, EIP-3651)",
        // CALLER BALANCE POP, ADDRESS BALANCE POP, COINBASE BALANCE POP, PUSH1 4 BALANCE POP, STOP.
        accounts: [[balanceReader, { balance: 1n, code: hexToBytes("0x3331503031504131506004315000") }]],
        calls: [{ from: 2, to: balanceReader, gasPrice: 1n }],
      },
      {
        name: "the miner as the sender",
        coinbase: wallets[2]!.address,
        minimumGasPrice: 1n,
        calls: [{ from: 2, to: probeAddress, data: probeInterface.encodeFunctionData("setStored", [3n]), gasPrice: 2n }],
      },
      {
        name: "refusals: a nonce ahead, too little balance, a sender with code",
        accounts: [
          [wallets[2]!.address.toLowerCase(), { balance: 30_000n }],
          [wallets[3]!.address.toLowerCase(), { balance: 10n ** 18n, code: hexToBytes("0x00") }],
        ],
        calls: [
          { from: 0, to: probeAddress, data: probeInterface.encodeFunctionData("setStored", [2n]), nonceOffset: 3 },
          { from: 1, to: probeAddress, data: probeInterface.encodeFunctionData("setStored", [2n]) },
          { from: 2, to: probeAddress, data: probeInterface.encodeFunctionData("setStored", [2n]), gasPrice: 1n, gasLimit: 100_000n },
          { from: 3, to: probeAddress, data: probeInterface.encodeFunctionData("setStored", [3n]) },
        ],
        refusals: true,
      },
    ];

    const runBlock = async (scenario: Scenario, leanCalls: boolean) => {
      const chain = await deployedChain(scenario.accounts);
      const state = chain.database.at(chain.parent.header.fields.stateRoot);
      const builder = await BlockBuilder.create(chain.common, state, async () => undefined, { leanCalls });
      const transactions: ChainTransaction[] = [];
      for (const call of scenario.calls) transactions.push(await chain.sign(call));
      const template = { ...chain.template(chain.parent, scenario.minimumGasPrice), ...(scenario.coinbase === undefined ? {} : { coinbase: hexToBytes(scenario.coinbase) }) };
      return outline(await builder.build(template, transactions));
    };

    // An engine failure inside a frame (here the canonical-hash lookup BLOCKHASH makes): the
    // transaction is refused and nothing of it stays, neither its fee and nonce nor what it put in
    // transient storage, which the block's next call of the same contract reads.
    const failing = "0x000000000000000000000000000000000000fa11";
    // Without calldata: PUSH1 1 PUSH1 1 TSTORE, PUSH1 0 BLOCKHASH POP, STOP. With calldata (the
    // JUMPI to 14): PUSH1 1 TLOAD PUSH1 0 SSTORE, STOP: slot 0 keeps what transient slot 1 holds.
    const failureAccounts: [string, GenesisAccount][] = [[failing, { balance: 0n, code: hexToBytes("0x36600e57600160015d60004050005b60015c60005500") }]];
    const blockAfterFailure = async (leanCalls: boolean, withFailing: boolean) => {
      const chain = await deployedChain(failureAccounts);
      const state = chain.database.at(chain.parent.header.fields.stateRoot);
      const builder = await BlockBuilder.create(chain.common, state, () => Promise.reject(new Error("the store cannot be read")), { leanCalls });
      const transactions = withFailing ? [await chain.sign({ from: 2, to: failing, gasPrice: 1n })] : [];
      transactions.push(await chain.sign({ from: 0, to: failing, data: "0x01", gasPrice: 1n }));
      return outline(await builder.build(chain.template(chain.parent), transactions));
    };
    for (const leanCalls of [true, false]) {
      it(`an engine failure inside a frame leaves nothing of the transaction${leanCalls ? "" : " (runTx)"}`, async () => {
        const failed = await blockAfterFailure(leanCalls, true);
        expect(failed.skipped.map(({ reason, deferred }) => ({ reason, deferred }))).to.deep.equal([{ reason: "the store cannot be read", deferred: false }]);
        const clean = await blockAfterFailure(leanCalls, false);
        expect({ stateRoot: failed.stateRoot, receipts: failed.receipts }).to.deep.equal({ stateRoot: clean.stateRoot, receipts: clean.receipts });
      });
    }

    for (const scenario of scenarios) {
      it(scenario.name, async () => {
        const lean = await runBlock(scenario, true);
        expect(lean).to.deep.equal(await runBlock(scenario, false));
        if (scenario.refusals === true) expect(lean.skipped.map(({ deferred }) => deferred)).to.deep.equal([false, false, false]);
        else expect(lean.skipped).to.deep.equal([]);
      });
    }
  });
});
