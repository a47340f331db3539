// mnr_: merged mining for parent-chain pools (reference: MnrModuleImpl; network brief 8.1). The
// parameters come in the reference's form, hex without 0x (0x is taken too); each submission form
// becomes the same proof (header, coinbase without witness, the coinbase's merkle branch) for the
// merged-mining server.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { BlockImportedResult, MinerWork, SubmittedBlockInfo } from "../../../generated/types.js";
import { bytesToHex, toQuantity } from "../../common/hex.js";
import { parseParentBlock, parseParentTransaction } from "../../consensus/parentBlock.js";
import { merkleBranchOfCoinbase } from "../../consensus/parentMerkleBranch.js";
import type { MergedMiningServer, MergedMiningWork, MiningTemplate, ParentChainProof, SubmissionOutcome } from "../../mining/mergedMiningServer.js";
import type { RpcCallContext } from "../dispatch.js";
import {
  devChainErrorToRpc,
  invalidParamsError,
  mergedMiningEmptyMerkleHashesError,
  mergedMiningInvalidBlockError,
  mergedMiningRateLimitedError,
  mergedMiningWorkNotFoundError,
  withErrorsMapped,
} from "../errors.js";

export interface MnrDependencies {
  mergedMining: MergedMiningServer;
}

const hashSize = 32;

export function createMnrHandlers(deps: MnrDependencies): NamespaceHandlers<"mnr", RpcCallContext> {
  const { mergedMining } = deps;
  return {
    mnr_getWork: () => {
      const work = mergedMining.getWork();
      if (!(work instanceof Promise)) return workAnswer(work);
      return withErrorsMapped(() => work, (error) => devChainErrorToRpc(error, 0)).then(workAnswer);
    },
    mnr_submitParentBlock: async ([parentBlockHex]) => {
      const parsed = parseParentBlock(hexBytes(parentBlockHex));
      if (!parsed.ok) throw invalidParamsError(`invalid argument 0: parentBlockHex is not a parent-chain block: ${parsed.reason}`);
      return submitted(await mergedMining.submit({ parentHeader: parsed.header, coinbase: parsed.coinbase, merkleBranch: merkleBranchOfCoinbase(parsed.txids) }));
    },
    mnr_submitParentBlockTransactions: async ([, blockHeaderHex, coinbaseHex, txnHashesHex]) => {
      // Transaction ids come in display order, as explorers and getblocktemplate show them.
      const txids = hashList(txnHashesHex).map((txid) => txid.reverse());
      if (txids.length === 0) throw invalidParamsError("invalid argument 3: txnHashesHex holds no transaction id (the coinbase's comes first)");
      return submitted(await mergedMining.submit({ parentHeader: hexBytes(blockHeaderHex), coinbase: coinbaseParam(coinbaseHex, 2), merkleBranch: merkleBranchOfCoinbase(txids) }));
    },
    mnr_submitParentBlockPartialMerkle: async ([, blockHeaderHex, coinbaseHex, merkleHashesHex, blockTxnCountHex]) => {
      // The coinbase's id first (not used: the node hashes the coinbase), then its branch's siblings
      // bottom-up, each in internal byte order, as a pool hashes them (the reference reverses each
      // to store it and back to check it).
      const hashes = hashList(merkleHashesHex);
      if (hashes.length === 0) throw mergedMiningEmptyMerkleHashesError;
      const siblings = hashes.slice(1);
      const transactionCount = BigInt(`0x${strip0x(blockTxnCountHex)}`);
      if (transactionCount === 0n) throw invalidParamsError("invalid argument 4: blockTxnCountHex is 0; a parent block holds at least its coinbase");
      const branchLength = coinbaseBranchLength(transactionCount);
      if (branchLength !== siblings.length) {
        throw invalidParamsError(`invalid argument 4: a parent block of ${transactionCount} transactions has a coinbase merkle branch of ${branchLength} hashes, but merkleHashesHex holds ${siblings.length} after the coinbase id`);
      }
      const merkleBranch = new Uint8Array(siblings.length * hashSize);
      siblings.forEach((sibling, index) => merkleBranch.set(sibling, index * hashSize));
      return submitted(await mergedMining.submit({ parentHeader: hexBytes(blockHeaderHex), coinbase: coinbaseParam(coinbaseHex, 2), merkleBranch } satisfies ParentChainProof));
    },
  };
}

/** The JSON of each template, made once: pools poll for the same work many times. */
const workTexts = new WeakMap<MiningTemplate, Omit<MinerWork, "notify">>();

function workAnswer({ template, notify }: MergedMiningWork): MinerWork {
  let texts = workTexts.get(template);
  if (texts === undefined) {
    texts = {
      blockHashForMergedMining: bytesToHex(template.hashForMergedMining),
      target: bytesToHex(template.targetBytes),
      feesPaidToMiner: template.block.header.fields.paidFees.toString(10),
      parentBlockHash: bytesToHex(template.parentHash),
    };
    workTexts.set(template, texts);
  }
  return { ...texts, notify };
}

/** The answer to a submission, or the reference's -33000 refusal. */
function submitted(result: SubmissionOutcome): SubmittedBlockInfo {
  switch (result.kind) {
    case "rateLimited":
      throw mergedMiningRateLimitedError;
    case "unknownWork":
      throw mergedMiningWorkNotFoundError(result.hashForMergedMining);
    case "invalidProof":
      throw mergedMiningInvalidBlockError(result.block.hash, result.block.header.hashForMergedMining, result.block.number, result.reason);
    case "imported": {
      const { status, block } = result.outcome;
      // The hex of the result's ASCII name, as the reference answers it (the schema's enum lists each).
      const blockImportedResult = bytesToHex(new TextEncoder().encode(status)) as BlockImportedResult;
      return { blockImportedResult, blockHash: bytesToHex(block.hash), blockIncludedHeight: toQuantity(block.number) };
    }
  }
}

function strip0x(hex: string): string {
  return hex.startsWith("0x") ? hex.slice(2) : hex;
}

/** Hex the schema has checked (even length, 0x optional) as bytes. */
function hexBytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(strip0x(hex), "hex"));
}

/** Whitespace-separated 32-byte hashes, as sent. */
function hashList(text: string): Uint8Array[] {
  return text
    .split(/\s+/)
    .filter((entry) => entry.length > 0)
    .map(hexBytes);
}

/** The coinbase parameter: one parent-chain transaction, taken without its witness (its txid's form). */
function coinbaseParam(hex: string, argument: number): Uint8Array {
  const bytes = hexBytes(hex);
  const parsed = parseParentTransaction(bytes);
  if (!parsed.ok) throw invalidParamsError(`invalid argument ${argument}: coinbaseHex is not a parent-chain transaction: ${parsed.reason}`);
  if (parsed.end !== bytes.length) throw invalidParamsError(`invalid argument ${argument}: coinbaseHex has ${bytes.length - parsed.end} bytes after its transaction`);
  return parsed.withoutWitness;
}

/** Levels of a merkle tree over `count` leaves: the length of any leaf's branch. */
function coinbaseBranchLength(count: bigint): number {
  let levels = 0;
  for (let width = count; width > 1n; width = (width + 1n) / 2n) levels++;
  return levels;
}
