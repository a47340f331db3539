// Faster paths through @ethereumjs/evm's interpreter, for the rule set this node runs (legacy code,
// no EOF, no Verkle/binary-tree witnesses, no block-level access lists, no EIP-8037 state gas).
//
// - The package runs every opcode through an async step function and awaits every gas handler,
//   so each step costs a promise and a microtask turn even for ADD. The loop here calls a step's
//   gas and opcode handlers directly and awaits only what is really asynchronous: state access
//   (SLOAD, SSTORE, BALANCE, the calls and creations ...). The memory-only gas handlers are
//   declared async in the package although they never wait; synchronous equivalents replace them.
// - A contract's code analysis (jump destinations, push values) is kept per code array instead of
//   being redone for every message.
// - MLOAD, MSTORE, KECCAK256, CALLDATALOAD, SLOAD and SSTORE convert between 256-bit stack words
//   and bytes through hexadecimal strings and array spreads in the package; here bytes become a
//   word through a DataView, and a word becomes bytes through its hexadecimal text, written
//   straight into a 32-byte array.
// - A storage slot's key is one array from SLOAD's or SSTORE's gas handler to its opcode, so the
//   journal, the original values and the state convert it to hex once (common/hex.ts).
// - JUMP and JUMPI to a valid destination allocate nothing.
//
// A tracer's `step` listeners get the same events from this loop (see announceStep); the EVM's
// debug mode and its profiler get the package's own loop. Results are the package's: the
// differential test runs generated blocks through both, and the struct-log tests check traces.
import { EVMError, type EVM } from "@ethereumjs/evm";
import { keccak256 } from "../common/crypto.js";
import { hexOfRecentKey, hexOfStableBytes, writeHexDigits } from "../common/hex.js";
import { markStaticCall, refusedCallListenerOf } from "./callFrameMarks.js";
import { installMessageFrames, type InterpreterClass } from "./messageFrames.js";

/** EIPs whose interpreter paths this loop leaves out; with any of them active it is not used. */
const unsupportedEips = [3540, 6800, 7864, 7928, 8037] as const;

interface Stack {
  /** The words (only the first `_len` are on the stack) and the stack's height: the package's fields. */
  _store: bigint[];
  _len: number;
  getStack(): bigint[];
  push(value: bigint): void;
  pop(): bigint;
  popN(count: number): bigint[];
  peek(count?: number): bigint[];
}

interface Memory {
  _store: Uint8Array;
  read(offset: number, size: number, avoidCopy?: boolean): Uint8Array;
  write(offset: number, size: number, value: Uint8Array): void;
}

interface InterpreterView {
  _evm: EVM & { _opcodeMap: OpcodeEntry[] };
  _runState: RunState;
  common: EVM["common"];
  profilerOpts?: { enabled?: boolean };
  _getValidJumpDestinations(code: Uint8Array): { jumps: Uint8Array; pushes: Record<number, bigint>; opcodesCached: OpcodeEntry[] };
  getCallData(): Uint8Array;
  storageLoad(key: Uint8Array): Promise<Uint8Array>;
  storageStore(key: Uint8Array, value: Uint8Array): Promise<void>;
  log(data: Uint8Array, topicCount: number, topics: Uint8Array[]): void;
  _result: { returnValue?: Uint8Array };
}

interface RunState {
  programCounter: number;
  gasRefund: bigint;
  stateManager: unknown;
  opCode: number;
  code: Uint8Array;
  stack: Stack;
  memory: Memory;
  memoryWordCount: bigint;
  highestMemCost: bigint;
  gasLeft: bigint;
  validJumps: Uint8Array;
  /** The value each PUSH pushes, by its position: set by the jump analysis. */
  cachedPushes: Record<number, bigint>;
  shouldDoJumpAnalysis: boolean;
  interpreter: InterpreterView;
  env: { accessWitness?: { commit(): void }; eof?: unknown; depth: number; address: unknown; contract: unknown; codeAddress: unknown };
}

interface OpcodeInfo {
  code: number;
  fullName: string;
  fee: number;
  feeBigInt: bigint;
  dynamicGas: boolean;
  isAsync: boolean;
  isInvalid: boolean;
}

type GasHandler = (runState: RunState, gas: bigint, common: EVM["common"]) => Promise<bigint> | bigint;
type OpHandler = (runState: RunState, common: EVM["common"]) => Promise<void> | void;

export interface OpcodeEntry {
  opcodeInfo: OpcodeInfo;
  opHandler: OpHandler;
  gasHandler?: GasHandler;
}

type InterpreterRun = (this: InterpreterView, code: Uint8Array, options?: { pc?: number }) => Promise<{ runState: RunState; exceptionError?: EVMError }>;

// --- 256-bit words and bytes ----------------------------------------------------------------

/**
 * A stack word (0 <= word < 2^256) as 32 big-endian bytes. Through the word's hexadecimal text:
 * V8 prints a BigInt faster than it shifts and masks one (DataView.setBigUint64 needs both).
 */
export function wordToBytes32(word: bigint): Uint8Array {
  const bytes = new Uint8Array(32);
  if (word === 0n) return bytes;
  const hex = word.toString(16);
  writeHexDigits(hex, bytes, 32 - ((hex.length + 1) >> 1));
  return bytes;
}

let recentSlotWord: bigint | undefined;
let recentSlotKey: Uint8Array = new Uint8Array(32);

