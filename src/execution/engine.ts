// The execution engine: an @ethereumjs/vm instance on one state manager, with BLOCKHASH answered
// from the chain and an optional time limit, plus the engine's view of a block (BASEFEE answers
// the block's minimum gas price, PREVRANDAO/DIFFICULTY the difficulty).
import { Block as EngineBlock, BlockHeader as EngineBlockHeader, createBlockHeader, type HeaderData } from "@ethereumjs/block";
import type { Common, StateManagerInterface } from "@ethereumjs/common";
import type { EVM, EVMMockBlockchainInterface } from "@ethereumjs/evm";
import { Account, Address, KECCAK256_NULL, bigIntToBytes, equalsBytes, setLengthLeft } from "@ethereumjs/util";
import type { VM } from "@ethereumjs/vm";
import { maxGasPrice, type ChainTx } from "../chain/transactions.js";
import { nextEventLoopTurn } from "../common/eventLoop.js";
import { loadEnginePackages } from "./enginePackages.js";

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

/**
 * The same while a tracer listens to every step: a step then costs microseconds instead of tens
 * of nanoseconds, and 4,096 jumps of a traced loop (about 80,000 steps) held the thread for over
 * a second, so a trace never paused (make bench, bounds: eth_blockNumber waited 2-4 s behind 8
 * traces). A look at the clock every 16 jumps is lost among the steps' own cost.
 */
const jumpsPerClockCheckWhileStepping = 16;

/**
 * While a time limit is set, an execution gives the event loop a turn after running this long, so
 * the node answers other requests while a long call or trace runs (the executions that have a time
 * limit run on engines no other work uses meanwhile: calls queue per engine, a replay has its own).
 * With 10 ms, eth_blockNumber beside eight struct-log traces had a p99 of 34-54 ms, with 5 ms 24
 * (make bench, bounds, two runs each); a turn costs microseconds.
 */
const executionSliceMs = 5;

/**
 * The clock of work under a time limit: its deadline, and the slices after which it gives the
 * event loop a turn (executionSliceMs). Without a limit it never times out and never pauses.
 */
export class ExecutionClock {
  private deadlineAt = Number.POSITIVE_INFINITY;
  /** When the running slice ends; never without a time limit. */
  private sliceEndsAt = Number.POSITIVE_INFINITY;

  /** `timedOut` words the ExecutionTimeoutError thrown past the deadline. */
  constructor(private readonly timedOut: string) {}

  /** The deadline as performance.now() (infinite without a limit). */
  get deadline(): number {
    return this.deadlineAt;
  }

  get limited(): boolean {
    return this.deadlineAt !== Number.POSITIVE_INFINITY;
  }

  /** Starts a limit ending at `deadline` (performance.now() milliseconds). */
  startUntil(deadline: number): void {
    this.deadlineAt = deadline;
    this.sliceEndsAt = performance.now() + executionSliceMs;
  }

  stop(): void {
    this.deadlineAt = Number.POSITIVE_INFINITY;
    this.sliceEndsAt = Number.POSITIVE_INFINITY;
  }

  /** Throws ExecutionTimeoutError past the deadline; true when the slice is over (then await pause()). */
  pauseDue(): boolean {
    const now = performance.now();
    if (now > this.deadlineAt) throw new ExecutionTimeoutError(this.timedOut);
    return now >= this.sliceEndsAt;
  }

  /** Gives the event loop a turn, then starts the next slice (if the limit still runs). */
  pause(): Promise<void> {
    this.sliceEndsAt = Number.POSITIVE_INFINITY;
    return nextEventLoopTurn().then(() => {
      if (this.limited) this.sliceEndsAt = performance.now() + executionSliceMs;
    });
  }

  /** For walks outside the engine: throws past the deadline, pauses when the slice is over. */
  async check(): Promise<void> {
    if (this.pauseDue()) await this.pause();
  }
}
const jumpOpcodes = [0x56, 0x57] as const;

