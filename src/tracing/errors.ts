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

export function callTracerError(engineError: string): string {
  return callTracerWords.get(engineError) ?? engineError;
}

export function flatTraceError(engineError: string): string {
  const words = flatTraceWords.get(engineError);
  if (words !== undefined) return words;
  return engineError.charAt(0).toUpperCase() + engineError.slice(1);
}
