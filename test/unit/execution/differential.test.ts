// The node's execution path (native crypto, ExecutionRules, ChainStateManager with its storage
// write fix and kept storage tries, the remembered trie reads, the wrapped opcodes and the kept code
// analysis, one-pass roots, plain transfers without the EVM and calls without runTx) against @ethereumjs/vm as it comes (its own Common, state manager and
// JavaScript crypto), on a few hundred generated transactions: after every block the state roots,
// and for every transaction its status, gas and logs, must be the same.
import { expect } from "chai";
import { createBlock } from "@ethereumjs/block";
import { Common, Mainnet } from "@ethereumjs/common";
import { createLegacyTxFromRLP } from "@ethereumjs/tx";
import { Account, Address, bigIntToBytes, bytesToHex, setLengthLeft } from "@ethereumjs/util";
import { createVM, runTx } from "@ethereumjs/vm";
import { AbiCoder, Interface, Wallet, getCreateAddress, keccak256, toUtf8Bytes } from "ethers";
import type { Block } from "../../../src/chain/block.js";
import { buildGenesisBlock } from "../../../src/chain/genesis.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction, type ChainTransaction } from "../../../src/chain/transactions.js";
import { hexToBytes } from "../../../src/common/hex.js";
import { BlockBuilder } from "../../../src/execution/blockBuilder.js";
import { createExecutionRules, executionHardfork, extraEips } from "../../../src/execution/rules.js";
import { StateDatabase } from "../../../src/state/stateDatabase.js";
import { createMemoryStore } from "../../../src/storage/keyValueStore.js";
import { compileFixture } from "../../helpers/solidity.js";
import { seededRandom } from "../../helpers/seededRandom.js";

const chainId = 33n;
const blockCount = 30;
const transactionsPerBlock = 10;

