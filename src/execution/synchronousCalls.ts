// Synchronous calls: a small EVM interpreter that runs a plain eth_call to completion without a
// promise, reading the stored state without waiting (state/overlayStateManager.ts, StoredStateReads).
//
// Why a second interpreter: @ethereumjs/evm runs every step, state read and frame through async
// functions (some forty functions and promises for a token's balanceOf, with the journal and
// checkpoints around them), and a fresh node's V8 compiles some two hundred of them during its first
// calls. The state of a stored block is fixed, and the node reads it synchronously (the trie nodes
// from memory or LevelDB's synchronous get), so a read-only call needs none of that: here a call is
// one loop over bigint words, frames are plain recursion, and the call's own writes (balances of
// value transfers, storage, transient storage, warm accounts and slots) live in a journal of maps
// beside the stored state, undone when a frame fails and dropped at the end.
//
// How it is held to the engine's results: it answers exactly what runMessageCall answers for the
// same call (return data, success or revert, the revert payload, gas used and gas consumed), under
// the node's rules (execution/rules.ts: Shanghai, EIP-1153 transient storage, EIP-5656 MCOPY), with
// EIP-2929 warm and cold accounts and slots, EIP-2200/3529 storage gas and refunds, memory
// expansion, the 63/64 rule and the call stipend computed as @ethereumjs/evm 10.1.3 computes them
// (opcodes/gas.ts, EIP2200.ts, EIP2929.ts, interpreter.ts, evm.ts), so GAS sees the same gas left.
// Whatever it does not do, it does not guess: it gives up (answers undefined) and the call takes
// the existing path unchanged; a call changes nothing, so giving up costs only the time spent.
// It gives up on: a creation, an access list, a call the engine's lean path would not take (see
// leanCallPlan in messageCall.ts), a gas limit beyond 2^40 (gas is counted in doubles), a call or a
// nested call into a precompile, CREATE, CREATE2, SELFDESTRUCT, BLOCKHASH of the 256 blocks it can
// see, code that starts with 0xEF read by EXTCODE*, a halt of the top frame (the engine words its
// reason), nesting deeper than maxDepth, more than the step budget, and a state read that cannot be
// made without waiting. The differential tests (test/unit/execution/synchronousCalls.test.ts) run
// the same calls, the repo's contracts and seeded random bytecode, through both paths.
import type { Common } from "@ethereumjs/common";
import { KECCAK256_NULL } from "@ethereumjs/util";
import { keccak256 } from "../common/crypto.js";
import type { StoredStateReads } from "../state/overlayStateManager.js";
import type { ExecutionBlockContext } from "./engine.js";
import type { MessageCall, MessageCallResult } from "./messageCall.js";

/** How far a synchronous call may go before it gives up. */
export interface SynchronousCallBudget {
  /** Opcodes executed, over all frames. */
  steps: number;
  /** Wall time (performance.now() units), checked every few hundred steps. */
  deadline: number;
}

/** Given up: the call goes the existing way. */
class NotHandled {}
const notHandled = new NotHandled();

/** Nesting beyond this gives up (frames are JavaScript recursion). */
const maxDepth = 64;
/** Gas limits beyond this give up: gas is counted in doubles, exact below 2^53 (memory costs included, see memoryCost). */
const maxGas = 2 ** 40;
/** Memory ends beyond this cost more than maxGas: an out-of-gas halt, with no allocation. */
const maxMemoryEnd = 2 ** 31;
const maxMemoryEndWord = BigInt(maxMemoryEnd);

const wordMask = (1n << 256n) - 1n;
const addressMask = (1n << 160n) - 1n;
const emptyBytes: Uint8Array = new Uint8Array(0);

// Gas, as @ethereumjs/common's parameters for the node's rules (a test compares them).
const g = {
  warmRead: 100,
  coldSload: 2100,
  coldAccount: 2600,
  sstoreSentry: 2300,
  sstoreSet: 20000,
  sstoreClean: 2900,
  sstoreClearRefund: 4800,
  sstoreInitRefund: 19900,
  sstoreCleanRefund: 4900,
  /** The clean refund for a warm slot (adjustSstoreGasEIP2929: sstoreResetGas 5000 less a cold and a warm read). */
  sstoreCleanRefundWarm: 2800,
  callValue: 9000,
  callNewAccount: 25000,
  callStipend: 2300,
  memory: 3,
  quadDivisor: 512,
  copy: 3,
  keccakWord: 6,
  logTopic: 375,
  logData: 8,
  expByte: 50,
  txBase: 21000,
  txZeroByte: 4,
  txNonZeroByte: 16,
  refundQuotient: 5,
  stackLimit: 1024,
} as const;

/**
 * Static gas of each opcode under the node's rules, -1 for an invalid one (the engine's opcode
 * table; a test compares them). CREATE, CREATE2 and SELFDESTRUCT are valid but not run here.
 */
