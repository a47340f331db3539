// The coinbase of the parent-chain block the built-in miner makes up, serialized as Bitcoin does
// without witness (the form its txid hashes): version | inputs | outputs | lock time.
import { mergedMiningTag } from "../consensus/compressedCoinbase.js";

export interface ParentOutput {
  /** Satoshis. */
  value: bigint;
  script: Uint8Array;
}

/** 50 BTC, the subsidy the reference's regtest miner pays itself (MinerUtils). */
export const parentCoinbaseSubsidy = 50n * 100_000_000n;

/**
 * The output the miner pays: `<pubkey> OP_CHECKSIG` to the generator point (private key 1). The
 * reference makes a fresh key it never keeps; nothing reads this output, and a fixed one keeps the
 * coinbase reproducible.
 */
export const throwawayPayToPubkeyScript = Uint8Array.from(
  Buffer.from("21" + "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798" + "ac", "hex"),
);

/**
 * The reference's regtest coinbase (MinerUtils.getBitcoinCoinbaseTransaction): one input with an
 * empty script, 50 BTC to a throwaway key, then a zero-value output whose script is the raw bytes
 * `prefix ‖ RSKBLOCK: ‖ hashForMergedMining` (not a push: the rule only looks for the bytes).
 */
export function createParentCoinbase(prefix: Uint8Array, hashForMergedMining: Uint8Array): Uint8Array {
  const coinbase = new Uint8Array(parentCoinbaseLength(prefix.length, hashForMergedMining.length));
  writeParentCoinbase(coinbase, prefix, hashForMergedMining);
  return coinbase;
}

/** The bytes of createParentCoinbase's coinbase for a prefix of `prefixLength` bytes. */
export function parentCoinbaseLength(prefixLength: number, hashLength = 32): number {
  const scriptLength = prefixLength + mergedMiningTag.length + hashLength;
  return coinbaseHead.length + compactSizeLength(scriptLength) + scriptLength + 4;
}

/**
 * Writes createParentCoinbase's coinbase at the start of `out` (which holds at least
 * parentCoinbaseLength bytes); answers its length. Everything up to the commitment's script length
 * is the same for every block, and is copied.
 */
export function writeParentCoinbase(out: Uint8Array, prefix: Uint8Array, hashForMergedMining: Uint8Array): number {
  const scriptLength = prefix.length + mergedMiningTag.length + hashForMergedMining.length;
  out.set(coinbaseHead, 0);
  let offset = writeCompactSize(out, coinbaseHead.length, scriptLength);
  out.set(prefix, offset);
  offset += prefix.length;
  out.set(mergedMiningTag, offset);
  offset += mergedMiningTag.length;
  out.set(hashForMergedMining, offset);
  offset += hashForMergedMining.length;
  // lock time 0
  out.fill(0, offset, offset + 4);
  return offset + 4;
}

/** An output whose script is given in parts (written one after the other, not joined first). */
interface OutputInParts {
  value: bigint;
  script: readonly Uint8Array[];
  scriptLength: number;
}

/**
 * Written into one buffer sized up front: the built-in miner makes a coinbase for every block, and
 * joining a dozen small arrays cost more than the coinbase's hashing.
 */
export function encodeParentCoinbase(inputScript: Uint8Array, outputs: readonly (ParentOutput | OutputInParts)[]): Uint8Array {
  const parts = outputs.map((output) => (output.script instanceof Uint8Array ? { value: output.value, script: [output.script], scriptLength: output.script.length } : (output as OutputInParts)));
  // version, input count, previous output (32 + 4), script length, script, sequence, output count, outputs, lock time
  let length = 4 + 1 + 36 + compactSizeLength(inputScript.length) + inputScript.length + 4 + compactSizeLength(parts.length) + 4;
  for (const output of parts) length += 8 + compactSizeLength(output.scriptLength) + output.scriptLength;
  const bytes = new Uint8Array(length);
  const view = new DataView(bytes.buffer);
  let offset = 0;
  view.setUint32(offset, 1, true);
  offset += 4;
  offset = writeCompactSize(bytes, offset, 1);
  offset += 32; // the null previous output's hash
  view.setUint32(offset, 0xffffffff, true);
  offset += 4;
  offset = writeCompactSize(bytes, offset, inputScript.length);
  bytes.set(inputScript, offset);
  offset += inputScript.length;
  view.setUint32(offset, 0xffffffff, true);
  offset += 4;
  offset = writeCompactSize(bytes, offset, parts.length);
  for (const output of parts) {
    view.setBigUint64(offset, output.value, true);
    offset += 8;
    offset = writeCompactSize(bytes, offset, output.scriptLength);
    for (const part of output.script) {
      bytes.set(part, offset);
      offset += part.length;
    }
  }
  // lock time 0: the last four bytes stay zero
  return bytes;
}

/** Bitcoin's variable-length count; the miner's scripts stay below 2^16 bytes. */
function compactSizeLength(value: number): number {
  if (value < 0xfd) return 1;
  if (value <= 0xffff) return 3;
  throw new RangeError(`a parent coinbase script of ${value} bytes`);
}

function writeCompactSize(bytes: Uint8Array, offset: number, value: number): number {
  if (compactSizeLength(value) === 1) {
    bytes[offset] = value;
    return offset + 1;
  }
  bytes[offset] = 0xfd;
  bytes[offset + 1] = value & 0xff;
  bytes[offset + 2] = value >>> 8;
  return offset + 3;
}

/** The coinbase's first 99 bytes, up to the commitment output's script length: the same for every block. */
const coinbaseHead = encodeParentCoinbase(new Uint8Array(0), [
  { value: parentCoinbaseSubsidy, script: throwawayPayToPubkeyScript },
  { value: 0n, script: new Uint8Array(0) },
]).subarray(0, -5);
