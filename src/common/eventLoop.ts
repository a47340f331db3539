// Giving the event loop a turn from work that would otherwise run on without one.

/** Resolves after a turn of the event loop: the I/O callbacks waiting now run first. */
export function nextEventLoopTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
