// The EVM's message frames (a call's value transfer, code loading and interpreter run) without
// the package's object spreads. @ethereumjs/evm copies the message into a new object with
// `{ ...{ codeAddress }, ...message, gasLimit }` before every interpreter run, and merges the run
// state, result and environment with `{ ...runState, ...result, ...env }` after it. On Node 20 a
// spread into an object that already came from a spread takes V8's slow path, building new hidden
// classes property by property: about 25-50 µs per spread of an 18-field message, more than the
// whole interpreter run of a token's balanceOf. Every frame with code paid it (each nested call
// too).
//
// Here a call frame runs the same steps (sender debited and recipient credited through the
// journal, code loaded, precompile or interpreter run, transient storage cleared after the top
// frame) and hands the message to the interpreter as it is: with the EIPs that change a frame's
// gas inactive, the copy differed from the message in nothing. The result has the package's
// fields; its `runState` is the interpreter's own run state rather than a merged copy (nothing in
// the engine or the node reads it). EVMs with those EIPs, in debug mode or with the profiler keep
// the package's frames; the differential test runs generated blocks through both.
//
// A frame's memory and stack come from a pool rather than from the interpreter's constructor: the
// package allocates an 8 KiB memory buffer for every frame, and under a load of small calls (a
// token's balanceOf) sweeping those off-heap buffers kept V8's GC thread 13-21 % busy. A frame
// takes a memory and a stack when it starts and gives them back, zeroed and emptied, when its run
// ends. Nothing of a frame's memory outlives its run (the returned data, the logs and a revert's
// payload are copies; a callee reads its call data from its caller's memory while the caller waits
// for it), so a frame never sees another's words. The interpreter is then built here, field for
// field as the package's constructor builds it (checked against one the constructor built).
import { type EVM, EVMError, Message } from "@ethereumjs/evm";
import { Account, type Address, createZeroAddress } from "@ethereumjs/util";

/** EIPs that charge or record something in a call frame; with any active the package's frames run. */
const eipsFramesLeaveOut = [2780, 6800, 7708, 7864, 7928, 8037] as const;

/** The message fields a frame reads (the package's Message). */
interface FrameMessage {
  to: Address;
  caller: Address;
  value: bigint;
  gasLimit: bigint;
  data: Uint8Array;
  depth: number;
  code?: Uint8Array | ((...args: unknown[]) => unknown);
  isCompiled: boolean;
  isStatic: boolean;
  isCreate?: boolean;
  delegatecall: boolean;
  codeAddress: Address;
  gasRefund: bigint;
  selfdestruct?: Map<string, Uint8Array>;
  createdAddresses?: Set<string>;
  chargeCodeAccesses?: boolean;
  blobVersionedHashes?: Uint8Array[];
  accessWitness?: { commit(): void };
}

interface InterpreterRunResult {
  runState: { gasLeft: bigint; gasRefund: bigint; stateGasSpilled?: bigint };
  exceptionError?: EVMError;
}

/** The package's Memory and Stack, as far as the pool touches them. */
interface PooledMemory {
  _store: Uint8Array;
}
interface PooledStack {
  _store: bigint[];
  _len: number;
}

interface InterpreterInstance {
  _runState: { memory: PooledMemory; stack: PooledStack };
  _result: { logs: unknown[]; returnValue?: Uint8Array; selfdestruct: Map<string, Uint8Array>; createdAddresses?: Set<string> };
  run(code: Uint8Array, options?: object): Promise<InterpreterRunResult>;
}

export type InterpreterClass = new (...args: unknown[]) => InterpreterInstance;

/** The EVM's internals a frame uses. */
interface EvmInternals {
  DEBUG: boolean;
  _optsCached: { profiler?: { enabled?: boolean } };
  _tx: { gasPrice: bigint; origin?: Address };
  _block?: unknown;
  stateManager: EVM["stateManager"];
  blockchain: unknown;
  journal: unknown;
  performanceLogger: unknown;
  _reduceSenderBalance(account: Account, message: FrameMessage): Promise<void>;
  _addToBalance(account: Account, message: FrameMessage): Promise<void>;
  _loadCode(message: FrameMessage): Promise<void>;
  runPrecompile(code: unknown, data: Uint8Array, gasLimit: bigint): Promise<{ gasRefund?: bigint }>;
  runInterpreter(message: FrameMessage, options?: { initialLogs?: unknown[] }): Promise<unknown>;
  postMessageCleanup(): void;
}

