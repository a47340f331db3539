// eth_feeHistory and eth_maxPriorityFeePerGas on a chain without a fee market. A block's base fee
// is its minimum gas price (what BASEFEE returns on the reference chain), and a transaction's
// reward is what its gas price pays above it: the answers tools need to price a transaction
// (cast, forge and viem ask for them first), computed from the blocks as geth computes them.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { Block } from "../../chain/block.js";
import type { Chain } from "../../chain/chain.js";
import { effectiveGasPrice } from "../../chain/transactions.js";
import { toQuantity } from "../../common/hex.js";
import { findBlockByNumberOrTag } from "../blockParameters.js";
import type { RpcCallContext } from "../dispatch.js";
import { blockNotFoundError, invalidParamsError } from "../errors.js";

/** Most blocks one eth_feeHistory answers (geth's limit; a longer range is cut to it). */
const maxFeeHistoryBlocks = 1024n;
/** Blocks eth_maxPriorityFeePerGas looks back over. */
const priorityFeeBlocks = 20n;

export interface EthFeeDependencies {
  chain: Chain;
}

/** What each transaction of the block paid above its minimum gas price, with the gas it used, by reward. */
async function rewardsOf(chain: Chain, block: Block): Promise<{ reward: bigint; gasUsed: bigint }[]> {
  const receipts = (await chain.getReceipts(block.hash)) ?? [];
  const baseFee = block.header.fields.minimumGasPrice;
  return block.transactions
    .map((transaction, index) => {
      const price = effectiveGasPrice(transaction.tx, baseFee);
      return { reward: price > baseFee ? price - baseFee : 0n, gasUsed: receipts[index]?.gasUsed ?? 0n };
    })
    .sort((a, b) => (a.reward < b.reward ? -1 : a.reward > b.reward ? 1 : 0));
}

/** The block's rewards at the percentiles of its gas used (geth's walk: each transaction weighs its gas). */
async function percentileRewards(chain: Chain, block: Block, percentiles: readonly number[]): Promise<bigint[]> {
  const sorted = await rewardsOf(chain, block);
  if (sorted.length === 0) return percentiles.map(() => 0n);
  const blockGasUsed = Number(block.header.fields.gasUsed);
  let index = 0;
  let sumGasUsed = sorted[0]!.gasUsed;
  return percentiles.map((percentile) => {
    const threshold = BigInt(Math.floor((blockGasUsed * percentile) / 100));
    while (sumGasUsed < threshold && index < sorted.length - 1) sumGasUsed += sorted[++index]!.gasUsed;
    return sorted[index]!.reward;
  });
}

function checkPercentiles(percentiles: readonly number[]): void {
  percentiles.forEach((percentile, index) => {
    if (index > 0 && percentile < percentiles[index - 1]!) throw invalidParamsError(`invalid argument 2: reward percentile ${index} (${percentile}) is below the one before it`);
  });
}

export function createEthFeeHandlers(deps: EthFeeDependencies): Pick<NamespaceHandlers<"eth", RpcCallContext>, "eth_feeHistory" | "eth_maxPriorityFeePerGas"> {
  const { chain } = deps;
  return {
    eth_feeHistory: async ([blockCountQuantity, newestBlock, rewardPercentiles]) => {
      if (rewardPercentiles !== undefined) checkPercentiles(rewardPercentiles);
      const newest = await findBlockByNumberOrTag(chain, newestBlock);
      if (newest === undefined) throw blockNotFoundError(newestBlock);
      let blockCount = BigInt(blockCountQuantity);
      if (blockCount > maxFeeHistoryBlocks) blockCount = maxFeeHistoryBlocks;
      if (blockCount > newest.number + 1n) blockCount = newest.number + 1n;
      if (blockCount === 0n) return { oldestBlock: "0x0", baseFeePerGas: [], gasUsedRatio: [] };
      const oldest = newest.number - blockCount + 1n;
      const baseFeePerGas: string[] = [];
      const gasUsedRatio: number[] = [];
      const reward: string[][] = [];
      for (let number = oldest; number <= newest.number; number++) {
        const block = number === newest.number ? newest : await chain.getBlockByNumber(number);
        if (block === undefined) throw blockNotFoundError(toQuantity(number));
        const { minimumGasPrice, gasUsed, gasLimit } = block.header.fields;
        baseFeePerGas.push(toQuantity(minimumGasPrice));
        gasUsedRatio.push(gasLimit === 0n ? 0 : Number(gasUsed) / Number(gasLimit));
        if (rewardPercentiles !== undefined) reward.push((await percentileRewards(chain, block, rewardPercentiles)).map(toQuantity));
      }
      // The block after the newest has the next one's minimum gas price: a block copies its parent's.
      const next = newest.number < chain.head.number ? await chain.getBlockByNumber(newest.number + 1n) : undefined;
      baseFeePerGas.push(toQuantity((next ?? newest).header.fields.minimumGasPrice));
      return { oldestBlock: toQuantity(oldest), baseFeePerGas, gasUsedRatio, ...(rewardPercentiles === undefined ? {} : { reward }) };
    },

    eth_maxPriorityFeePerGas: async () => {
      const head = chain.head;
      const rewards: bigint[] = [];
      for (let number = head.number; number >= 0n && number > head.number - priorityFeeBlocks; number--) {
        const block = number === head.number ? head : await chain.getBlockByNumber(number);
        if (block !== undefined) for (const { reward } of await rewardsOf(chain, block)) rewards.push(reward);
      }
      rewards.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      return toQuantity(rewards.length === 0 ? 0n : rewards[Math.floor(rewards.length / 2)]!);
    },
  };
}
