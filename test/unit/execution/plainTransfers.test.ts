// Plain value transfers applied without the EVM (execution/plainTransfers.ts): what they change, and
// every case left to the engine, which must find the state untouched. That both paths reach the
// same state is the differential test's (differential.test.ts).
import { expect } from "chai";
import { Account, Address, bytesToHex } from "@ethereumjs/util";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { buildGenesisBlock } from "../../../src/chain/genesis.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction, type ChainTransaction } from "../../../src/chain/transactions.js";
import { hexToBytes } from "../../../src/common/hex.js";
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