export const staticGas: Int32Array = (() => {
  const table = new Int32Array(256).fill(-1);
  const set = (from: number, to: number, gas: number) => {
    for (let op = from; op <= to; op++) table[op] = gas;
  };
  set(0x00, 0x00, 0);
  set(0x01, 0x01, 3);
  set(0x02, 0x02, 5);
  set(0x03, 0x03, 3);
  set(0x04, 0x07, 5);
  set(0x08, 0x09, 8);
  set(0x0a, 0x0a, 10);
  set(0x0b, 0x0b, 5);
  set(0x10, 0x1d, 3);
  set(0x20, 0x20, 30);
  set(0x30, 0x30, 2);
  set(0x31, 0x31, 0);
  set(0x32, 0x34, 2);
  set(0x35, 0x35, 3);
  set(0x36, 0x36, 2);
  set(0x37, 0x37, 3);
  set(0x38, 0x38, 2);
  set(0x39, 0x39, 3);
  set(0x3a, 0x3a, 2);
  set(0x3b, 0x3c, 0);
  set(0x3d, 0x3d, 2);
  set(0x3e, 0x3e, 3);
  set(0x3f, 0x3f, 0);
  set(0x40, 0x40, 20);
  set(0x41, 0x46, 2);
  set(0x47, 0x47, 5);
  set(0x48, 0x48, 2);
  set(0x50, 0x50, 2);
  set(0x51, 0x53, 3);
  set(0x54, 0x55, 0);
  set(0x56, 0x56, 8);
  set(0x57, 0x57, 10);
  set(0x58, 0x5a, 2);
  set(0x5b, 0x5b, 1);
  set(0x5c, 0x5d, 100);
  set(0x5e, 0x5e, 3);
  set(0x5f, 0x5f, 2);
  set(0x60, 0x9f, 3);
  set(0xa0, 0xa4, 375);
  set(0xf0, 0xf0, 32000);
  set(0xf1, 0xf4, 0);
  set(0xf5, 0xf5, 32000);
  set(0xfa, 0xfa, 0);
  set(0xfd, 0xfd, 0);
  set(0xff, 0xff, 5000);
  return table;
})();

/** Words each opcode takes from the stack and puts back (for the stack checks before it runs). */
const stackIn = new Uint8Array(256);
const stackOut = new Uint8Array(256);
(() => {
  const io = (ops: number[], taken: number, put: number) => {
    for (const op of ops) {
      stackIn[op] = taken;
      stackOut[op] = put;
    }
  };
  io([0x00, 0x5b], 0, 0);
  io([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x18, 0x1a, 0x1b, 0x1c, 0x1d, 0x20], 2, 1);
  io([0x08, 0x09], 3, 1);
  io([0x15, 0x19, 0x31, 0x35, 0x3b, 0x3f, 0x40, 0x51, 0x54, 0x5c], 1, 1);
  io([0x30, 0x32, 0x33, 0x34, 0x36, 0x38, 0x3a, 0x3d, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x58, 0x59, 0x5a, 0x5f], 0, 1);
  io([0x37, 0x39, 0x3e, 0x5e], 3, 0);
  io([0x3c], 4, 0);
  io([0x50, 0x56], 1, 0);
  io([0x52, 0x53, 0x55, 0x57, 0x5d, 0xf3, 0xfd], 2, 0);
  for (let op = 0x60; op <= 0x7f; op++) io([op], 0, 1);
  for (let op = 0x80; op <= 0x8f; op++) io([op], op - 0x7f, op - 0x7f + 1);
  for (let op = 0x90; op <= 0x9f; op++) io([op], op - 0x8f + 1, op - 0x8f + 1);
  for (let op = 0xa0; op <= 0xa4; op++) io([op], 2 + op - 0xa0, 0);
  io([0xf1, 0xf2], 7, 1);
  io([0xf4, 0xfa], 6, 1);
})();

/** Bytes as words go through: a word right-aligned in 32 bytes, read and written as four 64-bit parts. */
const scratch = new Uint8Array(32);
const scratchView = new DataView(scratch.buffer);

/** Big-endian bytes (at most 32) as an integer. */
function bytesToBigInt(bytes: Uint8Array): bigint {
  const length = bytes.length;
  if (length === 0) return 0n;
  if (length > 32) return BigInt("0x" + Buffer.from(bytes.buffer, bytes.byteOffset, length).toString("hex"));
  scratch.fill(0, 0, 32 - length);
  scratch.set(bytes, 32 - length);
  const view = scratchView;
  let value = view.getBigUint64(24);
  if (length > 8) value |= view.getBigUint64(16) << 64n;
  if (length > 16) value |= view.getBigUint64(8) << 128n;
  if (length > 24) value |= view.getBigUint64(0) << 192n;
  return value;
}

/** Writes `value` (a word) as 32 big-endian bytes into `memory` at `offset`. */
function writeWord(memory: Uint8Array, offset: number, value: bigint): void {
  const view = scratchView;
  if (value < 0x10000000000000000n) {
    scratch.fill(0, 0, 24);
    view.setBigUint64(24, value);
  } else {
    view.setBigUint64(0, value >> 192n);
    view.setBigUint64(8, BigInt.asUintN(64, value >> 128n));
    view.setBigUint64(16, BigInt.asUintN(64, value >> 64n));
    view.setBigUint64(24, BigInt.asUintN(64, value));
  }
  memory.set(scratch, offset);
}

function hexOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("hex");
}

const emptyCodeHash = bytesToBigInt(KECCAK256_NULL);

function addressHexOf(value: bigint): string {
  return (value & addressMask).toString(16).padStart(40, "0");
}

function isPrecompile(addressHex: string): boolean {
  // 0x01 to 0x09 under the node's rules (a test compares them with the engine's).
  return addressHex.startsWith("00000000000000000000000000000000000000") && addressHex > "0000000000000000000000000000000000000000" && addressHex <= "0000000000000000000000000000000000000009";
}


/** Valid jump destinations of a code (1 at a JUMPDEST outside push data), computed once per code array. */
const jumpTables = new WeakMap<Uint8Array, Uint8Array>();

function jumpTableOf(code: Uint8Array): Uint8Array {
  let table = jumpTables.get(code);
  if (table === undefined) {
    table = new Uint8Array(code.length);
    for (let pc = 0; pc < code.length; pc++) {
      const op = code[pc]!;
      if (op === 0x5b) table[pc] = 1;
      else if (op >= 0x60 && op <= 0x7f) pc += op - 0x5f;
    }
    jumpTables.set(code, table);
  }
  return table;
}

