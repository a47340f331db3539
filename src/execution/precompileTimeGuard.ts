// The engine's time limit looks at the clock at jumps and before each call frame (engine.ts), but a
// precompile runs in one synchronous step, and two of them can run for seconds within the call gas
// cap: BLAKE2f (0x09, EIP-152) at 1 gas a round, about 1.7 million rounds a second here (a
// 48-million-gas eth_call ran for 27 s and held the thread all that time), and the bn254 pairing
// check (0x08) at 34,000 gas a pair, about 11 ms a pair (some 16 s for 50 million gas). Before such
// a precompile runs a large input under a time limit, its work is priced at the fastest rate seen
// in this process; when even that cannot end before the deadline, the call stops there with the
// time limit's error, as it would have later. Blocks are built without a time limit: a transaction
// in a block always runs in full.
import type { EVM } from "@ethereumjs/evm";

/** The options the EVM hands a precompile (the rules, the EVM ...): data and gasLimit are read here. */
type PrecompileOptions = { data: Uint8Array; gasLimit: bigint };
type PrecompileFunction = (options: PrecompileOptions) => unknown;

interface CostlyPrecompile {
  address: string;
  /** Units of work in an input (rounds, pairs); undefined for an input the precompile refuses at once. */
  units(data: Uint8Array): number | undefined;
  /** Fewer units than this run without a look (some 10 ms of work here). */
  unitsWorthChecking: number;
  /** An input of `units` units, to measure the rate with. */
  calibrationInput(units: number): Uint8Array;
  /** Units per calibration run (three runs, the first warms the compiled code up). */
  calibrationUnits: number;
  /** The fastest time per unit seen in this process, in milliseconds; undefined until measured. */
  fastestMsPerUnit?: number;
}

/** BLAKE2f's input: rounds (4 bytes), h (64), m (128), t (16), final flag (1). */
const blake2fInputBytes = 213;
/** A pair of the pairing check: a G1 point (64 bytes) and a G2 point (128). */
const pairBytes = 192;
const g1Generator = "0".repeat(63) + "1" + "0".repeat(63) + "2";
const g2Generator =
  "198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c2" +
  "1800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed" +
  "090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b" +
  "12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa";

const costlyPrecompiles: readonly CostlyPrecompile[] = [
  {
    address: "0000000000000000000000000000000000000009",
    units: (data) => (data.length === blake2fInputBytes ? new DataView(data.buffer, data.byteOffset, 4).getUint32(0) : undefined),
    unitsWorthChecking: 20_000,
    calibrationInput(rounds) {
      const input = new Uint8Array(blake2fInputBytes);
      new DataView(input.buffer).setUint32(0, rounds);
      input[blake2fInputBytes - 1] = 1;
      return input;
    },
    calibrationUnits: 20_000,
  },
  {
    address: "0000000000000000000000000000000000000008",
    units: (data) => (data.length % pairBytes === 0 ? data.length / pairBytes : undefined),
    unitsWorthChecking: 2,
    calibrationInput: (pairs) => Buffer.from((g1Generator + g2Generator).repeat(pairs), "hex"),
    calibrationUnits: 2,
  },
];

/** Gas for a calibration run: its gas check only compares. */
const calibrationGas = 2n ** 62n;

/**
 * Runs the precompile and keeps its time per unit when the run did the work (no error: out of gas
 * and bad points end at once) and was long enough to tell.
 */
function timed(costly: CostlyPrecompile, run: PrecompileFunction, options: PrecompileOptions, units: number): unknown {
  const started = performance.now();
  const result = run(options);
  const msPerUnit = (performance.now() - started) / units;
  const didTheWork = (result as { exceptionError?: unknown }).exceptionError === undefined;
  if (didTheWork && units >= costly.calibrationUnits && (costly.fastestMsPerUnit === undefined || msPerUnit < costly.fastestMsPerUnit)) costly.fastestMsPerUnit = msPerUnit;
  return result;
}

/** The time per unit, measured the first time it is needed. `options` are a real call's, for what else the precompile reads (the rules). */
function msPerUnit(costly: CostlyPrecompile, run: PrecompileFunction, options: PrecompileOptions): number {
  if (costly.fastestMsPerUnit === undefined) {
    const calibration = { ...options, data: costly.calibrationInput(costly.calibrationUnits), gasLimit: calibrationGas };
    for (let round = 0; round < 3; round++) timed(costly, run, calibration, costly.calibrationUnits);
    // A calibration input the precompile refused leaves the guard without a rate: it then lets every call run.
    costly.fastestMsPerUnit ??= 0;
  }
  return costly.fastestMsPerUnit;
}

/**
 * Gives `evm`'s costly precompiles a look at `deadline` (milliseconds, as performance.now();
 * infinite without a limit): one that cannot end before it throws what `timedOut` makes.
 */
export function guardLongPrecompiles(evm: EVM, deadline: () => number, timedOut: () => Error): void {
  const precompiles = evm.precompiles as Map<string, PrecompileFunction>;
  for (const costly of costlyPrecompiles) {
    const run = precompiles.get(costly.address);
    if (run === undefined) continue;
    precompiles.set(costly.address, (options) => {
      const limit = deadline();
      const units = limit === Number.POSITIVE_INFINITY ? undefined : costly.units(options.data);
      if (units === undefined || units < costly.unitsWorthChecking) return run(options);
      if (performance.now() + units * msPerUnit(costly, run, options) > limit) throw timedOut();
      return timed(costly, run, options, units);
    });
  }
}
