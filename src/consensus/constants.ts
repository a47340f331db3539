// Consensus constants of each network profile (chain/networks.ts): the reference's values
// (rskj: org/ethereum/config/Constants.java and config/*.conf), with every rule active from genesis
// as the profiles' execution rules are. One decision differs: the private profiles 30, 31 and 32
// have minimum difficulty 1, not the reference's 7e15 (mainnet) or 131,072 (testnet, devnet).
// Those minimums are sized for the public networks' hash rate; a private network with a few
// machines would need minutes to hours per block, so it could not run at all.
import type { NetworkProfile } from "../chain/networks.js";

export interface ConsensusConstants {
  /** Target seconds between blocks, for a block without uncles (each uncle adds as much again). */
  readonly durationLimit: bigint;
  /** Difficulty moves by at most parent difficulty / this per block (400 after RSKIP156; regtest 2048). */
  readonly difficultyBoundDivisor: bigint;
  readonly minimumDifficulty: bigint;
  /**
   * A block this many seconds or more after its parent drops to the minimum difficulty
   * (undefined: never). The reference drops it wherever RSKIP97 is off: regtest, testnet and devnet.
   */
  readonly difficultyResetAfterSeconds: bigint | undefined;
  /** How far past the local clock a block's timestamp may be; 0 turns every timestamp rule off. */
  readonly newBlockMaxSecondsInTheFuture: bigint;
  /** Largest gap between a block's timestamp and its parent-chain header's (RSKIP179; the proof's rule). */
  readonly maxParentChainTimestampDifference: bigint;
  readonly uncleListLimit: number;
  /** An uncle's parent must be among this many ancestors of the block. */
  readonly uncleGenerationLimit: number;
  /** Gas limit moves by at most parent gas limit / this per block. */
  readonly gasLimitBoundDivisor: bigint;
  readonly minimumGasLimit: bigint;
  readonly maximumExtraDataSize: number;
  /** A transaction may pay at most this many times the block's minimum gas price (RSKIP252, for blocks). */
  readonly blockGasPriceCapMultiplier: bigint;
}

/** The same on every network (Constants.java, TxGasPriceCap.FOR_BLOCK). */
const sharedConstants = {
  maxParentChainTimestampDifference: 300n,
  uncleListLimit: 10,
  uncleGenerationLimit: 7,
  gasLimitBoundDivisor: 1024n,
  minimumGasLimit: 3_000_000n,
  maximumExtraDataSize: 32,
  blockGasPriceCapMultiplier: 100n,
} as const;

/** Mainnet, testnet and devnet after RSKIP156: 14 s blocks, divisor 400. */
const publicNetworkShape = { durationLimit: 14n, difficultyBoundDivisor: 400n, minimumDifficulty: 1n } as const;

const constantsByNetworkId: ReadonlyMap<number, ConsensusConstants> = new Map<number, ConsensusConstants>([
  // RSKIP97 is active on mainnet since orchid: no reset to the minimum.
  [30, { ...sharedConstants, ...publicNetworkShape, difficultyResetAfterSeconds: undefined, newBlockMaxSecondsInTheFuture: 60n }],
  // Testnet allows 120 minutes between the two timestamps since RSKIP297.
  [31, { ...sharedConstants, ...publicNetworkShape, difficultyResetAfterSeconds: 600n, newBlockMaxSecondsInTheFuture: 540n, maxParentChainTimestampDifference: 7_200n }],
  [32, { ...sharedConstants, ...publicNetworkShape, difficultyResetAfterSeconds: 600n, newBlockMaxSecondsInTheFuture: 540n }],
  // Regtest keeps divisor 2048 (RSKIP156 excludes it) and turns the timestamp rules off, which
  // is what lets evm_increaseTime jump ahead.
  [33, { ...sharedConstants, durationLimit: 10n, difficultyBoundDivisor: 2048n, minimumDifficulty: 1n, difficultyResetAfterSeconds: 600n, newBlockMaxSecondsInTheFuture: 0n }],
]);

/** The constants of a profile; throws for a network id without them (a new profile must add its own). */
export function consensusConstantsFor(profile: Pick<NetworkProfile, "networkId">): ConsensusConstants {
  const constants = constantsByNetworkId.get(profile.networkId);
  if (constants === undefined) throw new Error(`no consensus constants for network ${profile.networkId}`);
  return constants;
}
