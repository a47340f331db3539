// Plain value transfers applied without the EVM (execution/plainTransfers.ts): what they change,
// every case left to the engine, which must find the state untouched, and blocks of edge cases
// built with and without them, which must reach the same state and receipts. The differential
// test (differential.test.ts) compares generated blocks with the engine as it comes.
import { expect } from "chai";
import { Account, Address, bytesToHex } from "@ethereumjs/util";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { buildGenesisBlock, type GenesisAccount } from "../../../src/chain/genesis.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction, type ChainTransaction } from "../../../src/chain/transactions.js";
import { bytesToUnprefixedHex, hexToBytes } from "../../../src/common/hex.js";
import { BlockBuilder } from "../../../src/execution/blockBuilder.js";
import { createExecutionEngine } from "../../../src/execution/engine.js";
import { plainTransfersApply, runPlainTransfer, type PlainTransferContext } from "../../../src/execution/plainTransfers.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import type { ChainStateManager } from "../../../src/state/chainStateManager.js";
import { StateDatabase } from "../../../src/state/stateDatabase.js";
import { createMemoryStore } from "../../../src/storage/keyValueStore.js";

const chainId = 33n;
const coinbase = new Address(hexToBytes("0x00000000000000000000000000000000000000cb"));
const network = findNetworkProfile(33)!;
const wallets = network.developmentAccounts.slice(0, 2).map((account) => new Wallet(keccak256(toUtf8Bytes(account.seed))));
const [sender, recipient] = wallets as [Wallet, Wallet];

