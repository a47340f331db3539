// Generated test inputs from a seed, so a failing case can be replayed: mulberry32 (a 32-bit
// counter through a multiply-xorshift mix), fast and the same on every run. Every bit of its output
// is usable, low bits included, so `next() % n` picks evenly. (It was a bare linear congruential
// generator: its lowest bit alternated and its low bits cycled within a few calls, so `next() % 2`
// or `% 4` walked a fixed short pattern instead of exploring.)

/** Successive 32-bit values (0 .. 2^32 - 1) from `seed`. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return (mixed ^ (mixed >>> 14)) >>> 0;
  };
}

/** `length` bytes, each the low byte of the generator's next value. */
export function randomBytes(next: () => number, length: number): Uint8Array {
  return Uint8Array.from({ length }, () => next() & 0xff);
}
