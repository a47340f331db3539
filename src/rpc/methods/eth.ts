// eth_: chain identity, accounts, blocks, transactions, receipts, state reads and sending.
import type { Common } from "@ethereumjs/common";
import { Address, setLengthLeft, type Account } from "@ethereumjs/util";
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { BlockParameter } from "../../../generated/types.js";
import type { MerkleStateManager } from "@ethereumjs/statemanager";
import { Block } from "../../chain/block.js";
import type { Chain } from "../../chain/chain.js";
import type { NetworkProfile } from "../../chain/networks.js";
import { bytesToHex, hexToBytes, storageSlotFromHex, toQuantity } from "../../common/hex.js";
import type { ImpersonatedAccounts } from "../../accounts/impersonation.js";
import type { Wallet } from "../../accounts/wallet.js";
import type { Miner } from "../../mining/miner.js";
import type { PendingState } from "../../mining/pendingState.js";
import type { StateDatabase } from "../../state/stateDatabase.js";
import type { TransactionPool } from "../../txpool/transactionPool.js";
import { findBlockByNumberOrTag, findBlockForReceipts, resolveStateBlock } from "../blockParameters.js";
import { createEthAccountHandlers } from "./ethAccounts.js";
import { createAccessListHandlers } from "./callTracing.js";
import type { TraceService } from "../../tracing/index.js";
import type { RpcCallContext } from "../dispatch.js";
import { blockHashNotFoundError, blockNotFoundError, senderAccountNotFoundError, stateNotFoundError, walletErrorToRpc, withErrorsMapped } from "../errors.js";
import { formatBlock, formatReceipt, formatTransaction } from "../format.js";
import { createEthCallHandlers, type EthCallDependencies } from "./ethCalls.js";
import { createEthFeeHandlers } from "./ethFees.js";
import { createEthMiningHandlers, type EthMiningDependencies } from "./ethMining.js";
import { createEthFilterHandlers, type EthFilterDependencies } from "./ethFilters.js";
import { createEthSubscriptionHandlers } from "./ethSubscriptions.js";
import type { TransactionSending } from "./transactionSending.js";

/** Version of the peer protocol this node speaks (62, as the reference node). */
export const protocolVersion = 62;

/** eth_gasPrice suggests the best block's minimum gas price times 1.1 (the reference's default multiplier), rounded down. */
const gasPriceMultiplier = { numerator: 11n, denominator: 10n } as const;

export { defaultSendGas, defaultSendGasPrice } from "./transactionSending.js";

export interface EthDependencies extends EthCallDependencies, EthFilterDependencies, EthMiningDependencies {
  network: NetworkProfile;
  common: Common;
  chain: Chain;
  state: StateDatabase;
  pool: TransactionPool;
  miner: Miner;
  pendingState: PendingState;
  wallet: Wallet;
  /** eth_createAccessList runs its calls through the trace path. */
  tracer: TraceService;
  /** Senders eth_sendTransaction takes without their key (anvil_/hardhat_impersonateAccount). */
  impersonated: ImpersonatedAccounts;
  /** Shared with personal_ (rpc/methods/index.ts), and with the look-ahead of batches. */
  sending: TransactionSending;
  /** Whether the node takes typed transactions (--typed-transactions): its blocks then show baseFeePerGas. */
  typedTransactions: boolean;
  /** A long sync's progress while one runs (sync/syncManager.ts); absent or undefined: not syncing. */
  syncProgress?: () => { readonly startingBlock: bigint; readonly currentBlock: bigint; readonly highestBlock: bigint } | undefined;
}