type ExecuteCall = (this: EvmInternals, message: FrameMessage) => Promise<{ execResult: unknown }>;
type RunInterpreter = (this: EvmInternals, message: FrameMessage, options?: { initialLogs?: unknown[] }) => Promise<unknown>;

/** A pooled memory bigger than this (a frame that used much) is left to the collector. */
const pooledMemoryBytes = 64 * 1024;
/** A pooled stack's array longer than this is emptied before it goes back. */
const pooledStackWords = 64;
/** Frames at once are few (one per call depth per running call): more free pairs than this are dropped. */
const poolSize = 64;

interface FramePool {
  memoryClass: new () => PooledMemory;
  stackClass: new () => PooledStack;
  free: { memory: PooledMemory; stack: PooledStack }[];
}

/** The pool, once a constructed interpreter has shown that building one here matches; null when it does not. */
let framePool: FramePool | null | undefined;

/** The fields of an interpreter and of its run state, in the order the package's constructor sets them. */
const interpreterFields = "opDebuggers,_evm,_stateManager,common,_runState,journal,_env,_result,profilerOpts,performanceLogger";
const runStateFields =
  "programCounter,opCode,memory,memoryWordCount,highestMemCost,stack,code,validJumps,cachedPushes,stateManager,blockchain,env,shouldDoJumpAnalysis,interpreter,gasRefund,gasLeft,stateGasSpilled,returnBytes";

/**
 * An interpreter as the package's constructor builds it, with a memory and a stack from the pool.
 * (The constructor's only other work is refusing a clique EVM without a signer: such EVMs do not
 * come here, see pooledFrameEvms.)
 */
function pooledInterpreter(
  pool: FramePool,
  interpreterClass: InterpreterClass,
  evm: EvmInternals & { common: EVM["common"] },
  env: { gasRefund: bigint; initialLogs?: unknown[] },
  gasLeft: bigint,
): InterpreterInstance {
  const parts = pool.free.pop() ?? { memory: new pool.memoryClass(), stack: new pool.stackClass() };
  const interpreter = Object.create(interpreterClass.prototype) as Record<string, unknown>;
  interpreter.opDebuggers = {};
  interpreter._evm = evm;
  interpreter._stateManager = evm.stateManager;
  interpreter.common = evm.common;
  interpreter._runState = {
    programCounter: 0,
    opCode: 0xfe,
    memory: parts.memory,
    memoryWordCount: 0n,
    highestMemCost: 0n,
    stack: parts.stack,
    code: new Uint8Array(0),
    validJumps: new Uint8Array(0),
    cachedPushes: {},
    stateManager: evm.stateManager,
    blockchain: evm.blockchain,
    env,
    shouldDoJumpAnalysis: true,
    interpreter,
    gasRefund: env.gasRefund,
    gasLeft,
    stateGasSpilled: 0n,
    returnBytes: new Uint8Array(0),
  };
  interpreter.journal = evm.journal;
  interpreter._env = env;
  interpreter._result = { logs: env.initialLogs ? [...env.initialLogs] : [], returnValue: undefined, selfdestruct: new Map() };
  interpreter.profilerOpts = evm._optsCached.profiler;
  interpreter.performanceLogger = evm.performanceLogger;
  return interpreter as unknown as InterpreterInstance;
}

/** Gives a finished frame's memory (zeroed) and stack (emptied) back to the pool. */
function releaseFrameParts(pool: FramePool, runState: { memory: PooledMemory; stack: PooledStack }): void {
  const { memory, stack } = runState;
  if (pool.free.length >= poolSize || memory._store.length > pooledMemoryBytes) return;
  memory._store.fill(0);
  stack._len = 0;
  if (stack._store.length > pooledStackWords) stack._store.length = 0;
  pool.free.push({ memory, stack });
}

/**
 * The pool, if an interpreter built by the package's constructor has exactly the fields (and the
 * run state) pooledInterpreter sets, in the same order; null otherwise (another version of the
 * package), and frames keep the constructor.
 */
function framePoolFor(constructed: InterpreterInstance): FramePool | null {
  const runState = constructed._runState as unknown as Record<string, unknown>;
  if (Object.keys(constructed).join(",") !== interpreterFields || Object.keys(runState).join(",") !== runStateFields) return null;
  const memory = constructed._runState.memory;
  const stack = constructed._runState.stack;
  if (!(memory._store instanceof Uint8Array) || !Array.isArray(stack._store) || typeof stack._len !== "number") return null;
  return {
    memoryClass: memory.constructor as new () => PooledMemory,
    stackClass: stack.constructor as new () => PooledStack,
    free: [],
  };
}

