// The difficulty a block must carry, from its parent's difficulty and timestamp and its own
// timestamp and uncle count (rskj: co/rsk/core/DifficultyCalculator.java). A block sooner than the
// target time (longer with each uncle: uncles show the network is forking, so blocks should come
// slower) raises the difficulty by parent / divisor; a later one lowers it by as much.
import type { HeaderFields } from "../chain/header.js";
import type { ConsensusConstants } from "./constants.js";

export type DifficultyConstants = Pick<ConsensusConstants, "durationLimit" | "difficultyBoundDivisor" | "minimumDifficulty" | "difficultyResetAfterSeconds">;

export function calculateDifficulty(
  block: Pick<HeaderFields, "timestamp" | "uncleCount">,
  parent: Pick<HeaderFields, "difficulty" | "timestamp">,
  constants: DifficultyConstants,
): bigint {
  // Where RSKIP97 is off, a chain that stalled ten minutes may start again at the minimum.
  const reset = constants.difficultyResetAfterSeconds;
  if (reset !== undefined && block.timestamp >= parent.timestamp + reset) return constants.minimumDifficulty;

  const secondsAfterParent = block.timestamp - parent.timestamp;
  // Only reachable where the timestamp rules are off (regtest): the parent's difficulty stands.
  if (secondsAfterParent < 0n) return parent.difficulty;

  const targetSeconds = BigInt(1 + block.uncleCount) * constants.durationLimit;
  if (targetSeconds === secondsAfterParent) return parent.difficulty;

  const step = parent.difficulty / constants.difficultyBoundDivisor;
  const moved = targetSeconds > secondsAfterParent ? parent.difficulty + step : parent.difficulty - step;
  // Raised to the minimum in both directions: a parent below it (a genesis of difficulty 0) moves up to it.
  return moved > constants.minimumDifficulty ? moved : constants.minimumDifficulty;
}
