// mnr_: merged mining for parent-chain pools (reference: MnrModuleImpl; network brief 8.1). The
// parameters come in the reference's form, hex without 0x (0x is taken too); each submission form
// becomes the same proof (header, coinbase without witness, the coinbase's merkle branch) for the
// merged-mining server.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { BlockImportedResult, MinerWork, SubmittedBlockInfo } from "../../../generated/types.js";
import { bytesToHex, toQuantity } from "../../common/hex.js";
import type { MergedMiningServer, MergedMiningWork, MiningTemplate, ParentChainProof, SubmissionOutcome } from "../../mining/mergedMiningServer.js";
import { proofFromMerkleBranch, proofFromParentBlock, proofFromTransactionIds, type ProofAssembly, type SubmissionPart } from "../../mining/parentSubmission.js";
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

export function createMnrHandlers(deps: MnrDependencies): NamespaceHandlers<"mnr", RpcCallContext> {
  const { mergedMining } = deps;
  return {
    mnr_getWork: () => {
      const work = mergedMining.getWork();
      if (!(work instanceof Promise)) return workAnswer(work);
      return withErrorsMapped(() => work, (error) => devChainErrorToRpc(error, 0)).then(workAnswer);
    },
    mnr_submitParentBlock: async ([parentBlockHex]) => submitted(await mergedMining.submit(assembled(proofFromParentBlock(hexBytes(parentBlockHex)), parameterNames.block))),
    mnr_submitParentBlockTransactions: async ([, blockHeaderHex, coinbaseHex, txnHashesHex]) => {
      // Transaction ids come in display order, as explorers and getblocktemplate show them.
      const txids = hashList(txnHashesHex).map((txid) => txid.reverse());
      if (txids.length === 0) throw invalidParamsError("invalid argument 3: txnHashesHex holds no transaction id (the coinbase's comes first)");
      return submitted(await mergedMining.submit(assembled(proofFromTransactionIds(hexBytes(blockHeaderHex), hexBytes(coinbaseHex), txids), parameterNames.withTransactionIds)));
    },
    mnr_submitParentBlockPartialMerkle: async ([, blockHeaderHex, coinbaseHex, merkleHashesHex, blockTxnCountHex]) => {
      // The coinbase's id first (not used: the node hashes the coinbase), then its branch's siblings
      // bottom-up, each in internal byte order, as a pool hashes them (the reference reverses each
      // to store it and back to check it).
      const hashes = hashList(merkleHashesHex);
      if (hashes.length === 0) throw mergedMiningEmptyMerkleHashesError;
      const transactionCount = BigInt(`0x${strip0x(blockTxnCountHex)}`);
      return submitted(await mergedMining.submit(assembled(proofFromMerkleBranch(hexBytes(blockHeaderHex), hexBytes(coinbaseHex), hashes.slice(1), transactionCount), parameterNames.withBranch)));
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

/** Each method's parameter (position and name) for each part a submission may be refused on. */
const parameterNames = {
  block: { block: [0, "parentBlockHex"] },
  withTransactionIds: { coinbase: [2, "coinbaseHex"] },
  withBranch: { coinbase: [2, "coinbaseHex"], transactionCount: [4, "blockTxnCountHex"] },
} as const satisfies Record<string, Partial<Record<SubmissionPart, readonly [number, string]>>>;

/** The proof, or -32602 naming the parameter that did not parse. */
function assembled(assembly: ProofAssembly, names: Partial<Record<SubmissionPart, readonly [number, string]>>): ParentChainProof {
  if (assembly.ok) return assembly.proof;
  const [argument, name] = names[assembly.part] ?? [0, assembly.part];
  throw invalidParamsError(`invalid argument ${argument}: ${name}: ${assembly.reason}`);
}