/**
 * A storage slot's key (a stack word) as 32 bytes, the same array as the previous call for the same
 * word: SLOAD's and SSTORE's gas and their opcodes pass one key to the journal, the original values
 * and the state, which then convert it to hex once (common/hex.ts, hexOfRecentKey). Nobody writes
 * to a key array.
 */
function slotKey(word: bigint): Uint8Array {
  if (word !== recentSlotWord) {
    recentSlotKey = wordToBytes32(word);
    recentSlotWord = word;
  }
  return recentSlotKey;
}

/** A stack word as its shortest big-endian bytes (none for zero), as the package's bigIntToBytes. */
export function wordToMinimalBytes(word: bigint): Uint8Array {
  const bytes = wordToBytes32(word);
  let start = 0;
  while (start < 31 && bytes[start] === 0) start++;
  return bytes.subarray(start);
}

/** One word of scratch space for bytesToWord (words are read synchronously, one at a time). */
const scratchWord = new Uint8Array(32);
const scratchView = new DataView(scratchWord.buffer);

/** Big-endian bytes (at most 32) as a word; short values (most stored values) skip the high lanes. */
export function bytesToWord(bytes: Uint8Array): bigint {
  const length = bytes.length;
  scratchWord.fill(0, 0, 32 - length);
  scratchWord.set(bytes, 32 - length);
  const low = scratchView.getBigUint64(24);
  if (length <= 8) return low;
  if (length <= 16) return (scratchView.getBigUint64(16) << 64n) | low;
  return (scratchView.getBigUint64(0) << 192n) | (scratchView.getBigUint64(8) << 128n) | (scratchView.getBigUint64(16) << 64n) | low;
}

// --- gas handlers that never wait -------------------------------------------------------------

interface GasParameters {
  memoryGas: bigint;
  quadCoefficientDivGas: bigint;
  keccak256WordGas: bigint;
  copyGas: bigint;
  logTopicGas: bigint;
  logDataGas: bigint;
  expByteGas: bigint;
}

function divideRoundingUp(value: bigint, divisor: bigint): bigint {
  const quotient = value / divisor;
  return quotient * divisor === value ? quotient : quotient + 1n;
}

/** Memory expansion gas, as the package's subMemUsage (and it updates the run state the same way). */
function memoryExpansionGas(runState: RunState, offset: bigint, length: bigint, parameters: GasParameters): bigint {
  if (length === 0n) return 0n;
  const words = divideRoundingUp(offset + length, 32n);
  if (words <= runState.memoryWordCount) return 0n;
  let cost = words * parameters.memoryGas + (words * words) / parameters.quadCoefficientDivGas;
  if (cost > runState.highestMemCost) {
    const previous = runState.highestMemCost;
    runState.highestMemCost = cost;
    cost -= previous;
  }
  runState.memoryWordCount = words;
  return cost;
}

function trap(message: string): never {
  throw new EVMError(message as ConstructorParameters<typeof EVMError>[0]);
}

type SyncGasHandler = (runState: RunState, gas: bigint) => bigint;

function synchronousGasHandlers(parameters: GasParameters): Map<number, SyncGasHandler> {
  const copying: SyncGasHandler = (runState, gas) => {
    const [memoryOffset, , length] = runState.stack.peek(3) as [bigint, bigint, bigint];
    gas += memoryExpansionGas(runState, memoryOffset, length, parameters);
    if (length !== 0n) gas += parameters.copyGas * divideRoundingUp(length, 32n);
    return gas;
  };
  const offsetAndLength: SyncGasHandler = (runState, gas) => {
    const [offset, length] = runState.stack.peek(2) as [bigint, bigint];
    return gas + memoryExpansionGas(runState, offset, length, parameters);
  };
  const log: SyncGasHandler = (runState, gas) => {
    if ((runState.interpreter as unknown as { isStatic(): boolean }).isStatic()) trap(EVMError.errorMessages.STATIC_STATE_CHANGE);
    const [offset, length] = runState.stack.peek(2) as [bigint, bigint];
    const topics = runState.opCode - 0xa0;
    gas += memoryExpansionGas(runState, offset, length, parameters);
    return gas + parameters.logTopicGas * BigInt(topics) + length * parameters.logDataGas;
  };
  const handlers = new Map<number, SyncGasHandler>([
    [
      0x0a, // EXP
      (runState, gas) => {
        const [, exponent] = runState.stack.peek(2) as [bigint, bigint];
        if (exponent === 0n) return gas;
        const byteLength = Math.ceil(exponent.toString(2).length / 8);
        if (byteLength < 1 || byteLength > 32) trap(EVMError.errorMessages.OUT_OF_RANGE);
        return gas + BigInt(byteLength) * parameters.expByteGas;
      },
    ],
    [
      0x20, // KECCAK256
      (runState, gas) => {
        const [offset, length] = runState.stack.peek(2) as [bigint, bigint];
        gas += memoryExpansionGas(runState, offset, length, parameters);
        return gas + parameters.keccak256WordGas * divideRoundingUp(length, 32n);
      },
    ],
    [0x37, copying], // CALLDATACOPY
    [0x39, copying], // CODECOPY
    [
      0x3e, // RETURNDATACOPY
      (runState, gas) => {
        const [, dataOffset, length] = runState.stack.peek(3) as [bigint, bigint, bigint];
        const returnDataSize = (runState.interpreter as unknown as { getReturnDataSize(): bigint }).getReturnDataSize();
        if (dataOffset + length > returnDataSize) trap(EVMError.errorMessages.OUT_OF_GAS);
        return copying(runState, gas);
      },
    ],
    [
      0x51, // MLOAD
      (runState, gas) => gas + memoryExpansionGas(runState, runState.stack.peek()[0]!, 32n, parameters),
    ],
    [
      0x52, // MSTORE
      (runState, gas) => gas + memoryExpansionGas(runState, runState.stack.peek()[0]!, 32n, parameters),
    ],
    [
      0x53, // MSTORE8
      (runState, gas) => gas + memoryExpansionGas(runState, runState.stack.peek()[0]!, 1n, parameters),
    ],
    [
      0x5e, // MCOPY
      (runState, gas) => {
        const [destination, source, length] = runState.stack.peek(3) as [bigint, bigint, bigint];
        gas += 3n * ((length + 31n) / 32n);
        gas += memoryExpansionGas(runState, source, length, parameters);
        return gas + memoryExpansionGas(runState, destination, length, parameters);
      },
    ],
    [0xf3, offsetAndLength], // RETURN
    [0xfd, offsetAndLength], // REVERT
  ]);
  for (let opcode = 0xa0; opcode <= 0xa4; opcode++) handlers.set(opcode, log);
  return handlers;
}

