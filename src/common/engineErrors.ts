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

/** The message of an error from @ethereumjs, without the context it appends, in this chain's terms. */
export function engineErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(appendedContext, "").replace(belowBaseFee, "transaction's gas price ($1) lower than block's minimum ($2)");
}
