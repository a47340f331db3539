// The engine's words for a failed frame, as each trace format writes them: geth's for the
// callTracer and the struct-log trace, OpenEthereum's for flat traces.

const callTracerWords = new Map<string, string>([
  ["revert", "execution reverted"],
  ["out of gas", "out of gas"],
  ["code store out of gas", "contract creation code storage out of gas"],
  ["code size to deposit exceeds maximum code size", "max code size exceeded"],
  ["invalid JUMP", "invalid jump destination"],
  ["invalid opcode", "invalid opcode"],
  ["stack underflow", "stack underflow"],
  ["static state change", "write protection"],
  ["create collision", "contract address collision"],
  ["insufficient balance", "insufficient balance for transfer"],
  ["invalid bytecode deployed", "invalid code: must not begin with 0xef"],
]);

const flatTraceWords = new Map<string, string>([
  ["revert", "Reverted"],
  ["out of gas", "Out of gas"],
  ["code store out of gas", "Out of gas"],
  ["code size to deposit exceeds maximum code size", "Out of gas"],
  ["invalid JUMP", "Bad jump destination"],
  ["invalid opcode", "Bad instruction"],
  ["stack underflow", "Stack underflow"],
  ["stack overflow", "Out of stack"],
  ["static state change", "Mutable Call In Static Context"],
  ["create collision", "Contract address collision"],
  ["invalid bytecode deployed", "Invalid code"],
]);

/**
 * The engine's error without the location it appends to some ("invalid JUMP at <code hash>/<address>:<pc>"):
 * that is the engine's debugging aid, not part of the error.
 */
function withoutLocation(engineError: string): string {
  const at = engineError.indexOf(" at 0x");
  return at < 0 ? engineError : engineError.slice(0, at);
}

export function callTracerError(engineError: string): string {
  const error = withoutLocation(engineError);
  return callTracerWords.get(error) ?? error;
}

export function flatTraceError(engineError: string): string {
  const error = withoutLocation(engineError);
  const words = flatTraceWords.get(error);
  if (words !== undefined) return words;
  return error.charAt(0).toUpperCase() + error.slice(1);
}