// --- opcode handlers without hexadecimal round trips ----------------------------------------------

const fastOpcodeHandlers = new Map<number, OpHandler>([
  [
    0x20, // KECCAK256
    (runState) => {
      const [offset, length] = runState.stack.popN(2) as [bigint, bigint];
      const data = length === 0n ? new Uint8Array(0) : runState.memory.read(Number(offset), Number(length), true);
      runState.stack.push(bytesToWord(keccak256(data)));
    },
  ],
  [
    0x35, // CALLDATALOAD
    (runState) => {
      const position = runState.stack.pop();
      const callData = runState.interpreter.getCallData();
      if (position >= BigInt(callData.length)) {
        runState.stack.push(0n);
        return;
      }
      const start = Number(position);
      const word = new Uint8Array(32);
      word.set(callData.subarray(start, start + 32));
      runState.stack.push(bytesToWord(word));
    },
  ],
  [
    0x51, // MLOAD
    (runState) => {
      const position = runState.stack.pop();
      runState.stack.push(bytesToWord(runState.memory.read(Number(position), 32, true)));
    },
  ],
  [
    0x52, // MSTORE
    (runState) => {
      const [offset, word] = runState.stack.popN(2) as [bigint, bigint];
      runState.memory.write(Number(offset), 32, wordToBytes32(word));
    },
  ],
  [
    0x54, // SLOAD
    async (runState) => {
      const key = runState.stack.pop();
      const value = await runState.interpreter.storageLoad(slotKey(key));
      runState.stack.push(value.length === 0 ? 0n : bytesToWord(value));
    },
  ],
  [
    0x55, // SSTORE (its gas handler already refused a static context)
    async (runState) => {
      const [key, value] = runState.stack.popN(2) as [bigint, bigint];
      await runState.interpreter.storageStore(slotKey(key), value === 0n ? new Uint8Array(0) : wordToMinimalBytes(value));
    },
  ],
  // LOG0 to LOG4 (their gas handler already refused a static context): the package makes each
  // topic's 32 bytes through its hexadecimal text padded and parsed back, for every event emitted.
  ...[0xa0, 0xa1, 0xa2, 0xa3, 0xa4].map((opcode): [number, OpHandler] => [
    opcode,
    (runState) => {
      const [offset, length] = runState.stack.popN(2) as [bigint, bigint];
      const topicCount = opcode - 0xa0;
      // Appended rather than mapped: a map() gives a packed array until V8 optimises it, a holey one
      // after, and the code reading the topics (the log, the bloom) was compiled again for the second.
      const topics: Uint8Array[] = [];
      for (const word of runState.stack.popN(topicCount) as bigint[]) topics.push(wordToBytes32(word));
      const data = length === 0n ? new Uint8Array(0) : runState.memory.read(Number(offset), Number(length));
      runState.interpreter.log(data, topicCount, topics);
    },
  ]),
]);

/**
 * JUMP and JUMPI for a valid destination: the package's handlers build a BigInt of the code size
 * and an array of the popped words at every jump. A jump they would refuse (a missing operand, a
 * destination past the code or not a JUMPDEST) goes to the package's handler, for its exact error.
 * Both loops analyse the jump destinations before the first jump runs.
 */
function fastJumps(packageJump: OpHandler, packageConditionalJump: OpHandler): [number, OpHandler][] {
  const isValidDestination = (runState: RunState, destination: bigint) => destination < runState.code.length && runState.validJumps[Number(destination)] === 1;
  return [
    [
      0x56, // JUMP
      (runState, common) => {
        const stack = runState.stack;
        const destination = stack._len >= 1 ? stack._store[stack._len - 1]! : undefined;
        if (destination === undefined || !isValidDestination(runState, destination)) return packageJump(runState, common);
        stack._len--;
        runState.programCounter = Number(destination);
      },
    ],
    [
      0x57, // JUMPI
      (runState, common) => {
        const stack = runState.stack;
        if (stack._len < 2) return packageConditionalJump(runState, common);
        const destination = stack._store[stack._len - 1]!;
        const condition = stack._store[stack._len - 2]!;
        if (condition !== 0n && !isValidDestination(runState, destination)) return packageConditionalJump(runState, common);
        stack._len -= 2;
        if (condition !== 0n) runState.programCounter = Number(destination);
      },
    ],
  ];
}