/** The value each PUSH of a code pushes, by the position of its opcode, computed once per code array. */
const pushTables = new WeakMap<Uint8Array, bigint[]>();

function pushTableOf(code: Uint8Array): bigint[] {
  let table = pushTables.get(code);
  if (table === undefined) {
    table = [];
    for (let pc = 0; pc < code.length; pc++) {
      const op = code[pc]!;
      if (op < 0x60 || op > 0x7f) continue;
      const size = op - 0x5f;
      const immediate = new Uint8Array(size);
      immediate.set(code.subarray(pc + 1, pc + 1 + size));
      table[pc] = bytesToBigInt(immediate);
      pc += size;
    }
    pushTables.set(code, table);
  }
  return table;
}

/** An exceptional halt of the running frame (all its gas goes). */
class Halt {}
const halt = new Halt();

/** A change to undo when the frame that made it fails. */
type JournalEntry =
  | { kind: 0; map: Map<string, bigint>; key: string; previous: bigint | undefined }
  | { kind: 1; set: Set<string>; key: string };

interface Frame {
  code: Uint8Array;
  jumps: Uint8Array;
  pushes: bigint[];
  /** The account whose storage and balance the code runs on. */
  addressHex: string;
  address: bigint;
  caller: bigint;
  value: bigint;
  data: Uint8Array;
  isStatic: boolean;
  depth: number;
  gasLeft: number;
}

interface FrameResult {
  /** 0 success, 1 revert, 2 exceptional halt. */
  status: 0 | 1 | 2;
  gasLeft: number;
  returnData: Uint8Array;
}

/** One call's run: its state beside the stored state, its journal, its gas refund counter. */
class SynchronousRun {
  private readonly balances = new Map<string, bigint>();
  private readonly storage = new Map<string, bigint>();
  private readonly transient = new Map<string, bigint>();
  private readonly warmAccounts = new Set<string>();
  private readonly warmSlots = new Set<string>();
  private readonly journal: JournalEntry[] = [];
  /** Stored accounts read in this run, by address (hex). */
  private readonly accounts = new Map<string, { balance: bigint; nonce: bigint; codeHash: Uint8Array; storageRoot: Uint8Array } | null>();
  refund = 0;
  private steps = 0;
  private readonly coinbase: bigint;
  private readonly prevRandao: bigint;
  private readonly baseFee: bigint;
  private readonly chainId: bigint;
  senderHex = "";
  private toHex = "";
  private coinbaseHex = "";

  constructor(
    private readonly reads: StoredStateReads,
    private readonly context: ExecutionBlockContext,
    private readonly call: MessageCall,
    common: Common,
    private readonly budget: SynchronousCallBudget,
  ) {
    this.coinbase = bytesToBigInt(context.coinbase);
    this.prevRandao = context.difficulty;
    this.baseFee = call.gasPrice === 0n ? 0n : context.baseFee;
    this.chainId = common.chainId();
  }

  // State.

  storedAccount(addressHex: string): { balance: bigint; nonce: bigint; codeHash: Uint8Array; storageRoot: Uint8Array } | null {
    let account = this.accounts.get(addressHex);
    if (account === undefined) {
      const stored = this.reads.account(addressHex);
      if (stored === undefined) throw notHandled;
      account = stored === null ? null : { balance: stored.balance, nonce: stored.nonce, codeHash: stored.codeHash, storageRoot: stored.storageRoot };
      this.accounts.set(addressHex, account);
    }
    return account;
  }

  balanceOf(addressHex: string): bigint {
    const changed = this.balances.get(addressHex);
    if (changed !== undefined) return changed;
    return this.storedAccount(addressHex)?.balance ?? 0n;
  }

  setBalance(addressHex: string, balance: bigint): void {
    this.journal.push({ kind: 0, map: this.balances, key: addressHex, previous: this.balances.get(addressHex) });
    this.balances.set(addressHex, balance);
  }

  codeOf(addressHex: string): Uint8Array {
    const account = this.storedAccount(addressHex);
    if (account === null) return emptyBytes;
    const code = this.reads.code(account.codeHash);
    if (code === undefined) throw notHandled;
    return code;
  }

  /** Nonce 0, balance 0 and no code (the engine's Account.isEmpty), or no account at all. */
  isEmpty(addressHex: string): boolean {
    const account = this.storedAccount(addressHex);
    const nonce = (account?.nonce ?? 0n) + (addressHex === this.senderHex ? 1n : 0n);
    return nonce === 0n && this.balanceOf(addressHex) === 0n && (account === null || bytesToBigInt(account.codeHash) === emptyCodeHash);
  }

  storedSlot(addressHex: string, slotHex: string): bigint {
    const account = this.storedAccount(addressHex);
    if (account === null) return 0n;
    const value = this.reads.slot(account.storageRoot, slotHex);
    if (value === undefined) throw notHandled;
    return bytesToBigInt(value);
  }

  slotOf(addressHex: string, slotHex: string): bigint {
    const changed = this.storage.get(addressHex + slotHex);
    return changed !== undefined ? changed : this.storedSlot(addressHex, slotHex);
  }

  setSlot(addressHex: string, slotHex: string, value: bigint): void {
    const key = addressHex + slotHex;
    this.journal.push({ kind: 0, map: this.storage, key, previous: this.storage.get(key) });
    this.storage.set(key, value);
  }

  setTransient(key: string, value: bigint): void {
    this.journal.push({ kind: 0, map: this.transient, key, previous: this.transient.get(key) });
    this.transient.set(key, value);
  }