/** An opcode handler takes the run state and the rules (the EVM's opcode table is internal). */
type OpHandler = (runState: unknown, common: unknown) => unknown;

interface OpcodeEntry {
  opHandler: OpHandler;
  gasHandler?: (runState: RunStateView, gas: bigint, common: unknown) => Promise<bigint> | bigint;
}

/** The few fields of the interpreter's run state read here. */
interface RunStateView {
  env: { depth: number };
  interpreter: { getGasLeft(): bigint };
}

/** SSTORE needs more than this much gas left (EIP-2200's sentry), whatever it costs. */
const storageSentryGas = 2_300n;
const storeOpcode = 0x55;
const gasLeftOpcode = 0x5a;
/** CREATE, CALL, CALLCODE, DELEGATECALL, CREATE2, STATICCALL: each runs a frame of its own. */
const frameOpcodes = [0xf0, 0xf1, 0xf2, 0xf4, 0xf5, 0xfa] as const;

/**
 * How much less gas a run that succeeded could have had, as far as the top frame shows: at every
 * SSTORE the gas left must exceed the sentry, and the gas left only decreases. Other frames
 * (calls, creations) get gas by the 63/64 rule, which this does not follow: `nestedFrames` says
 * whether there were any.
 */
export interface GasSlack {
  /** The least of (gas left - sentry - 1) over the top frame's SSTOREs; undefined without any. */
  storageSentrySlack: bigint | undefined;
  nestedFrames: boolean;
  /** Whether the GAS opcode ran: code that reads the gas left can take another path with less. */
  readsGasLeft: boolean;
}

export interface ExecutionEngine<State extends StateManagerInterface = StateManagerInterface> {
  readonly vm: VM;
  readonly state: State;
  /**
   * Runs `execute` with a time limit: past it the execution throws ExecutionTimeoutError from
   * inside the EVM, leaving its state manager mid-checkpoint. Every executionSliceMs it lets the
   * event loop turn: nothing else may use the engine until it is done. Without a limit: no clock
   * checks, no pauses.
   */
  withTimeLimit<T>(timeLimitMs: number | undefined, execute: () => Promise<T>): Promise<T>;
  /** Runs `execute` while watching what `what` asks for. */
  measure<T>(what: ExecutionMeasurements, execute: () => Promise<T>): Promise<Measured<T>>;
}

/** What ExecutionEngine.measure watches while a run goes (eth_estimateGas asks for these). */
export interface ExecutionMeasurements {
  /** The gas slack of the top frame (see GasSlack). */
  gasSlack?: boolean;
  /**
   * The frames (the top one included) that ran out of gas: a caller that catches a call's failure
   * carries on without it, so a run can succeed with less gas than its work needs (eth_estimateGas
   * must not answer such a limit).
   */
  framesOutOfGas?: boolean;
}

/** A run's result and what was measured during it (undefined for what was not asked for). */
export interface Measured<T> {
  result: T;
  slack?: GasSlack;
  framesOutOfGas?: number;
}

/** The engine's words for a frame that ran out of gas (running, or paying for its code). */
const outOfGasErrors: ReadonlySet<string> = new Set(["out of gas", "code store out of gas"]);

