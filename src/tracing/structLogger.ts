// The default tracer: one struct log per executed opcode (op, pc, depth, gas left, gas charged, and
// optionally stack, memory and the executing contract's storage as the trace knows it), plus the
// storage of the transaction's contract before and after. Work a disabled member would need is
// skipped: no hex stack without the stack, no memory chunks without memory.
import type { InterpreterStep } from "@ethereumjs/evm";
import { Address, bigIntToBytes, generateAddress } from "@ethereumjs/util";
import type { ChainTransaction } from "../chain/transactions.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { ExecutionEngine } from "../execution/engine.js";
import { callTracerError } from "./errors.js";
import type { ReplayContext, ReplayedTransaction, TransactionTracer } from "./replay.js";

export interface StructLogOptions {
  disableStack: boolean;
  disableMemory: boolean;
  disableStorage: boolean;
}

/** Slot -> value, both 32-byte words as 64 hex digits without 0x. */
export type StorageMap = Record<string, string>;

export interface StructLog {
  op: string;
  pc: number;
  depth: number;
  gas: number;
  gasCost: number;
  stack?: string[];
  memory?: string[];
  storage?: StorageMap;
}

export interface StructLogTrace {
  contractAddress: string;
  initStorage: StorageMap;
  currentStorage: StorageMap;
  storageSize: number;
  structLogs?: StructLog[];
  result: string;
  error: string;
  reverted: boolean;
}

/**
 * A StructLogTrace already written as JSON text: tens of thousands of steps are cheaper to write
 * as text while they happen than as objects serialised afterwards. The text is in parts, joined
 * once, into the response: a trace of megabytes is not copied whole on its way there.
 */
export class StructLogTraceJson {
  constructor(readonly parts: readonly string[]) {}
}

const sloadOpcode = 0x54;
const sstoreOpcode = 0x55;
const wordDigits = 64;
const zeroWord = "0".repeat(wordDigits);

function wordHex(value: bigint): string {
  return value.toString(16).padStart(wordDigits, "0");
}

/** Hex of a storage value as the state keeps it (leading zero bytes trimmed, empty for zero). */
function storedValueHex(value: Uint8Array): string {
  return bytesToUnprefixedHex(value).padStart(wordDigits, "0");
}

/** What the trace knows of one account's storage; its JSON text is rebuilt only after a change. */
class KnownStorage {
  readonly slots = new Map<string, string>();
  private json: string | undefined = "{}";

  set(slot: string, value: string): void {
    if (this.slots.get(slot) === value) return;
    this.slots.set(slot, value);
    this.json = undefined;
  }

  /** The map as JSON text, shared by every step until the next change. */
  toJson(): string {
    this.json ??= JSON.stringify(Object.fromEntries(this.slots));
    return this.json;
  }
}

/** A storage access seen at its step, completed at the next step (SLOAD's value is then on the stack). */
interface PendingAccess {
  kind: "load" | "store";
  account: string;
  slot: string;
  /** SSTORE: the value written. */
  value: string;
  /** Call depth of the access: an SLOAD's result is on the stack only if the frame continues. */
  depth: number;
}

interface OriginalStorageMap {
  map: Map<string, Map<string, Uint8Array>>;
}

/**
 * Most struct-log text one request may build by default (a block's traces share it): memory stays
 * bounded. The RPC layer passes its response limit instead: a longer trace could not be sent.
 */
export const maxStructLogBytes = 64 * 1024 * 1024;

/** The text still allowed for one request's struct logs. */
export interface StructLogBudget {
  readonly limitBytes: number;
  bytesLeft: number;
}

export function createStructLogBudget(limitBytes = maxStructLogBytes): StructLogBudget {
  return { limitBytes, bytesLeft: limitBytes };
}

