// @ethereumjs appends what it was working on to the message of an error it throws, for its own
// users' debugging: "... (vm hf=shanghai -> block number=17 hash=0x… hf=shanghai baseFeePerGas=0
// txs=0 uncles=0 -> tx type=0 hash=… nonce=0 … signed=false hf=shanghai gasPrice=0)", or just the
// transaction's or the hardfork's part. A node's client gets the message without it.

/** Where the package's appended context starts: the first " (" that opens one of its parts. */
const appendedContext = / \((?:vm hf=|block number=|tx type=|hardfork=)[\s\S]*$/;

/**
 * The engine names the minimum gas price of this chain's blocks (the engine's base fee) as the
 * block's baseFeePerGas, a field these blocks do not have.
 */
const belowBaseFee = /^Transaction's gasPrice \((\d+)\) is less than the block's baseFeePerGas \((\d+)\)/;

/** Some messages open with the package's error code, e.g. "INTRINSIC_GAS_TOO_LOW: tx gas limit 0 is ...". */
const errorCodePrefix = /^[A-Z][A-Z0-9_]+: /;

/** The RLP decoder names its internal helper when an item runs past the end of the input. */
const rlpCutShort = /^invalid RLP \(safeSlice\): end slice of Uint8Array out-of-bounds$/;

/** The message of an error from @ethereumjs, without the context it appends, in this chain's terms. */
export function engineErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message
    .replace(appendedContext, "")
    .replace(errorCodePrefix, "")
    .replace(rlpCutShort, "invalid RLP: the input ends inside an item")
    .replace(belowBaseFee, "transaction's gas price ($1) lower than block's minimum ($2)");
}