describe("execution: the node's fast path against the engine's defaults", function () {
  this.timeout(120_000);

  it("gives the same state roots and receipts over generated blocks", async () => {
    const network = findNetworkProfile(33)!;
    const wallets = network.developmentAccounts.map((account) => new Wallet(keccak256(toUtf8Bytes(account.seed))));
    const nonces = wallets.map(() => 0);
    const next = seededRandom(42);
    const token = compileFixture("Token.sol", "Token");
    const probe = compileFixture("Probe.sol", "Probe");
    const frames = compileFixture("Frames.sol", "Frames");
    const framesInterface = new Interface(frames.abi as never);
    const tokenInterface = new Interface(token.abi as never);
    const probeInterface = new Interface(probe.abi as never);

    // The node's path.
    const common = createExecutionRules(chainId);
    const state = new StateDatabase(createMemoryStore(), common);
    let parent: Block = await buildGenesisBlock(network.genesis, state);
    const minerBuilder = await BlockBuilder.create(common, state.at(parent.header.fields.stateRoot), async () => undefined);

    // The engine as it comes, on the same genesis accounts.
    const plainCommon = new Common({ chain: { ...Mainnet, chainId: Number(chainId) }, hardfork: executionHardfork, eips: [...extraEips] });
    const plain = await createVM({ common: plainCommon });
    for (const [address, account] of network.genesis.alloc) await plain.stateManager.putAccount(new Address(hexToBytes(`0x${address}`)), new Account(account.nonce ?? 0n, account.balance));
    expect(bytesToHex(await plain.stateManager.getStateRoot()), "genesis root").to.equal(bytesToHex(parent.header.fields.stateRoot));

    const sign = async (sender: number, fields: { to?: string; data?: string; value?: bigint; gasLimit: bigint; gasPrice?: bigint }): Promise<ChainTransaction> => {
      const raw = await wallets[sender]!.signTransaction({ type: 0, chainId, nonce: nonces[sender]!++, gasPrice: fields.gasPrice ?? 0n, value: 0n, ...fields });
      return decodeRawTransaction(hexToBytes(raw), common);
    };
    const tokenAddress = getCreateAddress({ from: wallets[0]!.address, nonce: 0 });
    const probeAddress = getCreateAddress({ from: wallets[1]!.address, nonce: 0 });
    const framesAddress = getCreateAddress({ from: wallets[2]!.address, nonce: 0 });
    const pick = (count: number) => next() % count;
    const coinbaseHex = "0x00000000000000000000000000000000000000cb";

    /** One generated transaction: transfers, token moves, storage loops, reverts, nested frames, creations. */
    const generate = async (): Promise<ChainTransaction> => {
      const sender = pick(wallets.length);
      const other = wallets[pick(wallets.length)]!.address;
      switch (pick(8)) {
        case 0: {
          // Value transfers, which the node runs without the EVM when it can (execution/plainTransfers.ts):
          // to another account, to itself, to the miner, to fresh accounts (a zero value leaves them
          // absent), to a precompile, to a contract; with room to spare in the gas limit.
          const gasPrice = BigInt(pick(3));
          const value = BigInt(pick(3)) * BigInt(pick(1_000_000));
          const gasLimit = pick(4) === 0 ? 30_000n : 21_000n;
          const recipients = [other, wallets[sender]!.address, coinbaseHex, `0x${(0xf000 + pick(40)).toString(16).padStart(40, "0")}`, `0x${(1 + pick(9)).toString(16).padStart(40, "0")}`, tokenAddress];
          return sign(sender, { to: recipients[pick(recipients.length)], value, gasLimit, gasPrice });
        }
        case 1:
          return sign(0, { to: tokenAddress, data: tokenInterface.encodeFunctionData("transfer", [other, BigInt(pick(1000))]), gasLimit: 100_000n });
        case 2:
          return sign(sender, { to: probeAddress, data: probeInterface.encodeFunctionData("spin", [pick(40)]), gasLimit: 1_000_000n });
        case 3: {
          // Clearing the slot earns a refund; setting it back costs the full store.
          const data = pick(2) === 0 ? probeInterface.encodeFunctionData("clearStored") : probeInterface.encodeFunctionData("setStored", [BigInt(pick(5))]);
          return sign(sender, { to: probeAddress, data, gasLimit: 100_000n });
        }
        case 4:
          return sign(sender, { to: probeAddress, data: probeInterface.encodeFunctionData("failWithReason", ["nope"]), gasLimit: 60_000n });
        case 5:
          // Too little gas for the loop: an out-of-gas failure that still pays.
          return sign(sender, { to: probeAddress, data: probeInterface.encodeFunctionData("spin", [200]), gasLimit: 40_000n });
        case 6: {
          // Child frames of every kind (failing after a log, out of gas, with value, delegated,
          // precompiles, a creation), or a top frame that logs and writes before it reverts.
          const data = pick(3) === 0 ? framesInterface.encodeFunctionData("noteThenFail", [BigInt(pick(10))]) : framesInterface.encodeFunctionData("nest", [BigInt(pick(10))]);
          return sign(sender, { to: framesAddress, data, value: BigInt(pick(3)) * 1000n, gasLimit: 1_000_000n });
        }
        default:
          return sign(sender, { data: probe.bytecode, gasLimit: 1_000_000n });
      }
    };

    for (let blockIndex = 0; blockIndex < blockCount; blockIndex++) {
      const transactions: ChainTransaction[] = [];
      if (blockIndex === 0) {
        const constructorArguments = AbiCoder.defaultAbiCoder().encode(["string", "string", "uint256"], ["Diff", "DIF", 10n ** 24n]).slice(2);
        transactions.push(
          await sign(0, { data: token.bytecode + constructorArguments, gasLimit: 3_000_000n }),
          await sign(1, { data: probe.bytecode, gasLimit: 3_000_000n }),
          await sign(2, { data: frames.bytecode, gasLimit: 3_000_000n }),
        );
      } else {
        for (let count = 0; count < transactionsPerBlock; count++) transactions.push(await generate());
      }
      const template = {
        parent,
        coinbase: hexToBytes(coinbaseHex),
        timestamp: parent.header.fields.timestamp + 1n + BigInt(pick(20)),
        gasLimit: parent.header.fields.gasLimit,
        minimumGasPrice: 0n,
        difficulty: parent.header.fields.difficulty,
        extraData: new Uint8Array(),
      };
      // Odd blocks on the one builder the miner keeps (warm caches across blocks), even blocks on a
      // new one at the parent's root (cold caches: reads go to the tries, as for calls and traces).
      const builder = blockIndex % 2 === 1 ? minerBuilder : await BlockBuilder.create(common, state.at(parent.header.fields.stateRoot), async () => undefined);
      if (builder === minerBuilder) await minerBuilder.resetTo(parent.header.fields.stateRoot);
      const built = await builder.build(template, transactions);
      expect(built.skipped, `block ${blockIndex + 1} skipped transactions`).to.deep.equal([]);

      const engineBlock = createBlock(
        {
          header: {
            number: parent.number + 1n,
            coinbase: new Address(template.coinbase),
            timestamp: template.timestamp,
            gasLimit: template.gasLimit,
            baseFeePerGas: 0n,
            difficulty: 0n,
            mixHash: setLengthLeft(bigIntToBytes(template.difficulty), 32),
          },
        },
        { common: plainCommon, skipConsensusFormatValidation: true },
      );
      let blockGasUsed = 0n;
      for (const [index, transaction] of transactions.entries()) {
        const result = await runTx(plain, { tx: createLegacyTxFromRLP(transaction.raw, { common: plainCommon }), block: engineBlock, blockGasUsed, skipHardForkValidation: true });
        blockGasUsed += result.totalGasSpent;
        const receipt = built.receipts[index]!;
        const where = `block ${blockIndex + 1}, transaction ${index}`;
        expect(receipt.success, `${where} status`).to.equal(result.execResult.exceptionError === undefined);
        expect(receipt.gasUsed, `${where} gas`).to.equal(result.totalGasSpent);
        expect(receipt.logs.map((log) => [bytesToHex(log.address), log.topics.map(bytesToHex), bytesToHex(log.data)]), `${where} logs`).to.deep.equal(
          (result.execResult.logs ?? []).map(([address, topics, data]) => [bytesToHex(address), topics.map(bytesToHex), bytesToHex(data)]),
        );
      }
      expect(bytesToHex(built.block.header.fields.stateRoot), `state root after block ${blockIndex + 1}`).to.equal(bytesToHex(await plain.stateManager.getStateRoot()));
      parent = built.block;
    }
  });
});
