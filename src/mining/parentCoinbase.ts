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
  const commitment = concatBytes([prefix, mergedMiningTag, hashForMergedMining]);
  return encodeParentCoinbase(new Uint8Array(0), [
    { value: parentCoinbaseSubsidy, script: throwawayPayToPubkeyScript },
    { value: 0n, script: commitment },
  ]);
}

export function encodeParentCoinbase(inputScript: Uint8Array, outputs: readonly ParentOutput[]): Uint8Array {
  const parts: Uint8Array[] = [u32le(1), compactSize(1), new Uint8Array(32), u32le(0xffffffff), compactSize(inputScript.length), inputScript, u32le(0xffffffff)];
  parts.push(compactSize(outputs.length));
  for (const output of outputs) {
    const value = new Uint8Array(8);
    new DataView(value.buffer).setBigUint64(0, output.value, true);
    parts.push(value, compactSize(output.script.length), output.script);
  }
  parts.push(u32le(0));
  return concatBytes(parts);
}

function u32le(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value >>> 0, true);
  return bytes;
}

/** Bitcoin's variable-length count; the miner's scripts stay below 2^16 bytes. */
function compactSize(value: number): Uint8Array {
  if (value < 0xfd) return Uint8Array.of(value);
  if (value <= 0xffff) return Uint8Array.of(0xfd, value & 0xff, value >>> 8);
  throw new RangeError(`a parent coinbase script of ${value} bytes`);
}

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const bytes = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return bytes;
}