describe("execution/plainTransfers", () => {
  const common = createExecutionRules(chainId);
  let state: ChainStateManager;
  let context: PlainTransferContext;

  beforeEach(async () => {
    const database = new StateDatabase(createMemoryStore(), common);
    const genesis = await buildGenesisBlock(network.genesis, database);
    state = database.at(genesis.header.fields.stateRoot);
    const engine = await createExecutionEngine(common, state, async () => undefined);
    context = { state, precompiles: engine.vm.evm.precompiles, coinbase, baseFee: 1n };
  });

  const sign = async (fields: { to: string; value?: bigint; gasLimit?: bigint; gasPrice?: bigint; nonce?: number; data?: string }): Promise<ChainTransaction> => {
    const raw = await sender.signTransaction({ type: 0, chainId, nonce: 0, gasPrice: 2n, gasLimit: 21_000n, value: 0n, ...fields });
    return decodeRawTransaction(hexToBytes(raw), common);
  };
  const account = async (address: string) => state.getAccount(new Address(hexToBytes(address)));

  it("apply under the node's rule set", () => {
    expect(plainTransfersApply(common)).to.equal(true);
  });

  it("take the nonce, the value and the fee from the sender and pay the recipient and the miner", async () => {
    const before = (await account(sender.address))!;
    const recipientBefore = (await account(recipient.address))!;
    const gasUsed = await runPlainTransfer(context, await sign({ to: recipient.address, value: 5n, gasLimit: 30_000n, gasPrice: 2n }));
    expect(gasUsed).to.equal(21_000n);
    const after = (await account(sender.address))!;
    expect(after.nonce).to.equal(before.nonce + 1n);
    expect(after.balance).to.equal(before.balance - 5n - 42_000n);
    expect((await account(recipient.address))!.balance).to.equal(recipientBefore.balance + 5n);
    expect((await state.getAccount(coinbase))!.balance).to.equal(42_000n);
  });

  it("create an absent recipient that receives value, and handle a transfer to oneself", async () => {
    const fresh = "0x000000000000000000000000000000000000f00d";
    expect(await runPlainTransfer(context, await sign({ to: fresh, value: 7n }))).to.equal(21_000n);
    expect((await account(fresh))!.balance).to.equal(7n);
    const before = (await account(sender.address))!;
    expect(await runPlainTransfer(context, await sign({ to: sender.address, value: 9n, nonce: 1 }))).to.equal(21_000n);
    const after = (await account(sender.address))!;
    expect(after.balance).to.equal(before.balance - 42_000n);
    expect(after.nonce).to.equal(before.nonce + 1n);
  });

  it("leave an absent recipient of a zero value absent", async () => {
    const absent = "0x000000000000000000000000000000000000beef";
    expect(await runPlainTransfer(context, await sign({ to: absent }))).to.equal(21_000n);
    expect(await account(absent)).to.equal(undefined);
  });

  it("read every account before the first write: a store that fails a read fails the transfer with nothing changed", async () => {
    const rootBefore = bytesToHex(await state.getStateRoot());
    const failingMinerReads = Object.create(state) as ChainStateManager;
    failingMinerReads.getAccount = (address) => (address.equals(coinbase) ? Promise.reject(new Error("the store cannot be read")) : state.getAccount(address));
    const transfer = await sign({ to: recipient.address, value: 5n, gasPrice: 2n });
    let failure: unknown;
    await runPlainTransfer({ ...context, state: failingMinerReads }, transfer).catch((error: unknown) => (failure = error));
    expect((failure as Error | undefined)?.message).to.equal("the store cannot be read");
    expect(bytesToHex(await state.getStateRoot())).to.equal(rootBefore);
  });

  describe("leave to the engine, changing nothing,", () => {
    const cases: [string, () => Promise<ChainTransaction>, (() => Promise<void>)?][] = [
      ["a transaction with data", () => sign({ to: recipient.address, value: 1n, gasLimit: 30_000n, data: "0x01" })],
      ["a creation", async () => decodeRawTransaction(hexToBytes(await sender.signTransaction({ type: 0, chainId, nonce: 0, gasPrice: 2n, gasLimit: 60_000n, data: "0x00" })), common)],
      ["another nonce", () => sign({ to: recipient.address, value: 1n, nonce: 3 })],
      ["a sender without the balance", () => sign({ to: recipient.address, value: 10n ** 31n })],
      ["a gas price below the base fee", () => sign({ to: recipient.address, value: 1n, gasPrice: 0n })],
      ["less gas than the intrinsic gas", () => sign({ to: recipient.address, value: 1n, gasLimit: 20_999n })],
      ["a precompile as the recipient", () => sign({ to: "0x0000000000000000000000000000000000000004", value: 1n })],
      [
        "a recipient with code",
        () => sign({ to: "0x000000000000000000000000000000000000c0de", value: 1n }),
        async () => {
          const contract = new Address(hexToBytes("0x000000000000000000000000000000000000c0de"));
          await state.putAccount(contract, new Account());
          await state.putCode(contract, hexToBytes("0x00"));
        },
      ],
      [
        "a sender with code",
        () => sign({ to: recipient.address, value: 1n }),
        async () => state.putCode(new Address(hexToBytes(sender.address)), hexToBytes("0x00")),
      ],
      [
        "a zero value to an empty account",
        () => sign({ to: "0x000000000000000000000000000000000000beef" }),
        async () => state.putAccount(new Address(hexToBytes("0x000000000000000000000000000000000000beef")), new Account()),
      ],
      [
        "a value that would take the recipient past 2^256 - 1",
        () => sign({ to: recipient.address, value: 2n }),
        async () => state.putAccount(new Address(hexToBytes(recipient.address)), new Account(0n, 2n ** 256n - 1n)),
      ],
      [
        "no fee beyond the base fee to an empty miner account",
        () => sign({ to: recipient.address, value: 1n, gasPrice: 1n }),
        async () => state.putAccount(coinbase, new Account()),
      ],
      [
        "no fee to an empty miner account",
        () => sign({ to: recipient.address, value: 1n, gasPrice: 0n }),
        async () => {
          context = { ...context, baseFee: 0n };
          await state.putAccount(coinbase, new Account());
        },
      ],
    ];
    for (const [name, transaction, arrange] of cases) {
      it(name, async () => {
        await arrange?.();
        const rootBefore = bytesToHex(await state.getStateRoot());
        expect(await runPlainTransfer(context, await transaction())).to.equal(undefined);
        expect(bytesToHex(await state.getStateRoot())).to.equal(rootBefore);
      });
    }
  });
});