export function createEthHandlers(deps: EthDependencies): NamespaceHandlers<"eth", RpcCallContext> {
  const { chain, state, pool, miner, wallet, pendingState, sending } = deps;
  const chainIdQuantity = toQuantity(deps.network.chainId);

  /** Reads the state a block parameter selects: "pending" is the tip after the executable pool transactions. */
  async function readState<T>(block: BlockParameter | undefined, read: (view: MerkleStateManager) => Promise<T>): Promise<T> {
    if (block === "pending") return pendingState.read(read);
    const selected = await resolveStateBlock(chain, block);
    const view = state.reader(selected.header.fields.stateRoot);
    if (view === undefined) throw stateNotFoundError(bytesToHex(selected.hash));
    return read(view);
  }

  /**
   * What `answer` makes of an account at a block parameter. On the head ("latest") and with
   * the head's state view already holding the account, the answer comes at once, with no promise:
   * a client polling balances or nonces mostly asks for the same few accounts.
   */
  function readAccount<T>(block: BlockParameter | undefined, address: string, answer: (account: Account | undefined) => T): T | Promise<T> {
    if (block === "latest") {
      const known = state.reader(chain.head.header.fields.stateRoot)?.cachedAccount(new Address(hexToBytes(address)));
      if (known !== undefined) return answer(known ?? undefined);
    }
    return readState(block, async (view) => answer(await view.getAccount(new Address(hexToBytes(address)))));
  }

  async function formatBlockWithDifficulty(block: Block | undefined, fullTransactions: boolean) {
    if (block === undefined) return null;
    const totalDifficulty = (await chain.getTotalDifficulty(block.hash)) ?? 0n;
    return formatBlock(block, totalDifficulty, fullTransactions, deps.typedTransactions);
  }

  function transactionAt(block: Block | undefined, index: string) {
    const position = Number(BigInt(index));
    const transaction = block?.transactions[position];
    if (block === undefined || transaction === undefined) return null;
    return formatTransaction(transaction, { blockHash: block.hash, blockNumber: block.number, index: position, minimumGasPrice: block.header.fields.minimumGasPrice });
  }

  return {
    ...createEthCallHandlers(deps),
    ...createEthFeeHandlers(deps),
    ...createEthAccountHandlers(deps),
    ...createAccessListHandlers(deps),
    ...createEthFilterHandlers(deps),
    ...createEthSubscriptionHandlers(),
    ...createEthMiningHandlers(deps),
    eth_chainId: () => chainIdQuantity,
    eth_protocolVersion: () => toQuantity(protocolVersion),
    eth_accounts: () => withErrorsMapped(async () => (await wallet.listAccounts()).map(bytesToHex), walletErrorToRpc),
    eth_coinbase: () => bytesToHex(miner.coinbase),
    eth_mining: () => miner.isMining,
    eth_gasPrice: () => toQuantity((chain.head.header.fields.minimumGasPrice * gasPriceMultiplier.numerator) / gasPriceMultiplier.denominator),
    // A lone node is never behind a peer.
    eth_syncing: () => {
      const progress = deps.syncProgress?.();
      if (progress === undefined) return false;
      return { startingBlock: toQuantity(progress.startingBlock), currentBlock: toQuantity(progress.currentBlock), highestBlock: toQuantity(progress.highestBlock) };
    },
    eth_blockNumber: () => toQuantity(chain.head.number),

    eth_getBalance: ([address, block]) => readAccount(block, address, (account) => toQuantity(account?.balance ?? 0n)),
    eth_getTransactionCount: ([address, block]) => {
      // The pool's next nonce also counts queued transactions that a filled gap made executable.
      if (block === "pending") return pool.nextNonce(hexToBytes(address)).then(toQuantity);
      return readAccount(block, address, (account) => toQuantity(account?.nonce ?? 0n));
    },
    eth_getStorageAt: ([address, position, block]) => {
      const slot = storageSlotFromHex(position);
      return readState(block, async (view) => bytesToHex(setLengthLeft(await view.getStorage(new Address(hexToBytes(address)), slot), 32)));
    },
    eth_getCode: ([address, block]) => readState(block, async (view) => bytesToHex(await view.getCode(new Address(hexToBytes(address))))),

    eth_getBlockByHash: async ([blockHash, fullTransactions]) => formatBlockWithDifficulty(await chain.getBlockByHash(hexToBytes(blockHash)), fullTransactions),
    eth_getBlockByNumber: async ([block, fullTransactions]) => formatBlockWithDifficulty(await findBlockByNumberOrTag(chain, block), fullTransactions),
    eth_getBlockTransactionCountByHash: async ([blockHash]) => {
      const block = await chain.getBlockByHash(hexToBytes(blockHash));
      return block === undefined ? null : toQuantity(block.transactions.length);
    },
    eth_getBlockTransactionCountByNumber: async ([block]) => {
      if (block === "pending") return toQuantity(pool.pending().length);
      const found = await findBlockByNumberOrTag(chain, block);
      if (found === undefined) throw blockNotFoundError(block);
      return toQuantity(found.transactions.length);
    },
    eth_getUncleCountByBlockHash: async ([blockHash]) => {
      const block = await chain.getBlockByHash(hexToBytes(blockHash));
      if (block === undefined) throw blockHashNotFoundError(blockHash);
      return toQuantity(block.uncles.length);
    },
    eth_getUncleCountByBlockNumber: async ([block]) => {
      const found = await findBlockByNumberOrTag(chain, block);
      if (found === undefined) throw blockNotFoundError(block);
      return toQuantity(found.uncles.length);
    },
    eth_getUncleByBlockHashAndIndex: async ([blockHash, uncleIndex]) => uncleAt(await chain.getBlockByHash(hexToBytes(blockHash)), uncleIndex),
    eth_getUncleByBlockNumberAndIndex: async ([block, uncleIndex]) => uncleAt(await findBlockByNumberOrTag(chain, block), uncleIndex),

    eth_getTransactionByHash: async ([transactionHash]) => {
      const hash = hexToBytes(transactionHash);
      const location = await chain.getTransactionLocation(hash);
      if (location !== undefined) return transactionAt(await chain.getBlockByHash(location.blockHash), toQuantity(location.index));
      // A pool transaction is visible while it is executable (reference: pending, not queued).
      const pending = pool.isPending(hash) ? pool.get(hash) : undefined;
      return pending === undefined ? null : formatTransaction(pending, undefined);
    },
    eth_getTransactionByBlockHashAndIndex: async ([blockHash, index]) => transactionAt(await chain.getBlockByHash(hexToBytes(blockHash)), index),
    eth_getTransactionByBlockNumberAndIndex: async ([block, index]) => transactionAt(await findBlockByNumberOrTag(chain, block), index),
    eth_getTransactionReceipt: async ([transactionHash]) => {
      const location = await chain.getTransactionLocation(hexToBytes(transactionHash));
      if (location === undefined) return null;
      const [block, receipts] = await Promise.all([chain.getBlockByHash(location.blockHash), chain.getReceipts(location.blockHash)]);
      if (block === undefined || receipts === undefined) return null;
      return formatReceipt(block, receipts, location.index);
    },
    eth_getBlockReceipts: async ([blockParameter]) => {
      const block = await findBlockForReceipts(chain, blockParameter);
      if (block === undefined) return null;
      if (block.transactions.length === 0) return [];
      const receipts = await chain.getReceipts(block.hash);
      if (receipts === undefined) return null;
      return block.transactions.map((_transaction, index) => formatReceipt(block, receipts, index));
    },
    eth_pendingTransactions: () => {
      const held = new Set(wallet.addresses().map((address) => bytesToHex(address)));
      return pool
        .pending()
        .filter((transaction) => held.has(bytesToHex(transaction.sender)))
        .map((transaction) => formatTransaction(transaction, undefined));
    },

    eth_sendRawTransaction: async ([signedTransaction]) => sending.submitRaw(signedTransaction),
    eth_sendTransaction: async ([submission]) => {
      const from = hexToBytes(submission.from);
      // A key the node holds signs; an impersonated account without one sends unsigned.
      if (!wallet.isUnlocked(from) && deps.impersonated.has(from)) return sending.submitImpersonated(await sending.prepare(submission), from);
      if (!wallet.isUnlocked(from)) throw senderAccountNotFoundError(submission.from);
      const raw = wallet.signTransaction(from, await sending.prepare(submission));
      if (raw === undefined) throw senderAccountNotFoundError(submission.from);
      return sending.submitOwn(raw, from);
    },
  };

  async function uncleAt(block: Block | undefined, uncleIndex: string) {
    const uncle = block?.uncles[Number(BigInt(uncleIndex))];
    if (uncle === undefined) return null;
    const totalDifficulty = (await chain.getTotalDifficulty(uncle.fields.parentHash)) ?? 0n;
    return formatBlock(new Block(uncle, []), totalDifficulty + uncle.fields.difficulty, false, deps.typedTransactions);
  }
}
