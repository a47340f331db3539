// The messages between the main thread and the batch-check thread (batchChecks.ts,
// batchChecksWorker.ts). A batch of signatures and its signer keys cross as one transferred buffer
// each way:
//   in:  per signature, the hash signed (32) ‖ r ‖ s (64) ‖ the recovery id (1);
//   out: per signature, 1 ‖ the signer's 64-byte public key, or 0 and 64 unused bytes when it has none.
// Proofs of work go as they are (structured clone: a chunk's 192 proofs take well under a millisecond).
import type { RecoverableSignature } from "../common/signatures.js";
import type { MergedMiningProof, MergedMiningProofCheck } from "../consensus/mergedMiningProof.js";

export type BatchCheckRequest = { kind: "signatures"; id: number; input: ArrayBuffer } | { kind: "proofs"; id: number; proofs: readonly MergedMiningProof[] } | { kind: "close" };
export type BatchCheckReply = { kind: "signatures"; id: number; output: ArrayBuffer } | { kind: "proofs"; id: number; checks: MergedMiningProofCheck[] };

const signatureBytes = 32 + 64 + 1;
const answerBytes = 1 + 64;

export function packSignatures(signatures: readonly RecoverableSignature[]): Uint8Array<ArrayBuffer> {
  const packed = new Uint8Array(signatures.length * signatureBytes);
  signatures.forEach((signature, index) => {
    const offset = index * signatureBytes;
    packed.set(signature.messageHash, offset);
    packed.set(signature.rs, offset + 32);
    packed[offset + 96] = signature.recovery;
  });
  return packed;
}

/** The signatures of a packed batch; RangeError for bytes that are not one. */
export function unpackSignatures(packed: Uint8Array): RecoverableSignature[] {
  if (packed.length % signatureBytes !== 0) throw new RangeError(`a batch of signatures is a multiple of ${signatureBytes} bytes, not ${packed.length}`);
  const signatures: RecoverableSignature[] = [];
  for (let offset = 0; offset < packed.length; offset += signatureBytes) {
    const recovery = packed[offset + 96];
    if (recovery !== 0 && recovery !== 1) throw new RangeError(`recovery id ${recovery}`);
    signatures.push({ messageHash: packed.subarray(offset, offset + 32), rs: packed.subarray(offset + 32, offset + 96), recovery });
  }
  return signatures;
}

export function packSignerKeys(keys: readonly (Uint8Array | undefined)[]): Uint8Array<ArrayBuffer> {
  const packed = new Uint8Array(keys.length * answerBytes);
  keys.forEach((key, index) => {
    if (key === undefined) return;
    packed[index * answerBytes] = 1;
    packed.set(key, index * answerBytes + 1);
  });
  return packed;
}

/** The length of the packed signer keys of `count` signatures. */
export function signerKeysBytes(count: number): number {
  return count * answerBytes;
}

/** `count` signer keys (undefined: no signer); RangeError when the bytes do not hold that many. */
export function unpackSignerKeys(packed: Uint8Array, count: number): (Uint8Array | undefined)[] {
  if (packed.length !== signerKeysBytes(count)) throw new RangeError(`${packed.length} bytes of signer keys for ${count} signatures`);
  const keys: (Uint8Array | undefined)[] = [];
  for (let offset = 0; offset < packed.length; offset += answerBytes) keys.push(packed[offset] === 1 ? packed.subarray(offset + 1, offset + answerBytes) : undefined);
  return keys;
}