/** What the top frame of a thrown-away execution gives (the fields the package's runCall result has in execResult). */
export interface TopFrameResult {
  exceptionError?: EVMError;
  returnValue: Uint8Array;
  executionGasUsed: bigint;
  gasRefund?: bigint;
}

/** The message a call's top frame runs (EVM.runCall's options, as far as calls use them). */
export interface TopFrameCall {
  block: unknown;
  gasPrice: bigint;
  caller: Address;
  gasLimit: bigint;
  to: Address;
  value: bigint;
  data: Uint8Array;
}

/**
 * The top frame of an execution whose state is all thrown away afterwards (eth_call and
 * eth_estimateGas: execution/messageCall.ts), without the package's runCall around the frame;
 * undefined when `evm` does not run lean frames (the caller then runs evm.runCall).
 *
 * runCall opens a checkpoint of the journal and of the transient storage around the frame, and
 * commits or reverts it after: for a call, whose every change the caller's own checkpoint reverts
 * right after, neither changes the result. It also awaits a `beforeMessage` and an `afterMessage`
 * event, which here are emitted only when someone listens (tracers, the estimate's count of frames
 * out of gas). The result is runCall's: on a failure the refund is forfeited and the logs,
 * self-destructs and created addresses dropped. Nested frames still go through runCall.
 */
export async function runTopFrame(evm: EVM, call: TopFrameCall): Promise<TopFrameResult | undefined> {
  const internals = evm as unknown as EvmInternals & { _emit(topic: string, data: unknown): Promise<void>; _executeCall(message: Message): Promise<{ execResult: TopFrameResult & { logs?: unknown[]; selfdestruct?: unknown; createdAddresses?: unknown } }> };
  if (!leanFrameEvms.has(evm) || internals.DEBUG || internals._optsCached.profiler?.enabled === true) return undefined;
  internals._block = call.block;
  internals._tx = { gasPrice: call.gasPrice, origin: call.caller };
  const message = new Message({
    caller: call.caller,
    gasLimit: call.gasLimit,
    to: call.to,
    value: call.value,
    data: call.data,
    selfdestruct: new Map(),
    createdAddresses: new Set(),
  });
  const events = evm.events!;
  if (events.listenerCount("beforeMessage") > 0) await internals._emit("beforeMessage", message);
  const result = await internals._executeCall(message);
  const execResult = result.execResult;
  const error = execResult.exceptionError;
  if (error !== undefined && error.error !== EVMError.errorMessages.CODESTORE_OUT_OF_GAS) {
    execResult.selfdestruct = new Map();
    execResult.createdAddresses = new Set();
    execResult.gasRefund = 0n;
  }
  // Frontier's exception for a creation's code store does not arise: a call creates nothing at its top.
  if (error !== undefined) execResult.logs = [];
  if (events.listenerCount("afterMessage") > 0) await internals._emit("afterMessage", result);
  return execResult;
}

/** EVMs whose frames run here (see installMessageFrames). */
const leanFrameEvms = new WeakSet<object>();
/** Of those, the EVMs whose interpreters are built here with pooled parts (not clique's: its constructor checks a signer). */
const pooledFrameEvms = new WeakSet<object>();
let framesInstalled = false;

function runsLeanFrames(evm: EvmInternals): boolean {
  return leanFrameEvms.has(evm) && !evm.DEBUG && evm._optsCached.profiler?.enabled !== true && evm._block !== undefined;
}

/**
 * Lets `evm` run its call frames here (when its rules allow), installing the frames on the EVM
 * class once. `interpreterClass` is the package's interpreter (internal to it; reached by the
 * caller through a running interpreter).
 */