/**
 * PUSH1 to PUSH32 once the code's pushes are known (the fast loop analyses the code first): the
 * package's handler asks the rules at every push whether code chunks are charged (EIPs 6800 and
 * 7864, under which these paths are not installed). Before the analysis, the package's handler.
 */
function fastPushes(packagePush: OpHandler): [number, OpHandler][] {
  const push: OpHandler = (runState, common) => {
    if (runState.shouldDoJumpAnalysis) return packagePush(runState, common);
    runState.stack.push(runState.cachedPushes[runState.programCounter]!);
    runState.programCounter += runState.opCode - 0x5f;
  };
  return Array.from({ length: 32 }, (_, index): [number, OpHandler] => [0x60 + index, push]);
}

// --- SSTORE's gas ------------------------------------------------------------------------------

/** The gas parameters of SSTORE under EIP-2200 with EIP-2929's access costs (and EIP-3529's refunds). */
interface StorageGasParameters {
  sentry: bigint;
  noop: bigint;
  init: bigint;
  clean: bigint;
  dirty: bigint;
  clearRefund: bigint;
  initRefund: bigint;
  cleanRefund: bigint;
  reset: bigint;
  warmRead: bigint;
  coldLoad: bigint;
}

interface StorageInterpreter {
  isStatic(): boolean;
  getGasLeft(): bigint;
  getAddress(): { bytes: Uint8Array };
  storageLoad(key: Uint8Array, original: boolean, trackAccess: boolean): Promise<Uint8Array>;
  refundGas(amount: bigint): void;
  subRefund(amount: bigint): void;
  journal: { isWarmedStorage(address: Uint8Array, slot: Uint8Array): boolean; addWarmedStorage(address: Uint8Array, slot: Uint8Array): void };
}

/**
 * SSTORE's gas handler as the package's for this node's rules (EIP-2200 net metering, EIP-2929
 * access costs, no EIP-8038 or witness charges), comparing the current, original and new values as
 * words: the package pads each value to 32 bytes through array spreads first, a tenth of a loop of
 * stores. Same charges, refunds, warming and traps, in the same order.
 */
function storageStoreGas(parameters: StorageGasParameters) {
  return async (runState: RunState, gas: bigint): Promise<bigint> => {
    const interpreter = runState.interpreter as unknown as StorageInterpreter;
    if (interpreter.isStatic()) trap(EVMError.errorMessages.STATIC_STATE_CHANGE);
    const [key, value] = runState.stack.peek(2) as [bigint, bigint];
    const slot = slotKey(key);
    const currentBytes = await interpreter.storageLoad(slot, false, false);
    const originalBytes = await interpreter.storageLoad(slot, true, false);
    const current = currentBytes.length === 0 ? 0n : bytesToWord(currentBytes);
    const original = originalBytes.length === 0 ? 0n : bytesToWord(originalBytes);
    if (interpreter.getGasLeft() <= parameters.sentry) trap(EVMError.errorMessages.OUT_OF_GAS);
    const address = interpreter.getAddress().bytes;
    const warm = interpreter.journal.isWarmedStorage(address, slot);
    if (current === value) {
      gas += warm ? parameters.warmRead : parameters.noop;
    } else if (original === current) {
      if (original !== 0n && value === 0n) interpreter.refundGas(parameters.clearRefund);
      gas += original === 0n ? parameters.init : parameters.clean;
    } else {
      if (original !== 0n) {
        if (current === 0n) interpreter.subRefund(parameters.clearRefund);
        else if (value === 0n) interpreter.refundGas(parameters.clearRefund);
      }
      if (original === value) {
        if (original === 0n) interpreter.refundGas(warm ? parameters.init - parameters.warmRead : parameters.initRefund);
        else interpreter.refundGas(warm ? parameters.reset - parameters.coldLoad - parameters.warmRead : parameters.cleanRefund);
      }
      gas += parameters.dirty;
    }
    // EIP-2929 after EIP-2200's sentry: a cold slot is warmed and charged.
    if (!warm) {
      interpreter.journal.addWarmedStorage(address, slot);
      gas += parameters.coldLoad;
    }
    return gas;
  };
}

/**
 * SLOAD's gas handler as the package's under EIP-2929 (no witness charges): a cold slot is warmed
 * and charged the cold load, a warm one the warm read. Synchronous: it reads only the journal.
 */
function storageLoadGas(parameters: Pick<StorageGasParameters, "warmRead" | "coldLoad">): SyncGasHandler {
  return (runState, gas) => {
    const interpreter = runState.interpreter as unknown as StorageInterpreter;
    const address = interpreter.getAddress().bytes;
    const slot = slotKey(runState.stack.peek()[0]!);
    if (interpreter.journal.isWarmedStorage(address, slot)) return gas + parameters.warmRead;
    interpreter.journal.addWarmedStorage(address, slot);
    return gas + parameters.coldLoad;
  };
}

// --- the access journal ---------------------------------------------------------------------------

