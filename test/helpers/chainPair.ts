// Two nodes' chain services in one process (in memory, mining off), and transfers signed by the
// regtest development accounts: a block mined on one is imported into the other.
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { Block } from "../../src/chain/block.js";
import { decodeRawTransaction, type ChainTransaction } from "../../src/chain/transactions.js";
import { createLogger } from "../../src/common/logger.js";
import { hexToBytes } from "../../src/common/hex.js";
import { defaultNodeOptions, findNetworkProfile, openChainServices, type ChainOptions, type ChainServices } from "../../src/node/index.js";

export async function openTestChain(chain: Partial<ChainOptions> = {}): Promise<ChainServices> {
  return openChainServices(findNetworkProfile(33)!, { dataDir: undefined, inMemory: true }, { ...defaultNodeOptions.chain, mining: { kind: "off" }, ...chain }, createLogger("silent"));
}

/** A legacy transfer of `value` wei from the development account with `seed`, at `nonce`. */
export async function signedTransfer(services: ChainServices, seed: string, nonce: number, to: string, value = 5n): Promise<ChainTransaction> {
  const wallet = new Wallet(keccak256(toUtf8Bytes(seed)));
  const raw = await wallet.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice: 0n, to, value });
  return decodeRawTransaction(hexToBytes(raw), services.common);
}

/** A block as another node receives it: encoded and decoded again, senders recovered. */
export function asReceived(block: Block, receiver: ChainServices): Block {
  return Block.decode(block.encode(), receiver.common, receiver.typedTransactions);
}

/** Mines `count` blocks on `services`, each with the transactions `transactionsFor(index)` gives. */
export async function mineBlocks(services: ChainServices, count: number, transactionsFor: (index: number) => Promise<ChainTransaction[]> = async () => []): Promise<Block[]> {
  const blocks: Block[] = [];
  for (let index = 0; index < count; index++) blocks.push(await services.miner.mineBlock(await transactionsFor(index)));
  return blocks;
}

/** A signed creation (nonce 0) whose init code emits one log with `topic` and deploys nothing. */
export async function creationEmitting(seed: string, topic: string): Promise<string> {
  const initCode = `0x7f${topic.slice(2)}60006000a100`;
  return new Wallet(keccak256(toUtf8Bytes(seed))).signTransaction({ type: 0, chainId: 33n, nonce: 0, gasLimit: 100_000n, gasPrice: 0n, data: initCode });
}
