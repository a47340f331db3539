// eth_getWork / eth_submitWork: the merged-mining work seen through the older interface, for a
// miner that knows nothing of parent-chain blocks. The reference has no eth_getWork; this mapping is
// the node's own (docs/design.md, openrpc.json):
//
//   eth_getWork  -> [hashForMergedMining, merkleRoot, target]
//     merkleRoot: the txid of a coinbase the node makes for the template (the built-in miner's form,
//     no prefix), i.e. the merkle root of a one-transaction parent block, as the header holds it.
//   the miner    -> header = u32le(0x20000000) ‖ 32 zero bytes ‖ merkleRoot ‖ u32le(nonce >> 32)
//                   ‖ u32le(0x207fffff) ‖ u32le(nonce & 0xffffffff)      (80 bytes)
//                   mixDigest = SHA-256(SHA-256(header)), byte-reversed: solved when mixDigest read
//                   as a big-endian number is at most target
//   eth_submitWork(nonce, hashForMergedMining, mixDigest) -> the node rebuilds the header from the
//     nonce, checks mixDigest is its hash, and submits header, coinbase and an empty merkle branch
//     through the merged-mining server: true when the block was imported.
import { encodeParentHeader, parentRegtestMaxTarget, sha256d, targetToCompact } from "../consensus/parentChain.js";
import type { MergedMiningServer, MiningTemplate, SubmissionOutcome } from "./mergedMiningServer.js";

/** BIP9's base version, as the built-in miner writes it. */
export const legacyWorkHeaderVersion = 0x20000000;
/** The compact target the header carries (regtest's largest; the merged-mining rule does not read it). */
export const legacyWorkHeaderBits = targetToCompact(parentRegtestMaxTarget);

export interface LegacyWorkPackage {
  readonly powHash: Uint8Array;
  readonly merkleRoot: Uint8Array;
  /** 32 bytes, big-endian. */
  readonly target: Uint8Array;
}

export function legacyWorkPackage(template: MiningTemplate): LegacyWorkPackage {
  return { powHash: template.hashForMergedMining, merkleRoot: template.nodeCoinbase.txid, target: template.targetBytes };
}

/** The 80-byte parent header a miner of `template` hashed for the 8-byte `nonce` (big-endian). */
export function legacyWorkHeader(template: MiningTemplate, nonce: Uint8Array): Uint8Array {
  const view = new DataView(nonce.buffer, nonce.byteOffset, nonce.byteLength);
  return encodeParentHeader({
    version: legacyWorkHeaderVersion,
    prevHash: new Uint8Array(32),
    merkleRoot: template.nodeCoinbase.txid,
    time: view.getUint32(0, false),
    bits: legacyWorkHeaderBits,
    nonce: view.getUint32(4, false),
  });
}

/** The mixDigest of a header: its SHA-256d in display order. */
export function legacyWorkDigest(header: Uint8Array): Uint8Array {
  return sha256d(header).reverse();
}

export type LegacyWorkVerdict = { kind: "unknownWork" } | { kind: "wrongDigest" } | SubmissionOutcome;

/** eth_submitWork: the solution's block imported through the server, or why not. */
export async function submitLegacyWork(server: MergedMiningServer, nonce: Uint8Array, powHash: Uint8Array, mixDigest: Uint8Array): Promise<LegacyWorkVerdict> {
  const template = server.template(powHash);
  if (template === undefined) return { kind: "unknownWork" };
  const header = legacyWorkHeader(template, nonce);
  if (Buffer.compare(legacyWorkDigest(header), mixDigest) !== 0) return { kind: "wrongDigest" };
  return server.submit({ parentHeader: header, coinbase: template.nodeCoinbase.coinbase, merkleBranch: new Uint8Array(0) }, template);
}