  /** Warms `key` in `set`; answers whether it was cold. */
  warm(set: Set<string>, key: string): boolean {
    if (set.has(key)) return false;
    set.add(key);
    this.journal.push({ kind: 1, set, key });
    return true;
  }

  /** Whether the account is warm: always (the precompiles, the sender, the recipient, the coinbase) or since it was accessed. */
  isWarmAccount(addressHex: string): boolean {
    return addressHex === this.toHex || addressHex === this.senderHex || addressHex === this.coinbaseHex || isPrecompile(addressHex) || this.warmAccounts.has(addressHex);
  }

  /** Warms an account; answers whether it was cold (EIP-2929). */
  warmAccount(addressHex: string): boolean {
    if (this.isWarmAccount(addressHex)) return false;
    this.warmAccounts.add(addressHex);
    this.journal.push({ kind: 1, set: this.warmAccounts, key: addressHex });
    return true;
  }

  revertTo(mark: number): void {
    const journal = this.journal;
    for (let index = journal.length - 1; index >= mark; index--) {
      const entry = journal[index]!;
      if (entry.kind === 0) {
        if (entry.previous === undefined) entry.map.delete(entry.key);
        else entry.map.set(entry.key, entry.previous);
      } else entry.set.delete(entry.key);
    }
    journal.length = mark;
  }

  get journalLength(): number {
    return this.journal.length;
  }

  // The top frame, as runAsLeanCall runs it.

  runTop(): MessageCallResult | undefined {
    const call = this.call;
    if (call.to === undefined || call.accessList !== undefined) return undefined;
    let intrinsicGas = g.txBase;
    for (const byte of call.data) intrinsicGas += byte === 0 ? g.txZeroByte : g.txNonZeroByte;
    if (call.gasLimit > BigInt(maxGas) || call.gasLimit < BigInt(intrinsicGas)) return undefined;
    if (call.gasPrice < this.baseFee) return undefined;
    const senderHex = hexOf(call.from);
    const toHex = hexOf(call.to);
    if (isPrecompile(toHex)) return undefined;
    const sender = this.storedAccount(senderHex);
    if (sender !== null && bytesToBigInt(sender.codeHash) !== emptyCodeHash) return undefined;
    const senderBalance = sender?.balance ?? 0n;
    if (senderBalance < call.gasLimit * call.gasPrice + call.value) return undefined;
    // Always warm (never reverted): the precompiles, the sender, the recipient, the coinbase.
    this.senderHex = senderHex;
    this.toHex = toHex;
    this.coinbaseHex = addressHexOf(this.coinbase);
    this.balances.set(senderHex, senderBalance - call.gasLimit * call.gasPrice);
    const gasLimit = Number(call.gasLimit) - intrinsicGas;
    const result = this.message(bytesToBigInt(call.from), senderHex, toHex, toHex, call.value, call.data, gasLimit, false, false, 0);
    if (result.status === 2) return undefined;
    const executionGasUsed = gasLimit - result.gasLeft;
    const gasConsumed = executionGasUsed + intrinsicGas;
    const refund = result.status === 0 ? this.refund : 0;
    const refundCap = Math.floor(gasConsumed / g.refundQuotient);
    const gasUsed = gasConsumed - (refund < refundCap ? refund : refundCap);
    // The engine's figures, with its fields for measurements a plain call does not ask for.
    return { kind: result.status === 0 ? "success" : "revert", returnData: result.returnData, gasUsed: BigInt(gasUsed), gasConsumed: BigInt(gasConsumed), slack: undefined, framesOutOfGas: undefined };
  }

  /**
   * A message (the engine's runCall and _executeCall): the value moved unless delegated, the code
   * of `codeHex` run on `toHex`, everything it did undone when it fails. The gas left of a halt is 0.
   */
  message(caller: bigint, callerHex: string, toHex: string, codeHex: string, value: bigint, data: Uint8Array, gasLimit: number, isStatic: boolean, delegated: boolean, depth: number): FrameResult {
    if (isPrecompile(codeHex)) throw notHandled;
    if (depth > maxDepth) throw notHandled;
    const mark = this.journalLength;
    const refundBefore = this.refund;
    if (!delegated) {
      // Balances were checked by the caller (the top frame's plan, _baseCall for nested calls).
      this.setBalance(callerHex, this.balanceOf(callerHex) - value);
      this.setBalance(toHex, this.balanceOf(toHex) + value);
    }
    const code = this.codeOf(codeHex);
    if (code.length === 0) return { status: 0, gasLeft: gasLimit, returnData: emptyBytes };
    const frame: Frame = { code, jumps: jumpTableOf(code), pushes: pushTableOf(code), addressHex: toHex, address: BigInt("0x" + toHex), caller, value, data, isStatic, depth, gasLeft: gasLimit };
    const result = this.runFrame(frame);
    if (result.status !== 0) {
      this.revertTo(mark);
      this.refund = refundBefore;
    }
    return result;
  }

  private memoryCost(frame: { memoryWords: number }, offset: bigint, length: bigint): number {
    if (length === 0n) return 0;
    const end = offset + length;
    if (end > maxMemoryEndWord) throw halt;
    const words = Math.ceil(Number(end) / 32);
    const current = frame.memoryWords;
    if (words <= current) return 0;
    frame.memoryWords = words;
    return words * g.memory + Math.floor((words * words) / g.quadDivisor) - (current * g.memory + Math.floor((current * current) / g.quadDivisor));
  }