export async function createExecutionEngine<State extends StateManagerInterface>(common: Common, state: State, canonicalHash: CanonicalHashLookup): Promise<ExecutionEngine<State>> {
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
  const packages = await loadEnginePackages();
  // The EVM's and the VM's parameters join the rules' table here, with the packages (the rules
  // start without them: execution/rules.ts); merged once, the later engines find them there.
  common.updateParams(packages.evm.paramsEVM);
  common.updateParams(packages.vm.paramsVM);
  // A copy of the rules per engine: the EVM subscribes to its Common's hardfork events and never
  // unsubscribes, so on the node's shared Common every engine made for a call or a trace would
  // stay reachable for good.
  const vm = await packages.vm.createVM({ common: common.copy(), stateManager: state, blockchain });
  // First: the fast paths replace opcode table entries, and the wrappers below wrap them.
  await packages.fastPaths.installInterpreterFastPaths(vm.evm as EVM);

  // The engine has no time limit of its own. JUMP and JUMPI are wrapped (the EVM's opcode table is
  // internal, hence the cast) to look at the clock every few thousand jumps while a limit is set.
  const clock = new ExecutionClock("execution time limit reached");
  const events = vm.evm.events!;
  const jumpsBetweenClockChecks = () => (events.listenerCount("step") > 0 ? jumpsPerClockCheckWhileStepping : jumpsPerClockCheck);
  let jumpsLeft = jumpsPerClockCheck;
  packages.timeGuard.guardLongPrecompiles(vm.evm as EVM, () => clock.deadline, () => new ExecutionTimeoutError("execution time limit reached"));
  const opcodeMap = (vm.evm as unknown as { _opcodeMap: OpcodeEntry[] })._opcodeMap;
  for (const opcode of jumpOpcodes) {
    const entry = opcodeMap[opcode]!;
    const jump = entry.opHandler;
    opcodeMap[opcode] = {
      ...entry,
      // Two named parameters, not a rest parameter: an array per jump showed in call profiles.
      opHandler(runState, common) {
        if (--jumpsLeft === 0) {
          jumpsLeft = jumpsBetweenClockChecks();
          if (clock.pauseDue()) {
            jump(runState, common);
            return clock.pause();
          }
        }
        return jump(runState, common);
      },
    };
  }

  // SSTORE's gas handler runs before the sentry check and the charge; frame opcodes' before the
  // frame. Both only record while a measurement runs; the frame opcodes also look at the clock.
  let slack: GasSlack | undefined;
  const store = opcodeMap[storeOpcode]!;
  const storeGas = store.gasHandler!;
  opcodeMap[storeOpcode] = {
    ...store,
    gasHandler(runState, gas, common) {
      if (slack !== undefined && runState.env.depth === 0) {
        const left = runState.interpreter.getGasLeft() - storageSentryGas - 1n;
        if (slack.storageSentrySlack === undefined || left < slack.storageSentrySlack) slack.storageSentrySlack = left;
      }
      return storeGas(runState, gas, common);
    },
  };
  const gasLeft = opcodeMap[gasLeftOpcode]!;
  const readGasLeft = gasLeft.opHandler;
  opcodeMap[gasLeftOpcode] = {
    ...gasLeft,
    opHandler(runState, common) {
      if (slack !== undefined) slack.readsGasLeft = true;
      return readGasLeft(runState, common);
    },
  };
  for (const opcode of frameOpcodes) {
    const entry = opcodeMap[opcode]!;
    const frameGas = entry.gasHandler!;
    opcodeMap[opcode] = {
      ...entry,
      gasHandler(runState, gas, common) {
        if (slack !== undefined) slack.nestedFrames = true;
        // Calls and creations can burn time without a jump (a chain of calls, costly precompiles).
        if (clock.limited && clock.pauseDue()) return clock.pause().then(() => frameGas(runState, gas, common));
        return frameGas(runState, gas, common);
      },
    };
  }

  return {
    vm,
    state,
    async measure(what, execute) {
      const measuredSlack: GasSlack | undefined = what.gasSlack ? { storageSentrySlack: undefined, nestedFrames: false, readsGasLeft: false } : undefined;
      slack = measuredSlack;
      let framesOutOfGas = 0;
      const afterFrame = (frame: { execResult: { exceptionError?: { error: string } } }) => {
        const error = frame.execResult.exceptionError?.error;
        if (error !== undefined && outOfGasErrors.has(error)) framesOutOfGas++;
      };
      if (what.framesOutOfGas) events.on("afterMessage", afterFrame);
      try {
        const result = await execute();
        return { result, slack: measuredSlack, framesOutOfGas: what.framesOutOfGas ? framesOutOfGas : undefined };
      } finally {
        slack = undefined;
        if (what.framesOutOfGas) events.off("afterMessage", afterFrame);
      }
    },
    async withTimeLimit(timeLimitMs, execute) {
      if (timeLimitMs === undefined) return execute();
      clock.startUntil(performance.now() + timeLimitMs);
      // Tracers subscribe before the run starts, so the first stretch is already the short one.
      jumpsLeft = jumpsBetweenClockChecks();
      try {
        return await execute();
      } finally {
        clock.stop();
      }
    },
  };
}

