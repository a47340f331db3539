// The chain core without RPC: a chain, its pool and its miner on an in-memory store whose writes can
// be made to fail, and transfers signed by the development account "cow".
import { Account, Address } from "@ethereumjs/util";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { Chain } from "../../src/chain/chain.js";
import { findNetworkProfile } from "../../src/chain/networks.js";
import { decodeRawTransaction, type ChainTransaction } from "../../src/chain/transactions.js";
import { createLogger } from "../../src/common/logger.js";
import { hexToBytes } from "../../src/common/hex.js";
import { BlockBuilder } from "../../src/execution/blockBuilder.js";
import { createExecutionRules } from "../../src/execution/rules.js";
import { Miner, type MinerOptions, type MiningMode } from "../../src/mining/miner.js";
import { StateDatabase } from "../../src/state/stateDatabase.js";
import { createMemoryStore, type KeyValueStore, type StoreOperation } from "../../src/storage/keyValueStore.js";
import { PoolJournal } from "../../src/txpool/poolJournal.js";
import { TransactionPool } from "../../src/txpool/transactionPool.js";

/** Where harness transfers go. */
export const transferRecipient = "0x00000000000000000000000000000000000000aa";

/** Sees each batch once applied, with the store as it is then. */
type AfterWrite = (operations: readonly StoreOperation[], inner: KeyValueStore) => Promise<void>;

/** A memory store whose writes fail while `failing.on` is set; `afterWrite` (when set) sees each batch. */
export function storeWithFailingWrites(): { store: KeyValueStore; inner: KeyValueStore; failing: { on: boolean; afterWrite?: AfterWrite } } {
  const inner = createMemoryStore();
  const failing: { on: boolean; afterWrite?: AfterWrite } = { on: false };
  const store: KeyValueStore = {
    get: (key) => inner.get(key),
    getSync: (key) => inner.getSync(key),
    entries: (prefix) => inner.entries(prefix),
    write: async (operations) => {
      if (failing.on) throw new Error("no space left on device");
      await inner.write(operations);
      await failing.afterWrite?.(operations, inner);
    },
    close: () => inner.close(),
    location: "memory (failing writes)",
  };
  return { store, inner, failing };
}

/** A chain, pool and miner of the local network on a store whose writes can be made to fail. */
export async function minerOn(mode: MiningMode, minerOptions: Pick<MinerOptions, "writeQueue" | "clock" | "rules" | "parentMinerRandom"> = {}) {
  const network = findNetworkProfile(33)!;
  const common = createExecutionRules(network.chainId);
  const { store, inner, failing } = storeWithFailingWrites();
  const state = new StateDatabase(store, common);
  const chain = await Chain.open(store, state, common, network.genesis);
  const builder = await BlockBuilder.create(common, state.at(chain.tip.header.fields.stateRoot), (blockNumber) => chain.getCanonicalHashFromTip(blockNumber));
  const journal = new PoolJournal(store, common);
  const pool = new TransactionPool({
    observer: journal,
    async readAccount(address) {
      const account = (await state.reader(chain.tip.header.fields.stateRoot)!.getAccount(new Address(address))) ?? new Account();
      return { nonce: account.nonce, balance: account.balance };
    },
    limits: () => ({ blockGasLimit: chain.tip.header.fields.gasLimit, minimumGasPrice: 0n }),
  });
  const miner = new Miner(chain, pool, builder, { mode, coinbase: new Uint8Array(20), extraData: new Uint8Array(), ...minerOptions }, createLogger("silent"));
  const wallet = new Wallet(keccak256(toUtf8Bytes("cow")));
  /** A 5-wei transfer from cow with `nonce`. */
  const transfer = async (nonce: number): Promise<ChainTransaction> =>
    decodeRawTransaction(hexToBytes(await wallet.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice: 0n, to: transferRecipient, value: 5n })), common);
  return { network, common, store, inner, failing, state, chain, pool, journal, miner, transfer };
}
