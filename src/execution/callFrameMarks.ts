// What the interpreter's fast loop (interpreterFastPaths.ts) notes about call frames for the
// tracers: which messages a STATICCALL made, and who listens to the frames it refuses. Apart from
// the loop so that the tracers read them without loading the EVM (execution/enginePackages.ts).

/** Messages a STATICCALL made (the other frames inside a static frame are static as well). */
const staticCallMessages = new WeakSet<object>();

/** The fast loop marks a message STATICCALL made. */
export function markStaticCall(message: object): void {
  staticCallMessages.add(message);
}

/**
 * Whether a STATICCALL made this message: a CALL made inside a static frame is static too, and
 * only the opcode tells them apart (tracers name a frame by it). Known once the fast loop is in.
 */
export function madeByStaticCall(message: object): boolean {
  return staticCallMessages.has(message);
}

/** Why the interpreter refused a call frame before it began (the engine's words, as its errors). */
export type RefusedCallReason = "insufficient balance" | "max call depth exceeded";

/** Told of the call frames an EVM's interpreter refuses before they begin (no message events). */
export type RefusedCallListener = (message: object, reason: RefusedCallReason) => void;

const refusedCallListeners = new WeakMap<object, RefusedCallListener>();

/**
 * Calls `listener` (until it is replaced by undefined) for each call frame the EVM's interpreter
 * refuses without running it: a call deeper than the call depth limit, or with more value than the
 * caller holds. The engine then emits no message events; tracers show such a frame with its error,
 * as geth does. Known once the fast loop is in.
 */
export function listenToRefusedCalls(evm: object, listener: RefusedCallListener | undefined): void {
  if (listener === undefined) refusedCallListeners.delete(evm);
  else refusedCallListeners.set(evm, listener);
}

/** The listener to the frames `evm` refuses, if any. */
export function refusedCallListenerOf(evm: object): RefusedCallListener | undefined {
  return refusedCallListeners.get(evm);
}