  private runFrame(frame: Frame): FrameResult {
    const { code, jumps } = frame;
    const codeLength = code.length;
    const stack: bigint[] = [];
    let memory: Uint8Array = emptyBytes;
    const sizing = { memoryWords: 0 };
    let returnData: Uint8Array = emptyBytes;
    let gasLeft = frame.gasLeft;
    let pc = 0;
    const budget = this.budget;
    try {
      while (pc < codeLength) {
        const op = code[pc]!;
        if ((++this.steps & 255) === 0) {
          if (this.steps > budget.steps || performance.now() > budget.deadline) throw notHandled;
        }
        const fee = staticGas[op]!;
        if (fee < 0) throw halt;
        const length = stack.length;
        if (length < stackIn[op]!) throw halt;
        if (length - stackIn[op]! + stackOut[op]! > g.stackLimit) throw halt;
        // Each opcode's static gas first, as the engine takes it before the opcode runs; the
        // cases below take only their dynamic gas.
        if ((gasLeft -= fee) < 0) throw halt;
        pc++;
        switch (op) {
          case 0x00:
            return { status: 0, gasLeft, returnData: emptyBytes };
          case 0x01: {
            const a = stack.pop()!;
            stack.push((a + stack.pop()!) & wordMask);
            break;
          }
          case 0x02: {
            const a = stack.pop()!;
            stack.push((a * stack.pop()!) & wordMask);
            break;
          }
          case 0x03: {
            const a = stack.pop()!;
            stack.push((a - stack.pop()!) & wordMask);
            break;
          }
          case 0x04: {
            const a = stack.pop()!;
            const b = stack.pop()!;
            stack.push(b === 0n ? 0n : a / b);
            break;
          }
          case 0x05: {
            const a = BigInt.asIntN(256, stack.pop()!);
            const b = BigInt.asIntN(256, stack.pop()!);
            stack.push(b === 0n ? 0n : BigInt.asUintN(256, a / b));
            break;
          }
          case 0x06: {
            const a = stack.pop()!;
            const b = stack.pop()!;
            stack.push(b === 0n ? 0n : a % b);
            break;
          }
          case 0x07: {
            const a = BigInt.asIntN(256, stack.pop()!);
            const b = BigInt.asIntN(256, stack.pop()!);
            stack.push(b === 0n ? 0n : BigInt.asUintN(256, a % b));
            break;
          }
          case 0x08: {
            const a = stack.pop()!;
            const b = stack.pop()!;
            const n = stack.pop()!;
            stack.push(n === 0n ? 0n : (a + b) % n);
            break;
          }
          case 0x09: {
            const a = stack.pop()!;
            const b = stack.pop()!;
            const n = stack.pop()!;
            stack.push(n === 0n ? 0n : (a * b) % n);
            break;
          }
          case 0x0a: {
            const base = stack[length - 1]!;
            const exponent = stack[length - 2]!;
            if ((gasLeft -= (exponent === 0n ? 0 : Math.ceil(exponent.toString(2).length / 8) * g.expByte)) < 0) throw halt;
            drop(stack, 2);
            let result = 1n;
            let power = base;
            for (let rest = exponent; rest > 0n; rest >>= 1n) {
              if (rest & 1n) result = (result * power) & wordMask;
              power = (power * power) & wordMask;
            }
            stack.push(result);
            break;
          }
          case 0x0b: {
            const k = stack.pop()!;
            let value = stack.pop()!;
            if (k < 31n) {
              const bit = k * 8n + 7n;
              const mask = (1n << bit) - 1n;
              value = (value >> bit) & 1n ? value | (wordMask ^ mask) : value & mask;
            }
            stack.push(value);
            break;
          }
          case 0x10:
          case 0x11:
          case 0x12:
          case 0x13:
          case 0x14: {
            const a = stack.pop()!;
            const b = stack.pop()!;
            let r: boolean;
            if (op === 0x10) r = a < b;
            else if (op === 0x11) r = a > b;
            else if (op === 0x12) r = BigInt.asIntN(256, a) < BigInt.asIntN(256, b);
            else if (op === 0x13) r = BigInt.asIntN(256, a) > BigInt.asIntN(256, b);
            else r = a === b;
            stack.push(r ? 1n : 0n);
            break;
          }
          case 0x15:
            stack.push(stack.pop()! === 0n ? 1n : 0n);
            break;
          case 0x16: {
            const a = stack.pop()!;
            stack.push(a & stack.pop()!);
            break;
          }
          case 0x17: {
            const a = stack.pop()!;
            stack.push(a | stack.pop()!);
            break;
          }
          case 0x18: {
            const a = stack.pop()!;
            stack.push(a ^ stack.pop()!);
            break;
          }
          case 0x19:
            stack.push(wordMask ^ stack.pop()!);
            break;
          case 0x1a: {
            const index = stack.pop()!;
            const value = stack.pop()!;
            stack.push(index >= 32n ? 0n : (value >> (248n - index * 8n)) & 0xffn);
            break;
          }
          case 0x1b: {
            const shift = stack.pop()!;
            const value = stack.pop()!;
            stack.push(shift >= 256n ? 0n : (value << shift) & wordMask);
            break;
          }
          case 0x1c: {
            const shift = stack.pop()!;
            const value = stack.pop()!;
            stack.push(shift >= 256n ? 0n : value >> shift);
            break;
          }
          case 0x1d: {
            const shift = stack.pop()!;
            const value = BigInt.asIntN(256, stack.pop()!);
            stack.push(BigInt.asUintN(256, shift >= 256n ? (value < 0n ? -1n : 0n) : value >> shift));
            break;
          }
          case 0x20: {
            const offset = stack[length - 1]!;
            const size = stack[length - 2]!;
            if ((gasLeft -= this.memoryCost(sizing, offset, size) + g.keccakWord * Number((size + 31n) / 32n)) < 0) throw halt;
            memory = sizedMemory(memory, sizing.memoryWords);
            drop(stack, 2);
            stack.push(bytesToBigInt(keccak256(copyOfMemory(memory, offset, size))));
            break;
          }
          case 0x30:
            stack.push(frame.address);
            break;
          case 0x31: {
            const addressHex = addressHexOf(stack[length - 1]!);
            if ((gasLeft -= this.warmAccount(addressHex) ? g.coldAccount : g.warmRead) < 0) throw halt;
            stack[length - 1] = this.balanceOf(addressHex);
            break;
          }
          case 0x32:
            stack.push(bytesToBigInt(this.call.from));
            break;
          case 0x33:
            stack.push(frame.caller);
            break;
          case 0x34:
            stack.push(frame.value);
            break;
          case 0x35: {
            const offset = stack.pop()!;
            const data = frame.data;
            if (offset >= BigInt(data.length)) stack.push(0n);
            else {
              const start = Number(offset);
              const loaded = new Uint8Array(32);
              loaded.set(data.subarray(start, start + 32));
              stack.push(bytesToBigInt(loaded));
            }
            break;
          }
          case 0x36:
            stack.push(BigInt(frame.data.length));
            break;
          case 0x37:
          case 0x39:
          case 0x3e: {
            const memoryOffset = stack[length - 1]!;
            const dataOffset = stack[length - 2]!;
            const size = stack[length - 3]!;
            const source = op === 0x37 ? frame.data : op === 0x39 ? code : returnData;
            if (op === 0x3e && dataOffset + size > BigInt(returnData.length)) throw halt;
            if ((gasLeft -= this.memoryCost(sizing, memoryOffset, size) + g.copy * Number((size + 31n) / 32n)) < 0) throw halt;
            memory = sizedMemory(memory, sizing.memoryWords);
            drop(stack, 3);
            if (size !== 0n) copyPadded(memory, Number(memoryOffset), source, dataOffset, Number(size));
            break;
          }
          case 0x38:
            stack.push(BigInt(codeLength));
            break;
          case 0x3a:
            stack.push(this.call.gasPrice);
            break;
          case 0x3b:
          case 0x3f: {
            const addressHex = addressHexOf(stack[length - 1]!);
            if ((gasLeft -= this.warmAccount(addressHex) ? g.coldAccount : g.warmRead) < 0) throw halt;
            const extCode = this.codeOf(addressHex);
            if (extCode[0] === 0xef && extCode[1] === 0x00) throw notHandled;
            if (op === 0x3b) stack[length - 1] = BigInt(extCode.length);
            else stack[length - 1] = this.isEmpty(addressHex) ? 0n : bytesToBigInt(this.storedAccount(addressHex)?.codeHash ?? KECCAK256_NULL);
            break;
          }
          case 0x3c: {
            const addressHex = addressHexOf(stack[length - 1]!);
            const memoryOffset = stack[length - 2]!;
            const codeOffset = stack[length - 3]!;
            const size = stack[length - 4]!;
            const memoryGas = this.memoryCost(sizing, memoryOffset, size);
            const accessGas = this.warmAccount(addressHex) ? g.coldAccount : g.warmRead;
            if ((gasLeft -= memoryGas + accessGas + g.copy * Number((size + 31n) / 32n)) < 0) throw halt;
            memory = sizedMemory(memory, sizing.memoryWords);
            drop(stack, 4);
            if (size !== 0n) {
              const extCode = this.codeOf(addressHex);
              if (extCode[0] === 0xef && extCode[1] === 0x00) throw notHandled;
              copyPadded(memory, Number(memoryOffset), extCode, codeOffset, Number(size));
            }
            break;
          }
          case 0x3d:
            stack.push(BigInt(returnData.length));
            break;
          case 0x40: {
            const number = stack.pop()!;
            const distance = this.context.number - number;
            if (distance > 256n || distance <= 0n) stack.push(0n);
            else throw notHandled;
            break;
          }
          case 0x41:
            stack.push(this.coinbase);
            break;
          case 0x42:
            stack.push(this.context.timestamp);
            break;
          case 0x43:
            stack.push(this.context.number);
            break;
          case 0x44:
            stack.push(this.prevRandao);
            break;
          case 0x45:
            stack.push(this.context.gasLimit);
            break;
          case 0x46:
            stack.push(this.chainId);
            break;
          case 0x47:
            stack.push(this.balanceOf(frame.addressHex));
            break;
          case 0x48:
            stack.push(this.baseFee);
            break;
          case 0x50:
            stack.pop();
            break;
          case 0x51: {
            const offset = stack[length - 1]!;
            if ((gasLeft -= this.memoryCost(sizing, offset, 32n)) < 0) throw halt;
            memory = sizedMemory(memory, sizing.memoryWords);
            const start = Number(offset);
            stack[length - 1] = bytesToBigInt(memory.subarray(start, start + 32));
            break;
          }
          case 0x52: {
            const offset = stack[length - 1]!;
            if ((gasLeft -= this.memoryCost(sizing, offset, 32n)) < 0) throw halt;
            memory = sizedMemory(memory, sizing.memoryWords);
            writeWord(memory, Number(offset), stack[length - 2]!);
            drop(stack, 2);
            break;
          }
          case 0x53: {
            const offset = stack[length - 1]!;
            if ((gasLeft -= this.memoryCost(sizing, offset, 1n)) < 0) throw halt;
            memory = sizedMemory(memory, sizing.memoryWords);
            memory[Number(offset)] = Number(stack[length - 2]! & 0xffn);
            drop(stack, 2);
            break;
          }
          case 0x54: {
            const slotHex = stack[length - 1]!.toString(16).padStart(64, "0");
            if ((gasLeft -= this.warm(this.warmSlots, frame.addressHex + slotHex) ? g.coldSload : g.warmRead) < 0) throw halt;
            stack[length - 1] = this.slotOf(frame.addressHex, slotHex);
            break;
          }
          case 0x55: {
            if (frame.isStatic) throw halt;
            const slotHex = stack[length - 1]!.toString(16).padStart(64, "0");
            const value = stack[length - 2]!;
            const current = this.slotOf(frame.addressHex, slotHex);
            const original = this.storedSlot(frame.addressHex, slotHex);
            if (gasLeft <= g.sstoreSentry) throw halt;
            const slotKey = frame.addressHex + slotHex;
            const warm = this.warmSlots.has(slotKey);
            let gas: number;
            if (current === value) gas = g.warmRead;
            else if (original === current) {
              if (original === 0n) gas = g.sstoreSet;
              else {
                if (value === 0n) this.refund += g.sstoreClearRefund;
                gas = g.sstoreClean;
              }
            } else {
              if (original !== 0n) {
                if (current === 0n) {
                  this.refund -= g.sstoreClearRefund;
                  if (this.refund < 0) throw halt;
                } else if (value === 0n) this.refund += g.sstoreClearRefund;
              }
              if (original === value) {
                if (original === 0n) this.refund += g.sstoreInitRefund;
                else this.refund += warm ? g.sstoreCleanRefundWarm : g.sstoreCleanRefund;
              }
              gas = g.warmRead;
            }
            if (this.warm(this.warmSlots, slotKey)) gas += g.coldSload;
            if ((gasLeft -= gas) < 0) throw halt;
            this.setSlot(frame.addressHex, slotHex, value);
            drop(stack, 2);
            break;
          }
          case 0x56: {
            const destination = stack.pop()!;
            if (destination >= BigInt(codeLength) || jumps[Number(destination)] !== 1) throw halt;
            pc = Number(destination);
            break;
          }
          case 0x57: {
            const destination = stack.pop()!;
            if (stack.pop()! !== 0n) {
              if (destination >= BigInt(codeLength) || jumps[Number(destination)] !== 1) throw halt;
              pc = Number(destination);
            }
            break;
          }
          case 0x58:
            stack.push(BigInt(pc - 1));
            break;
          case 0x59:
            stack.push(BigInt(sizing.memoryWords * 32));
            break;
          case 0x5a:
            stack.push(BigInt(gasLeft));
            break;
          case 0x5b:
            break;
          case 0x5c: {
            const key = frame.addressHex + stack[length - 1]!.toString(16);
            stack[length - 1] = this.transient.get(key) ?? 0n;
            break;
          }
          case 0x5d: {
            if (frame.isStatic) throw halt;
            this.setTransient(frame.addressHex + stack[length - 1]!.toString(16), stack[length - 2]!);
            drop(stack, 2);
            break;
          }
          case 0x5e: {
            const destination = stack[length - 1]!;
            const source = stack[length - 2]!;
            const size = stack[length - 3]!;
            const sourceGas = this.memoryCost(sizing, source, size);
            if ((gasLeft -= g.copy * Number((size + 31n) / 32n) + sourceGas + this.memoryCost(sizing, destination, size)) < 0) throw halt;
            memory = sizedMemory(memory, sizing.memoryWords);
            drop(stack, 3);
            if (size !== 0n) memory.copyWithin(Number(destination), Number(source), Number(source) + Number(size));
            break;
          }
          case 0x5f:
            stack.push(0n);
            break;
          case 0xf3:
          case 0xfd: {
            const offset = stack[length - 1]!;
            const size = stack[length - 2]!;
            if ((gasLeft -= this.memoryCost(sizing, offset, size)) < 0) throw halt;
            memory = sizedMemory(memory, sizing.memoryWords);
            return { status: op === 0xf3 ? 0 : 1, gasLeft, returnData: copyOfMemory(memory, offset, size) };
          }
          case 0xf1:
          case 0xf2:
          case 0xf4:
          case 0xfa: {
            const hasValue = op === 0xf1 || op === 0xf2;
            const requested = stack[length - 1]!;
            const targetHex = addressHexOf(stack[length - 2]!);
            const value = hasValue ? stack[length - 3]! : 0n;
            const at = hasValue ? length - 4 : length - 3;
            const inOffset = stack[at]!;
            const inSize = stack[at - 1]!;
            const outOffset = stack[at - 2]!;
            const outSize = stack[at - 3]!;
            if (op === 0xf1 && frame.isStatic && value !== 0n) throw halt;
            let gas = this.memoryCost(sizing, inOffset, inSize);
            gas += this.memoryCost(sizing, outOffset, outSize);
            gas += this.isWarmAccount(targetHex) ? g.warmRead : g.coldAccount;
            if (hasValue && value !== 0n) gas += g.callValue;
            this.warmAccount(targetHex);
            if (op === 0xf1 && value !== 0n && this.isEmpty(targetHex)) gas += g.callNewAccount;
            const available = gasLeft - gas;
            const allowed = available - Math.trunc(available / 64);
            let gasLimit = requested > BigInt(allowed) ? allowed : Number(requested);
            if (gasLimit > available || gas > gasLeft) throw halt;
            if ((gasLeft -= gas) < 0) throw halt;
            memory = sizedMemory(memory, sizing.memoryWords);
            const data = copyOfMemory(memory, inOffset, inSize);
            stack.length = at - 3;
            if (hasValue && value !== 0n) {
              gasLeft += g.callStipend;
              gasLimit += g.callStipend;
            }
            returnData = emptyBytes;
            let success = false;
            if (frame.depth < g.stackLimit && (op === 0xf4 || this.balanceOf(frame.addressHex) >= value)) {
              const depth = frame.depth + 1;
              let result: FrameResult;
              if (op === 0xf1) result = this.message(frame.address, frame.addressHex, targetHex, targetHex, value, data, gasLimit, frame.isStatic, false, depth);
              else if (op === 0xf2) result = this.message(frame.address, frame.addressHex, frame.addressHex, targetHex, value, data, gasLimit, frame.isStatic, false, depth);
              else if (op === 0xf4) result = this.message(frame.caller, "", frame.addressHex, targetHex, frame.value, data, gasLimit, frame.isStatic, true, depth);
              else result = this.message(frame.address, frame.addressHex, targetHex, targetHex, 0n, data, gasLimit, true, false, depth);
              gasLeft -= result.status === 2 ? gasLimit : gasLimit - result.gasLeft;
              if (result.status !== 2) returnData = result.returnData;
              success = result.status === 0;
            }
            if (returnData.length > 0 && outSize !== 0n) {
              const copied = BigInt(returnData.length) < outSize ? returnData.length : Number(outSize);
              memory.set(returnData.subarray(0, copied), Number(outOffset));
            }
            stack.push(success ? 1n : 0n);
            break;
          }
          default: {
            if (op >= 0x60 && op <= 0x7f) {
              stack.push(frame.pushes[pc - 1]!);
              pc += op - 0x5f;
            } else if (op >= 0x80 && op <= 0x8f) {
              stack.push(stack[length - (op - 0x7f)]!);
            } else if (op >= 0x90 && op <= 0x9f) {
              const other = length - 1 - (op - 0x8f);
              const top = stack[length - 1]!;
              stack[length - 1] = stack[other]!;
              stack[other] = top;
            } else if (op >= 0xa0 && op <= 0xa4) {
              if (frame.isStatic) throw halt;
              const offset = stack[length - 1]!;
              const size = stack[length - 2]!;
              const topics = op - 0xa0;
              const memoryGas = this.memoryCost(sizing, offset, size);
              if (size > BigInt(maxGas)) throw halt;
              if ((gasLeft -= memoryGas + g.logTopic * topics + Number(size) * g.logData) < 0) throw halt;
              memory = sizedMemory(memory, sizing.memoryWords);
              // The log itself is thrown away with the call.
              drop(stack, 2 + topics);
            } else {
              // CREATE, CREATE2, SELFDESTRUCT.
              throw notHandled;
            }
          }
        }
      }
      return { status: 0, gasLeft, returnData: emptyBytes };
    } catch (error) {
      if (error === halt) return { status: 2, gasLeft: 0, returnData: emptyBytes };
      throw error;
    }
  }
}