/** The package's journal (evm.journal), as far as warm storage goes. */
interface JournalView {
  /** Warm slots by account hex, of this transaction. */
  journal: Map<string, Set<string>>;
  /** Slots warm for every transaction (tx access lists). */
  alwaysWarmJournal: Map<string, Set<string>>;
  /** Per checkpoint: [warmed addresses, warmed slots by account, touched]; reverted on revert. */
  journalDiff: [number, [Set<string>, Map<string, Set<string>>, Set<string>]][];
  accessList?: Map<string, Set<string>>;
  addWarmedAddress(address: Uint8Array): void;
  isWarmedAddress(address: Uint8Array): boolean;
  isWarmedStorage(address: Uint8Array, slot: Uint8Array): boolean;
  addWarmedStorage(address: Uint8Array, slot: Uint8Array): void;
  touchAddress(address: { bytes: Uint8Array }): void;
  touchAccount(addressHex: string): void;
}

/**
 * Gives an EVM's journal warm-storage checks as the package's, with the node's hex conversions: the
 * package converts the address and the slot to hex with a JavaScript loop on every SLOAD and
 * SSTORE (the address's hex is kept here by its bytes, the slot's is its SLOAD's or SSTORE's:
 * common/hex.ts). The same maps and sets, changed in the same order. Set on the journal object, not
 * its class: an EVM as the package makes it keeps the package's (the tests compare both). Warm
 * addresses and touched accounts likewise: the package writes an address's hex at every account
 * write (through Address.toString, then cuts the prefix) and at every warmth check.
 */
function installFastStorageWarmth(journal: JournalView): void {
  journal.touchAddress = function (this: JournalView, address) {
    this.touchAccount(hexOfStableBytes(address.bytes));
  };
  journal.isWarmedAddress = function (this: JournalView, address) {
    const addressHex = hexOfStableBytes(address);
    return this.journal.has(addressHex) || this.alwaysWarmJournal.has(addressHex);
  };
  journal.addWarmedAddress = function (this: JournalView, address) {
    const addressHex = hexOfStableBytes(address);
    if (!this.journal.has(addressHex)) {
      this.journal.set(addressHex, new Set());
      this.journalDiff[this.journalDiff.length - 1]![1][0].add(addressHex);
    }
    const accessList = this.accessList;
    if (accessList !== undefined && !accessList.has(addressHex)) accessList.set(addressHex, new Set());
  };
  journal.isWarmedStorage = function (this: JournalView, address, slot) {
    const addressHex = hexOfStableBytes(address);
    const slotHex = hexOfRecentKey(slot);
    return this.journal.get(addressHex)?.has(slotHex) === true || this.alwaysWarmJournal.get(addressHex)?.has(slotHex) === true;
  };
  journal.addWarmedStorage = function (this: JournalView, address, slot) {
    const addressHex = hexOfStableBytes(address);
    let slots = this.journal.get(addressHex);
    if (slots === undefined) {
      this.addWarmedAddress(address);
      slots = this.journal.get(addressHex)!;
    }
    const slotHex = hexOfRecentKey(slot);
    if (!slots.has(slotHex)) {
      slots.add(slotHex);
      const slotsByAddress = this.journalDiff[this.journalDiff.length - 1]![1][1];
      let warmedHere = slotsByAddress.get(addressHex);
      if (warmedHere === undefined) slotsByAddress.set(addressHex, (warmedHere = new Set()));
      warmedHere.add(slotHex);
    }
    // addWarmedAddress has put the account in the access list.
    this.accessList?.get(addressHex)!.add(slotHex);
  };
}

// --- the loop ----------------------------------------------------------------------------------

interface FastLoopSettings {
  /** The synchronous gas handlers for the EVM's rules. */
  gasHandlers: Map<number, SyncGasHandler>;
  /** 1 for the opcodes whose handlers neither read nor change the gas left (gasNeutralOpcodes). */
  gasNeutral: Uint8Array;
}

/** Per EVM: what the loop needs for its rules, or null when the loop must not run on it. */
const fastLoopSettings = new WeakMap<object, FastLoopSettings | null>();

/**
 * Opcodes whose handlers neither read nor change the gas left, under the rules the fast paths are
 * installed for: arithmetic, comparisons, hashing, the environment's constants, memory, storage
 * loads, transient storage, jumps, pushes, duplicates and swaps, logs and the frame's ends. The
 * others (GAS, SSTORE and its sentry, calls, creations, SELFDESTRUCT, account reads...) find the
 * gas left in the run state.
 */
const gasNeutralOpcodes: readonly number[] = [
  0x00,
  ...range(0x01, 0x0b),
  ...range(0x10, 0x1d),
  0x20,
  0x30,
  ...range(0x32, 0x3a),
  0x3d,
  0x3e,
  ...range(0x41, 0x48),
  ...range(0x50, 0x54),
  0x56,
  0x57,
  0x58,
  0x59,
  ...range(0x5b, 0x5f),
  ...range(0x60, 0x9f),
  ...range(0xa0, 0xa4),
  0xf3,
  0xfd,
  0xfe,
];

function range(first: number, last: number): number[] {
  return Array.from({ length: last - first + 1 }, (_, index) => first + index);
}

/**
 * The gas-neutral opcodes of an opcode table: those of the list whose gas, when it depends on the
 * operands, comes from one of the loop's synchronous handlers (the package's others are not looked
 * at here).
 */
function gasNeutralTable(opcodeMap: OpcodeEntry[], gasHandlers: Map<number, SyncGasHandler>): Uint8Array {
  const table = new Uint8Array(256);
  for (const opcode of gasNeutralOpcodes) {
    const info = opcodeMap[opcode]?.opcodeInfo;
    if (info !== undefined && (!info.dynamicGas || gasHandlers.has(opcode))) table[opcode] = 1;
  }
  return table;
}