export function installMessageFrames(evm: EVM, interpreterClass: InterpreterClass): void {
  if (eipsFramesLeaveOut.some((eip) => evm.common.isActivatedEIP(eip))) return;
  leanFrameEvms.add(evm);
  if (evm.common.consensusType() !== "poa") pooledFrameEvms.add(evm);
  if (framesInstalled) return;
  framesInstalled = true;
  const prototype = Object.getPrototypeOf(evm) as { _executeCall: ExecuteCall; runInterpreter: RunInterpreter };
  const packageExecuteCall = prototype._executeCall;
  const packageRunInterpreter = prototype.runInterpreter;

  prototype._executeCall = async function (message) {
    if (!runsLeanFrames(this)) return packageExecuteCall.call(this, message);
    let failure: unknown;
    const sender = (await this.stateManager.getAccount(message.caller)) ?? new Account();
    if (!message.delegatecall) {
      try {
        await this._reduceSenderBalance(sender, message);
      } catch (error) {
        failure = error;
      }
    }
    const recipient = (await this.stateManager.getAccount(message.to)) ?? new Account();
    if (!message.delegatecall) {
      try {
        await this._addToBalance(recipient, message);
      } catch (error) {
        failure = error;
      }
    }
    await this._loadCode(message);
    const code = message.code;
    if (code === undefined || (typeof code !== "function" && code.length === 0) || failure !== undefined) {
      return { execResult: { gasRefund: message.gasRefund, executionGasUsed: 0n, exceptionError: failure, returnValue: new Uint8Array(0), logs: undefined } };
    }
    let result;
    if (message.isCompiled) {
      result = await this.runPrecompile(code, message.data, message.gasLimit);
      result.gasRefund = message.gasRefund;
    } else {
      result = await this.runInterpreter(message);
    }
    if (message.depth === 0) this.postMessageCleanup();
    return { execResult: result };
  };

  prototype.runInterpreter = async function (message, options = {}) {
    if (!runsLeanFrames(this)) return packageRunInterpreter.call(this, message, options);
    const address = message.to ?? createZeroAddress();
    const contract = (await this.stateManager.getAccount(address)) ?? new Account();
    const caller = message.caller ?? createZeroAddress();
    const env = {
      address,
      caller,
      callData: message.data ?? Uint8Array.from([0]),
      callValue: message.value ?? 0n,
      code: message.code,
      isStatic: message.isStatic ?? false,
      isCreate: message.isCreate ?? false,
      depth: message.depth ?? 0,
      gasPrice: this._tx.gasPrice,
      origin: this._tx.origin ?? caller,
      block: this._block,
      contract,
      codeAddress: message.codeAddress,
      gasRefund: message.gasRefund,
      chargeCodeAccesses: message.chargeCodeAccesses,
      blobVersionedHashes: message.blobVersionedHashes ?? [],
      accessWitness: message.accessWitness,
      createdAddresses: message.createdAddresses,
      initialLogs: options.initialLogs,
    };
    const pool = pooledFrameEvms.has(this) ? framePool : null;
    let interpreter: InterpreterInstance;
    if (pool === undefined || pool === null) {
      interpreter = new interpreterClass(this, this.stateManager, this.blockchain, env, message.gasLimit, this.journal, this.performanceLogger, this._optsCached.profiler);
      if (pool === undefined) framePool = framePoolFor(interpreter);
    } else {
      interpreter = pooledInterpreter(pool, interpreterClass, this as EvmInternals & { common: EVM["common"] }, env, message.gasLimit);
    }
    if (message.selfdestruct) interpreter._result.selfdestruct = message.selfdestruct;
    if (message.createdAddresses) interpreter._result.createdAddresses = message.createdAddresses;
    let outcome: InterpreterRunResult;
    try {
      outcome = await interpreter.run(message.code as Uint8Array, options);
    } finally {
      // Whether it ended or threw (a time limit, the engine's own failure), the frame is over.
      if (pool) releaseFrameParts(pool, interpreter._runState);
    }
    const { runState, exceptionError } = outcome;
    const result = interpreter._result;
    const failed = exceptionError !== undefined;
    // A revert returns its unused gas; any other exceptional halt consumes all of it.
    const keepsGas = !failed || exceptionError.error === EVMError.errorMessages.REVERT || exceptionError.error === EVMError.errorMessages.INVALID_EOF_FORMAT;
    message.accessWitness?.commit();
    return {
      logs: failed ? [] : result.logs,
      returnValue: result.returnValue ?? new Uint8Array(0),
      selfdestruct: failed ? new Map() : result.selfdestruct,
      createdAddresses: failed ? new Set() : result.createdAddresses,
      runState,
      exceptionError,
      gas: runState.gasLeft,
      executionGasUsed: keepsGas ? message.gasLimit - runState.gasLeft : message.gasLimit,
      gasRefund: runState.gasRefund,
      stateGasSpilled: runState.stateGasSpilled,
    };
  };
}

/** Whether frames take their memory and stack from the pool (after the first frame has run; for tests). */
export function framesArePooled(): boolean {
  return framePool !== undefined && framePool !== null;
}