/**
 * A frame's memory holding at least `words` words (their gas taken by memoryCost): itself when it
 * does, else grown (at least doubled, at least 1 KiB), its bytes kept.
 */
function sizedMemory(memory: Uint8Array, words: number): Uint8Array {
  const size = words * 32;
  if (memory.length >= size) return memory;
  const grown = new Uint8Array(Math.max(size, memory.length * 2, 1024));
  grown.set(memory);
  return grown;
}

/** A copy of `length` bytes of memory at `offset` (checked and grown by the caller). */
function copyOfMemory(memory: Uint8Array, offset: bigint, length: bigint): Uint8Array {
  return length === 0n ? emptyBytes : memory.slice(Number(offset), Number(offset) + Number(length));
}

/** Takes `count` words off the stack (pops: V8 runs a write of an array's length in its runtime). */
function drop(stack: bigint[], count: number): void {
  for (let index = 0; index < count; index++) stack.pop();
}

/** Copies `size` bytes of `source` from `offset` (zeros past its end) into `memory` at `at`. */
function copyPadded(memory: Uint8Array, at: number, source: Uint8Array, offset: bigint, size: number): void {
  const start = offset >= BigInt(source.length) ? source.length : Number(offset);
  const available = Math.min(size, source.length - start);
  if (available > 0) memory.set(source.subarray(start, start + available), at);
  memory.fill(0, at + Math.max(available, 0), at + size);
}