/** The largest gas left the loop keeps as a number. */
const maxNumericGas = BigInt(Number.MAX_SAFE_INTEGER);
const evmErrorType = (new EVMError(EVMError.errorMessages.STOP) as unknown as { errorType: string }).errorType;

function isEvmError(error: unknown): error is EVMError {
  return typeof error === "object" && error !== null && (error as { errorType?: unknown }).errorType === evmErrorType;
}

type JumpAnalysis = InterpreterView["_getValidJumpDestinations"];

/**
 * The interpreter analyses a contract's code (jump destinations, push values, opcode entries)
 * every time a message runs it: for a token's balanceOf that is a tenth of the call. The analysis
 * depends only on the code and on the EVM's opcode table, and is only read afterwards, so it is
 * kept per EVM and per code array.
 */
function rememberJumpAnalysis(prototype: { _getValidJumpDestinations: JumpAnalysis }): void {
  const analyse = prototype._getValidJumpDestinations;
  const byEvm = new WeakMap<object, WeakMap<Uint8Array, ReturnType<JumpAnalysis>>>();
  prototype._getValidJumpDestinations = function (this: InterpreterView, code) {
    let byCode = byEvm.get(this._evm);
    if (byCode === undefined) byEvm.set(this._evm, (byCode = new WeakMap()));
    let analysis = byCode.get(code);
    if (analysis === undefined) byCode.set(code, (analysis = analyse.call(this, code)));
    return analysis;
  };
}

type BaseCall = (this: CallingInterpreter, message: object) => Promise<unknown>;
type CallStatic = (this: CallingInterpreter, ...args: unknown[]) => Promise<unknown>;

/** The interpreter fields the package's _baseCall reads to refuse a call. */
interface CallingInterpreter {
  makingStaticCall?: boolean;
  _evm: object;
  _env: { depth: number; contract: { balance: bigint } };
  common: { param(name: string): bigint };
}

/**
 * Marks the messages of STATICCALL, and reports the calls _baseCall refuses. The package's
 * callStatic builds the message and hands it to _baseCall in the same synchronous stretch, so a
 * flag on the interpreter set by the one and read by the other cannot meet another call's. The
 * refusal test is the package's own (depth first, then the caller's balance, except for
 * DELEGATECALL), made only while a listener is set.
 */
function markStaticCallMessages(prototype: { callStatic: CallStatic; _baseCall: BaseCall }): void {
  const packageCallStatic = prototype.callStatic;
  const packageBaseCall = prototype._baseCall;
  prototype.callStatic = function (this: CallingInterpreter, ...args) {
    this.makingStaticCall = true;
    return packageCallStatic.apply(this, args);
  };
  prototype._baseCall = function (this: CallingInterpreter, message) {
    if (this.makingStaticCall === true) {
      this.makingStaticCall = false;
      markStaticCall(message);
    }
    const listener = refusedCallListenerOf(this._evm);
    if (listener !== undefined) {
      const { value, delegatecall } = message as { value: bigint; delegatecall?: boolean };
      if (this._env.depth >= Number(this.common.param("stackLimit"))) listener(message, "max call depth exceeded");
      else if (delegatecall !== true && this._env.contract.balance < value) listener(message, "insufficient balance");
    }
    return packageBaseCall.call(this, message);
  };
}

type StepListener = ((step: unknown) => void) | ((step: unknown, done: () => void) => void);

/**
 * The `step` event a tracer gets, as the package's interpreter builds it before a step runs (after
 * its dynamic gas is known, with the memory size from before that gas), but with the stack and
 * the memory copied only when a listener reads them: the package copies both at every step,
 * which made most of a struct-log trace's garbage even with stack and memory turned off. A
 * listener must read them while it handles the event (the node's tracers do). EOF fields and PUSH
 * immediates are left out: no EOF code runs here and the node's tracers do not read them.
 */
async function announceStep(interpreter: InterpreterView, info: OpcodeInfo, dynamicFee: bigint, memoryWords: bigint, listeners: readonly StepListener[]): Promise<void> {
  const step = new StepEvent(interpreter._runState, info, dynamicFee, memoryWords);
  // As the package's _emit: in order, waiting for a listener that takes a callback.
  for (const listener of listeners) {
    if (listener.length === 2) await new Promise<void>((resolve) => (listener as (step: unknown, done: () => void) => void)(step, resolve));
    else (listener as (step: unknown) => void)(step);
  }
}

/** One step event: plain fields, and the stack and memory copied on first read (class getters, no closures per step). */
class StepEvent {
  readonly pc: number;
  readonly gasLeft: bigint;
  readonly gasRefund: bigint;
  readonly opcode: { name: string; fee: number; dynamicFee: bigint; isAsync: boolean; code: number };
  readonly depth: number;
  readonly address: unknown;
  readonly account: unknown;
  readonly codeAddress: unknown;
  readonly stateManager: unknown;
  /** REVERT's payload, as the package reads it; undefined for other opcodes. */
  readonly error: Uint8Array | undefined;
  private copiedStack: bigint[] | undefined;
  private copiedMemory: Uint8Array | undefined;