describe("execution/plainTransfers: blocks built with and without them", () => {
  const common = createExecutionRules(chainId);
  const maxBalance = 2n ** 256n - 1n;
  const slotOne = new Map([["00".repeat(31) + "01", hexToBytes("0x2a")]]);
  const miner = "0x00000000000000000000000000000000000000cc";
  const [first, second] = wallets.map((wallet) => wallet.address.toLowerCase()) as [string, string];
  const fresh = "0x000000000000000000000000000000000000f00d";
  const emptyWithStorage = "0x000000000000000000000000000000000000e111";

  interface Scenario {
    name: string;
    /** Accounts added to the development genesis. */
    accounts?: [address: string, account: GenesisAccount][];
    minimumGasPrice?: bigint;
    transfers: { from: 0 | 1; to: string; value?: bigint; gasPrice?: bigint; gasLimit?: bigint }[];
  }

  const scenarios: Scenario[] = [
    { name: "a recipient whose balance would pass 2^256 - 1", accounts: [[fresh, { balance: maxBalance }]], transfers: [{ from: 0, to: fresh, value: 1n }] },
    {
      name: "an empty miner holding storage, paid nothing beyond the base fee",
      accounts: [[miner, { balance: 0n, storage: slotOne }]],
      minimumGasPrice: 1n,
      transfers: [{ from: 0, to: second, value: 5n, gasPrice: 1n }],
    },
    {
      name: "an empty miner holding storage, paid more than the base fee",
      accounts: [[miner, { balance: 0n, storage: slotOne }]],
      minimumGasPrice: 1n,
      transfers: [{ from: 0, to: second, value: 5n, gasPrice: 3n }],
    },
    { name: "an empty miner holding storage, with no fee", accounts: [[miner, { balance: 0n, storage: slotOne }]], transfers: [{ from: 0, to: second, value: 5n }] },
    {
      name: "an empty account holding storage, sent value and nothing",
      accounts: [[emptyWithStorage, { balance: 0n, storage: slotOne }]],
      transfers: [
        { from: 0, to: emptyWithStorage },
        { from: 1, to: emptyWithStorage, value: 3n },
      ],
    },
    {
      name: "the miner as sender and as recipient, and a transfer to oneself",
      accounts: [[miner, { balance: 10n ** 18n }]],
      minimumGasPrice: 1n,
      transfers: [
        { from: 0, to: miner, value: 7n, gasPrice: 2n },
        { from: 0, to: first, value: 9n, gasPrice: 1n, gasLimit: 30_000n },
        { from: 1, to: fresh, value: 1n, gasPrice: 4n },
        { from: 1, to: fresh, gasPrice: 1n },
      ],
    },
    {
      name: "a sender with all it has",
      accounts: [[fresh, { balance: 21_000n * 2n + 5n }]],
      minimumGasPrice: 2n,
      transfers: [{ from: 0, to: fresh, value: 1n, gasPrice: 2n }],
    },
  ];

  const runBlock = async (scenario: Scenario, plainTransfers: boolean) => {
    const alloc = new Map(network.genesis.alloc);
    for (const [address, account] of scenario.accounts ?? []) alloc.set(address.slice(2), account);
    const database = new StateDatabase(createMemoryStore(), common);
    const genesis = await buildGenesisBlock({ ...network.genesis, alloc }, database);
    const builder = await BlockBuilder.create(common, database.at(genesis.header.fields.stateRoot), async () => undefined, { plainTransfers });
    const nonces = [0, 0];
    const transactions: ChainTransaction[] = [];
    for (const { from, to, value = 0n, gasPrice = 0n, gasLimit = 21_000n } of scenario.transfers) {
      const raw = await wallets[from]!.signTransaction({ type: 0, chainId, nonce: nonces[from]!++, to, value, gasPrice, gasLimit });
      transactions.push(decodeRawTransaction(hexToBytes(raw), common));
    }
    const built = await builder.build(
      {
        parent: genesis,
        coinbase: hexToBytes(miner),
        timestamp: genesis.header.fields.timestamp + 1n,
        gasLimit: genesis.header.fields.gasLimit,
        minimumGasPrice: scenario.minimumGasPrice ?? 0n,
        difficulty: genesis.header.fields.difficulty,
        extraData: new Uint8Array(),
      },
      transactions,
    );
    return {
      stateRoot: bytesToUnprefixedHex(built.block.header.fields.stateRoot),
      receipts: built.receipts.map(({ success, gasUsed, cumulativeGasUsed, logs }) => ({ success, gasUsed, cumulativeGasUsed, logs: logs.length })),
      skipped: built.skipped.map(({ reason }) => reason),
    };
  };

  for (const scenario of scenarios) {
    it(scenario.name, async () => {
      const withPlainTransfers = await runBlock(scenario, true);
      expect(withPlainTransfers.skipped).to.deep.equal([]);
      expect(withPlainTransfers).to.deep.equal(await runBlock(scenario, false));
    });
  }
});
