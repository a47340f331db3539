// The execution engine: an @ethereumjs/vm instance on one state manager, with BLOCKHASH answered
// from the chain and an optional time limit, plus the engine's view of a block (BASEFEE answers
// the block's minimum gas price, PREVRANDAO/DIFFICULTY the difficulty).
import { createBlock, type Block as EngineBlock } from "@ethereumjs/block";
import type { Common } from "@ethereumjs/common";
import type { EVMMockBlockchainInterface } from "@ethereumjs/evm";
import type { MerkleStateManager } from "@ethereumjs/statemanager";
import { Address, bigIntToBytes, setLengthLeft } from "@ethereumjs/util";
import { createVM, type VM } from "@ethereumjs/vm";

/** Hash of a canonical block by number, for the BLOCKHASH opcode. */
export type CanonicalHashLookup = (blockNumber: bigint) => Promise<Uint8Array | undefined>;

/** The block an execution runs in, as its opcodes see it. */
export interface ExecutionBlockContext {
  number: bigint;
  coinbase: Uint8Array;
  timestamp: bigint;
  gasLimit: bigint;
  /** What BASEFEE answers: the block's minimum gas price (0 for calls that pay no gas price). */
  baseFee: bigint;
  difficulty: bigint;
}

/** An execution ran past its time limit; the engine that ran it must not be used again. */
export class ExecutionTimeoutError extends Error {}

/** Jumps between two looks at the clock: a loop cannot run long without jumping. */
const jumpsPerClockCheck = 4096;
const jumpOpcodes = [0x56, 0x57] as const;

interface OpcodeEntry {
  opHandler: (...args: unknown[]) => unknown;
}

export interface ExecutionEngine {
  readonly vm: VM;
  readonly state: MerkleStateManager;
  /**
   * Runs `execute` with a time limit: past it the execution throws ExecutionTimeoutError from
   * inside the EVM, leaving its state manager mid-checkpoint. Without a limit: no clock checks.
   */
  withTimeLimit<T>(timeLimitMs: number | undefined, execute: () => Promise<T>): Promise<T>;
}

export async function createExecutionEngine(common: Common, state: MerkleStateManager, canonicalHash: CanonicalHashLookup): Promise<ExecutionEngine> {
  const blockchain: EVMMockBlockchainInterface = {
    async getBlock(blockNumber: number) {
      const hash = (await canonicalHash(BigInt(blockNumber))) ?? new Uint8Array(32);
      return { hash: () => hash };
    },
    async putBlock() {},
    shallowCopy() {
      return blockchain;
    },
  };
  const vm = await createVM({ common, stateManager: state, blockchain });

  // The engine has no time limit of its own. JUMP and JUMPI are wrapped (the EVM's opcode table is
  // internal, hence the cast) to look at the clock every few thousand jumps while a limit is set.
  let deadline = Number.POSITIVE_INFINITY;
  let jumpsLeft = jumpsPerClockCheck;
  const opcodeMap = (vm.evm as unknown as { _opcodeMap: OpcodeEntry[] })._opcodeMap;
  for (const opcode of jumpOpcodes) {
    const entry = opcodeMap[opcode]!;
    const jump = entry.opHandler;
    opcodeMap[opcode] = {
      ...entry,
      opHandler(...args: unknown[]) {
        if (--jumpsLeft === 0) {
          jumpsLeft = jumpsPerClockCheck;
          if (performance.now() > deadline) throw new ExecutionTimeoutError("execution time limit reached");
        }
        return jump(...args);
      },
    };
  }

  return {
    vm,
    state,
    async withTimeLimit(timeLimitMs, execute) {
      if (timeLimitMs === undefined) return execute();
      deadline = performance.now() + timeLimitMs;
      jumpsLeft = jumpsPerClockCheck;
      try {
        return await execute();
      } finally {
        deadline = Number.POSITIVE_INFINITY;
      }
    },
  };
}

/** The engine's block for `context` (only the header fields opcodes read are set). */
export function createExecutionBlock(common: Common, context: ExecutionBlockContext): EngineBlock {
  return createBlock(
    {
      header: {
        number: context.number,
        coinbase: new Address(context.coinbase),
        timestamp: context.timestamp,
        gasLimit: context.gasLimit,
        baseFeePerGas: context.baseFee,
        difficulty: 0n,
        mixHash: setLengthLeft(bigIntToBytes(context.difficulty), 32),
      },
    },
    { common, skipConsensusFormatValidation: true },
  );
}