  constructor(
    private readonly runState: RunState,
    info: OpcodeInfo,
    dynamicFee: bigint,
    readonly memoryWordCount: bigint,
  ) {
    const env = runState.env;
    this.pc = runState.programCounter;
    this.gasLeft = runState.gasLeft;
    this.gasRefund = runState.gasRefund;
    this.opcode = { name: info.fullName, fee: info.fee, dynamicFee, isAsync: info.isAsync, code: info.code };
    this.depth = env.depth;
    this.address = env.address;
    this.account = env.contract;
    this.codeAddress = env.codeAddress;
    this.stateManager = runState.stateManager;
    if (info.code === 0xfd) {
      const [offset, length] = runState.stack.peek(2) as [bigint, bigint];
      this.error = length === 0n ? new Uint8Array(0) : runState.memory.read(Number(offset), Number(length));
    } else {
      this.error = undefined;
    }
  }

  get stack(): bigint[] {
    return (this.copiedStack ??= this.runState.stack.getStack());
  }

  get memory(): Uint8Array {
    return (this.copiedMemory ??= this.runState.memory._store.slice(0, Number(this.memoryWordCount) * 32));
  }
}

type InterpreterPrototype = { run: InterpreterRun; _getValidJumpDestinations: JumpAnalysis; callStatic: CallStatic; _baseCall: BaseCall };

const stopOpcode = 0x00;
const returnOpcode = 0xf3;
/**
 * The package's STOP and RETURN handlers, as the EVMs with the fast loop have them: the loop ends
 * a frame on them itself. The package's handlers end every frame by throwing (STOP as an error the loop
 * catches): an Error with its stack trace per call frame. A handler wrapped by someone else (it
 * is then not in this set) runs as it is.
 */
const frameEndHandlers = new WeakSet<object>();

function installFastLoop(prototype: InterpreterPrototype): void {
  rememberJumpAnalysis(prototype);
  markStaticCallMessages(prototype);
  const packageRun = prototype.run;
  prototype.run = async function (code, options = {}) {
    const evm = this._evm;
    const settings = fastLoopSettings.get(evm);
    const debugged = (evm as unknown as { DEBUG: boolean }).DEBUG || this.profilerOpts?.enabled === true;
    if (settings == null || debugged || options.pc !== undefined || code[0] === 0xef) return packageRun.call(this, code, options);
    const gasHandlers = settings.gasHandlers;
    const stepListeners = evm.events.listeners("step") as StepListener[];
    const traced = stepListeners.length > 0;

    const runState = this._runState;
    const common = this.common;
    runState.code = code;
    let byPosition: OpcodeEntry[] | undefined;
    if (code.length > 0) {
      const { jumps, pushes, opcodesCached } = this._getValidJumpDestinations(code);
      runState.validJumps = jumps;
      runState.cachedPushes = pushes;
      runState.shouldDoJumpAnalysis = false;
      byPosition = opcodesCached;
    }
    // Between steps the gas left is a number, while it is a safe integer and no step listener
    // watches: a BigInt subtraction at every step allocates. A step that is not gas-neutral finds
    // it in the run state (and it is read back after the step); the run state has it at the end.
    const gasNeutral = !traced && runState.gasLeft <= maxNumericGas ? settings.gasNeutral : undefined;
    let gasLeft = gasNeutral === undefined ? 0 : Number(runState.gasLeft);
    /** Whether runState.gasLeft is the gas left, rather than `gasLeft`. */
    let gasInRunState = gasNeutral === undefined;
    let exceptionError: EVMError | undefined;
    while (runState.programCounter < code.length) {
      const entry = byPosition![runState.programCounter]!;
      const info = entry.opcodeInfo;
      runState.opCode = info.code;
      try {
        if (gasNeutral !== undefined && gasNeutral[info.code] === 1) {
          // A dynamic gas above 2^53 loses precision as a number, but exceeds any gas left here.
          const fee = info.dynamicGas ? Number(gasHandlers.get(info.code)!(runState, info.feeBigInt)) : info.fee;
          if (info.isInvalid) trap(EVMError.errorMessages.INVALID_OPCODE);
          gasLeft -= fee;
          if (gasLeft < 0) {
            gasLeft = 0;
            trap(EVMError.errorMessages.OUT_OF_GAS);
          }
        } else {
          if (!gasInRunState) {
            runState.gasLeft = BigInt(gasLeft);
            gasInRunState = true;
          }
          let gas = info.feeBigInt;
          const memoryWordsBefore = runState.memoryWordCount;
          if (info.dynamicGas) {
            const synchronous = gasHandlers.get(info.code);
            try {
              gas = synchronous !== undefined ? synchronous(runState, gas) : await entry.gasHandler!(runState, gas, common);
            } catch (error) {
              // As the package: a step whose gas cannot be paid is still announced.
              if (traced && isEvmError(error)) await announceStep(this, info, gas, memoryWordsBefore, stepListeners);
              throw error;
            }
          }
          if (traced) await announceStep(this, info, gas, memoryWordsBefore, stepListeners);
          if (info.isInvalid) trap(EVMError.errorMessages.INVALID_OPCODE);
          runState.gasLeft -= gas;
          if (runState.gasLeft < 0n) {
            runState.gasLeft = 0n;
            trap(EVMError.errorMessages.OUT_OF_GAS);
          }
        }
        runState.programCounter++;
        if ((info.code === stopOpcode || info.code === returnOpcode) && frameEndHandlers.has(entry.opHandler)) {
          // As the package's handlers, without the throw: RETURN's data is the frame's result.
          if (info.code === returnOpcode) {
            const [offset, length] = runState.stack.popN(2) as [bigint, bigint];
            this._result.returnValue = length === 0n ? new Uint8Array(0) : runState.memory.read(Number(offset), Number(length));
          }
          break;
        }
        if (info.isAsync) await entry.opHandler(runState, common);
        else {
          // A synchronous handler answers a promise only when the execution gives the event loop
          // a turn (the engine's time-limit wrapper of JUMP and JUMPI, engine.ts).
          const pause = entry.opHandler(runState, common);
          if (pause !== undefined) await pause;
        }
        if (gasNeutral !== undefined && gasInRunState) {
          gasLeft = Number(runState.gasLeft);
          gasInRunState = false;
        }
      } catch (error) {
        if (!isEvmError(error)) throw error;
        if (error.error !== EVMError.errorMessages.STOP) exceptionError = error;
        break;
      }
    }
    if (!gasInRunState) runState.gasLeft = BigInt(gasLeft);
    return { runState, exceptionError };
  };
}