/**
 * Runs `call` to `code` held by an account of its own, on an empty state otherwise: for warming
 * the interpreter up (V8 compiles its loop after some thousand steps; a fresh node's first calls
 * otherwise run it unoptimised). `call.to` holds the code.
 */
export function runOnCode(code: Uint8Array, context: ExecutionBlockContext, call: MessageCall, common: Common): MessageCallResult | undefined {
  const codeHash = keccak256(code);
  const toHex = hexOf(call.to ?? emptyBytes);
  const reads: StoredStateReads = {
    root: KECCAK256_NULL,
    account: (addressHex) => (addressHex === toHex ? { nonce: 1n, balance: 0n, codeHash, storageRoot: KECCAK256_NULL } : null) as never,
    slot: () => emptyBytes,
    code: () => code,
  };
  return runSynchronousCall(reads, context, call, common, { steps: 100_000, deadline: Number.POSITIVE_INFINITY });
}

/**
 * Runs `call` on the stored state `reads` in the block `context` (a free call's base fee is zero,
 * as the existing path runs it), synchronously. Undefined when it gives up (see the file header):
 * the call then takes the existing path.
 */
export function runSynchronousCall(reads: StoredStateReads, context: ExecutionBlockContext, call: MessageCall, common: Common, budget: SynchronousCallBudget): MessageCallResult | undefined {
  try {
    return new SynchronousRun(reads, context, call, common, budget).runTop();
  } catch (error) {
    if (error === notHandled) return undefined;
    // A state read that failed (a missing trie node): the existing path says what it says.
    if (error instanceof Error) return undefined;
    throw error;
  }
}
