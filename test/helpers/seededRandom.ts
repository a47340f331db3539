// Generated test inputs from a seed, so a failing case can be replayed: a linear congruential
// generator (the ANSI C constants), fast and the same on every run.

/** Successive 32-bit values (0 .. 2^32 - 1) from `seed`. */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
}

/** `length` bytes, each the low byte of the generator's next value. */
export function randomBytes(next: () => number, length: number): Uint8Array {
  return Uint8Array.from({ length }, () => next() & 0xff);
}