/**
 * Gives `evm` the faster opcode handlers (SSTORE's gas handler among them) and, once per loaded
 * package, the faster loop. Call it before the EVM runs anything and before any wrapping of its
 * opcode handlers: it replaces table entries, and wrappers put in afterwards wrap the fast ones.
 */
export async function installInterpreterFastPaths(evm: EVM): Promise<void> {
  const common = evm.common;
  if (unsupportedEips.some((eip) => common.isActivatedEIP(eip))) {
    fastLoopSettings.set(evm, null);
    return;
  }
  const opcodeMap = (evm as unknown as { _opcodeMap: OpcodeEntry[] })._opcodeMap;
  for (const opcode of [stopOpcode, returnOpcode]) frameEndHandlers.add(opcodeMap[opcode]!.opHandler);
  const replacements = [...fastOpcodeHandlers, ...fastJumps(opcodeMap[0x56]!.opHandler, opcodeMap[0x57]!.opHandler), ...fastPushes(opcodeMap[0x60]!.opHandler)];
  for (const [opcode, opHandler] of replacements) {
    const entry = opcodeMap[opcode];
    if (entry !== undefined) opcodeMap[opcode] = { ...entry, opHandler };
  }
  const parameter = (name: string) => common.param(name);
  const gasHandlers = synchronousGasHandlers({
    memoryGas: parameter("memoryGas"),
    quadCoefficientDivGas: parameter("quadCoefficientDivGas"),
    keccak256WordGas: parameter("keccak256WordGas"),
    copyGas: parameter("copyGas"),
    logTopicGas: parameter("logTopicGas"),
    logDataGas: parameter("logDataGas"),
    expByteGas: parameter("expByteGas"),
  });
  if (common.isActivatedEIP(2929) && common.gteHardfork("berlin") && !common.isActivatedEIP(8038)) {
    installFastStorageWarmth((evm as unknown as { journal: JournalView }).journal);
    gasHandlers.set(0x54, storageLoadGas({ warmRead: parameter("warmstoragereadGas"), coldLoad: parameter("coldsloadGas") }));
    const store = opcodeMap[0x55]!;
    opcodeMap[0x55] = {
      ...store,
      gasHandler: storageStoreGas({
        sentry: parameter("sstoreSentryEIP2200Gas"),
        noop: parameter("sstoreNoopEIP2200Gas"),
        init: parameter("sstoreInitEIP2200Gas"),
        clean: parameter("sstoreCleanEIP2200Gas"),
        dirty: parameter("sstoreDirtyEIP2200Gas"),
        clearRefund: parameter("sstoreClearRefundEIP2200Gas"),
        initRefund: parameter("sstoreInitRefundEIP2200Gas"),
        cleanRefund: parameter("sstoreCleanRefundEIP2200Gas"),
        reset: parameter("sstoreResetGas"),
        warmRead: parameter("warmstoragereadGas"),
        coldLoad: parameter("coldsloadGas"),
      }),
    };
  }
  fastLoopSettings.set(evm, { gasHandlers, gasNeutral: gasNeutralTable(opcodeMap, gasHandlers) });
  // One interpreter class per loaded package, and this module patches the one it imports: once
  // its loop is in, later engines need not run anything to find it.
  if (interpreterClass === undefined) await reachInterpreterPrototype(evm, opcodeMap);
  if (interpreterClass !== undefined) installMessageFrames(evm, interpreterClass);
}

/** The interpreter class of the package this module imports, once its prototype has the fast loop. */
let interpreterClass: InterpreterClass | undefined;

/**
 * The interpreter class is internal to the package: its prototype is reached through a running
 * interpreter, by running one STOP with the STOP handler briefly wrapped.
 */
async function reachInterpreterPrototype(evm: EVM, opcodeMap: OpcodeEntry[]): Promise<void> {
  const stop = opcodeMap[0x00]!;
  let prototype: InterpreterPrototype | undefined;
  opcodeMap[0x00] = {
    ...stop,
    opHandler(runState, common) {
      prototype = Object.getPrototypeOf(runState.interpreter) as InterpreterPrototype;
      return stop.opHandler(runState, common);
    },
  };
  try {
    await evm.runCode({ code: Uint8Array.of(0x00), gasLimit: 0n });
  } finally {
    opcodeMap[0x00] = stop;
  }
  if (prototype === undefined) return;
  installFastLoop(prototype);
  interpreterClass = (prototype as unknown as { constructor: InterpreterClass }).constructor;
}