/** A struct-log trace would pass its budget: the caller should disable memory or stack. */
export class StructLogTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the struct-log trace passes ${limitBytes} bytes; trace with disableMemory or disableStack`);
  }
}

/**
 * Steps joined into one text at a time. A step's text is a tree of a dozen small strings; left
 * as they are until the trace ends, the steps of a long trace live through several collections of
 * the young generation and are copied into the old one (25,000 steps without stack or memory:
 * megabytes of garbage per trace there). Joined by the hundred, they die young, and only the
 * flat texts of the chunks move on.
 */
const stepsPerChunk = 128;

export class StructLogger implements TransactionTracer<StructLogTraceJson> {
  /** The latest steps' StructLogs as JSON text, until there are `stepsPerChunk` of them. */
  private readonly steps: string[] = [];
  /** The earlier steps, `stepsPerChunk` to a text, comma-separated. */
  private readonly stepChunks: string[] = [];
  private readonly storages = new Map<string, KnownStorage>();
  /** Values before the transaction of the slots it touched, by account. */
  private readonly originals = new Map<string, Map<string, string>>();
  private pending: PendingAccess | undefined;
  private engine: ExecutionEngine | undefined;
  private contract = "";
  private initialSlotCount = 0;
  private previousMemory: { bytes: Uint8Array; json: string } = { bytes: new Uint8Array(0), json: "[]" };
  /** The account of the last step and its hex: steps of one frame share the Address object. */
  private lastAccount: { address: Address | undefined; hex: string } = { address: undefined, hex: "" };

  /** Set when the budget ran out: steps are no longer recorded, and finish() refuses. */
  private overflowed = false;

  constructor(
    private readonly options: StructLogOptions,
    private readonly budget: StructLogBudget = createStructLogBudget(),
  ) {}

  async start(engine: ExecutionEngine, transaction: ChainTransaction, context: ReplayContext): Promise<void> {
    this.engine = engine;
    const { tx } = transaction;
    const contract = tx.to?.bytes ?? generateAddress(transaction.sender, bigIntToBytes(tx.nonce));
    this.contract = bytesToUnprefixedHex(contract);
    // The state trie hashes slot keys: the slots cannot be listed, but they can be counted (in the
    // parent block's state: earlier transactions of the block are not counted).
    if (tx.to !== undefined) this.initialSlotCount = await context.countStorageSlots(contract);
    engine.vm.evm.events!.on("step", this.onStep);
  }

  async finish(replayed: ReplayedTransaction | undefined): Promise<StructLogTraceJson> {
    const engine = this.engine;
    engine?.vm.evm.events!.off("step", this.onStep);
    this.completePending(undefined);
    this.engine = undefined;
    if (this.overflowed) throw new StructLogTooLargeError(this.budget.limitBytes);
    const execResult = replayed?.result.execResult;
    const error = execResult?.exceptionError?.error;
    const known = this.storages.get(this.contract)?.slots ?? new Map<string, string>();
    // The steps saw every write, also those a revert or a failed step undid: the summary reads the
    // slots back from the state after the transaction.
    if (replayed !== undefined && engine !== undefined) await this.settleFromState(engine, known);
    const originals = this.originals.get(this.contract) ?? new Map<string, string>();
    const initStorage: StorageMap = {};
    let storageSize = this.initialSlotCount;
    for (const [slot, original] of originals) {
      if (original !== zeroWord) initStorage[slot] = original;
      const current = known.get(slot) ?? original;
      if (original === zeroWord && current !== zeroWord) storageSize++;
      else if (original !== zeroWord && current === zeroWord) storageSize--;
    }
    const summary: Omit<StructLogTrace, "structLogs" | "result" | "error" | "reverted"> = { contractAddress: this.contract, initStorage, currentStorage: Object.fromEntries(known), storageSize };
    const outcome: Pick<StructLogTrace, "result" | "error" | "reverted"> = {
      result: execResult === undefined ? "" : bytesToUnprefixedHex(execResult.returnValue),
      error: error === undefined ? "" : callTracerError(error),
      reverted: error === "revert",
    };
    // A plain value transfer runs no code: the summary has no struct logs.
    this.joinSteps();
    const parts = [`${JSON.stringify(summary).slice(0, -1)},`];
    if (this.stepChunks.length > 0) {
      parts.push('"structLogs":[');
      this.stepChunks.forEach((chunk, index) => parts.push(index === 0 ? chunk : `,${chunk}`));
      parts.push("],");
    }
    parts.push(JSON.stringify(outcome).slice(1));
    return new StructLogTraceJson(parts);
  }

  private readonly onStep = (step: InterpreterStep): void => {
    if (this.overflowed) return;
    if (this.pending !== undefined) this.completePending(step);
    let text = `{"op":"${step.opcode.name}","pc":${step.pc},"depth":${step.depth + 1},"gas":${step.gasLeft},"gasCost":${step.opcode.dynamicFee}`;
    // The engine copies the stack (and the memory) only when they are read: read them only when needed.
    if (!this.options.disableStack) {
      const { stack } = step;
      text += ',"stack":[';
      for (let index = 0; index < stack.length; index++) text += index === 0 ? `"${wordHex(stack[index]!)}"` : `,"${wordHex(stack[index]!)}"`;
      text += "]";
    }
    if (!this.options.disableMemory) text += `,"memory":${this.memoryJson(step.memory)}`;
    const code = step.opcode.code;
    if (code === sloadOpcode || code === sstoreOpcode || !this.options.disableStorage) {
      const account = this.accountHex(step.address);
      if (!this.options.disableStorage) text += `,"storage":${this.storageOf(account).toJson()}`;
      const stack = code === sloadOpcode || code === sstoreOpcode ? step.stack : [];
      if (code === sloadOpcode && stack.length >= 1) {
        this.pending = { kind: "load", account, slot: wordHex(stack[stack.length - 1]!), value: "", depth: step.depth };
      } else if (code === sstoreOpcode && stack.length >= 2) {
        const slot = wordHex(stack[stack.length - 1]!);
        this.pending = { kind: "store", account, slot, value: wordHex(stack[stack.length - 2]!), depth: step.depth };
        this.rememberOriginalBeforeStore(account, slot);
      }
    }
    // Counted in UTF-16 units: the text is ASCII, so that is its size in bytes.
    this.budget.bytesLeft -= text.length + 2;
    if (this.budget.bytesLeft < 0) {
      // A throw here would not stop the engine (it awaits its listeners); stop recording instead.
      this.overflowed = true;
      this.steps.length = 0;
      this.stepChunks.length = 0;
      return;
    }
    this.steps.push(text + "}");
    if (this.steps.length === stepsPerChunk) this.joinSteps();
  };

  /** Joins the latest steps into one chunk of `stepChunks`. */
  private joinSteps(): void {
    if (this.steps.length === 0) return;
    this.stepChunks.push(this.steps.join(","));
    this.steps.length = 0;
  }

  /** Sets each slot of `known` (the contract's) to its value in the engine's state. */
  private async settleFromState(engine: ExecutionEngine, known: Map<string, string>): Promise<void> {
    const contract = new Address(Buffer.from(this.contract, "hex"));
    for (const slot of known.keys()) known.set(slot, storedValueHex(await engine.state.getStorage(contract, Buffer.from(slot, "hex"))));
  }

  private accountHex(address: Address): string {
    if (this.lastAccount.address !== address) this.lastAccount = { address, hex: bytesToUnprefixedHex(address.bytes) };
    return this.lastAccount.hex;
  }

  /** Applies the access of the previous step, now that it ran (`next` undefined: the transaction ended). */
  private completePending(next: InterpreterStep | undefined): void {
    const access = this.pending;
    if (access === undefined) return;
    this.pending = undefined;
    if (access.kind === "store") {
      this.storageOf(access.account).set(access.slot, access.value);
      return;
    }
    if (next === undefined || next.depth !== access.depth || next.stack.length === 0) return;
    const value = wordHex(next.stack[next.stack.length - 1]!);
    this.storageOf(access.account).set(access.slot, value);
    const originals = this.originalsOf(access.account);
    // Loaded before any write of this transaction: that is the value the slot had before it.
    if (!originals.has(access.slot)) originals.set(access.slot, value);
  }

  /** SSTORE's gas rule has just read the slot's value before the transaction into the engine's cache. */
  private rememberOriginalBeforeStore(account: string, slot: string): void {
    const originals = this.originalsOf(account);
    if (originals.has(slot)) return;
    const cache = (this.engine?.state.originalStorageCache as unknown as OriginalStorageMap | undefined)?.map;
    const original = cache?.get(account)?.get(slot);
    if (original !== undefined) originals.set(slot, storedValueHex(original));
  }

  private storageOf(account: string): KnownStorage {
    let storage = this.storages.get(account);
    if (storage === undefined) {
      storage = new KnownStorage();
      this.storages.set(account, storage);
    }
    return storage;
  }

  private originalsOf(account: string): Map<string, string> {
    let originals = this.originals.get(account);
    if (originals === undefined) {
      originals = new Map();
      this.originals.set(account, originals);
    }
    return originals;
  }

  /** Memory in 32-byte chunks as JSON text; unchanged memory reuses the previous step's text. */
  private memoryJson(memory: Uint8Array): string {
    const previous = this.previousMemory;
    if (memory.length === previous.bytes.length && Buffer.compare(memory, previous.bytes) === 0) return previous.json;
    const hex = bytesToUnprefixedHex(memory);
    const chunks = new Array<string>(hex.length / wordDigits);
    for (let index = 0; index < chunks.length; index++) chunks[index] = `"${hex.slice(index * wordDigits, (index + 1) * wordDigits)}"`;
    const json = `[${chunks.join(",")}]`;
    this.previousMemory = { bytes: memory, json };
    return json;
  }
}