/**
 * After a transaction ran: the engine burns the base fee (EIP-1559), but on this chain the block's
 * minimum gas price share of the fee goes to the miner like the rest. Block building and replay
 * both credit it here, so they reach the same state.
 */
export async function creditMinimumGasPriceShare(state: StateManagerInterface, coinbase: Address, gasUsed: bigint, minimumGasPrice: bigint): Promise<void> {
  if (minimumGasPrice === 0n) return;
  const miner = (await state.getAccount(coinbase)) ?? new Account();
  miner.balance += gasUsed * minimumGasPrice;
  await state.putAccount(coinbase, miner);
}

/** Whether the account has code (its code hash is not the empty code's). */
export function hasCode(account: Account): boolean {
  return !equalsBytes(account.codeHash, KECCAK256_NULL);
}

/**
 * Whether runTx lets `sender` send `tx`: an existing account without code (EIP-3607), at the
 * transaction's nonce, holding the whole gas limit at the gas price (a type 2 transaction's fee
 * cap) and the value.
 */
export function runTxTakesSender(sender: Account | undefined, tx: ChainTx): sender is Account {
  return sender !== undefined && !hasCode(sender) && sender.nonce === tx.nonce && sender.balance >= tx.gasLimit * maxGasPrice(tx) + tx.value;
}

/**
 * One header per Common made by the package, the template of every execution block on it. The
 * package's header constructor copies the Common and rebuilds its parameter cache (JSON copies of
 * every parameter set) each time: about 12 µs a block, made for every mined block, eth_call and
 * replay, while the header fields opcodes read are all the context gives.
 */
const executionHeaderTemplates = new WeakMap<Common, EngineBlockHeader>();

/** The header fields of an execution block for `context`, in the package's header data form: the ones opcodes read. */
export function executionHeaderFields(context: ExecutionBlockContext) {
  return {
    number: context.number,
    coinbase: new Address(context.coinbase),
    timestamp: context.timestamp,
    gasLimit: context.gasLimit,
    baseFeePerGas: context.baseFee,
    difficulty: 0n,
    mixHash: mixHashOf(context.difficulty),
  } satisfies HeaderData;
}

const twoTo256 = 1n << 256n;

/**
 * The difficulty as the header's 32-byte mix hash, where DIFFICULTY reads it: what
 * setLengthLeft(bigIntToBytes(difficulty), 32) gives (and throws, out of range), without the
 * package's array spreads, a third of an execution block's making.
 */
function mixHashOf(difficulty: bigint): Uint8Array {
  if (difficulty < 0n || difficulty >= twoTo256) return setLengthLeft(bigIntToBytes(difficulty), 32);
  const bytes = new Uint8Array(32);
  for (let index = 31, rest = difficulty; rest > 0n; index--, rest >>= 8n) bytes[index] = Number(rest & 0xffn);
  return bytes;
}

/** The engine's block for `context` (only the header fields opcodes read are set). */
export function createExecutionBlock(common: Common, context: ExecutionBlockContext): EngineBlock {
  let template = executionHeaderTemplates.get(common);
  if (template === undefined) {
    template = createBlockHeader({}, { common, skipConsensusFormatValidation: true });
    executionHeaderTemplates.set(common, template);
  }
  // The template's fields (its copy of the Common included, which nothing executing changes),
  // with the context's in place of the defaults, and a hash cache of its own: what the package's
  // constructor gives for the same fields (a test compares the two).
  const header = Object.create(EngineBlockHeader.prototype) as EngineBlockHeader;
  Object.assign(header, template, { cache: { hash: undefined } }, executionHeaderFields(context));
  Object.freeze(header);
  return new EngineBlock(header);
}
