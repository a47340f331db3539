// The default tracer, in geth's struct-log format: one step per executed opcode (pc, op, gas left,
// gas charged, depth; the stack as compact 0x numbers unless disabled; the memory in 32-byte words
// when asked for; the storage the executing contract's frame has seen, at SLOAD and SSTORE steps
// only; the refund counter when not zero; the last call's return data when asked for), at most
// `limit` steps, and around the steps geth's summary (gas, failed, returnValue) and the reference
// node's (contractAddress, initStorage, currentStorage, storageSize, result, error, reverted).
// The steps are written as JSON text while they happen and kept as bytes, a chunk at a time: a
// trace of a gigabyte is never one string (V8 stops at about 512 MiB) and crosses threads without
// a copy (see replayPlan.ts).
import type { InterpreterStep } from "@ethereumjs/evm";
import { Address, bigIntToBytes, generateAddress } from "@ethereumjs/util";
import type { ChainTransaction } from "../chain/transactions.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { ExecutionEngine } from "../execution/engine.js";
import { callTracerError } from "./errors.js";
import type { ReplayContext, ReplayedTransaction, TransactionTracer } from "./replay.js";

export interface StructLogOptions {
  disableStack: boolean;
  /** Memory in each step (geth's enableMemory; off by default, as geth and Anvil have it). */
  enableMemory: boolean;
  disableStorage: boolean;
  /** The return data of the frame's last call in each step where there is some. */
  enableReturnData: boolean;
  /** Most steps recorded (the rest of the transaction still runs); 0: every step. */
  limit: number;
}

/** Slot -> value, both 32-byte words as 64 hex digits without 0x. */
export type StorageMap = Record<string, string>;

export interface StructLog {
  pc: number;
  op: string;
  gas: number;
  gasCost: number;
  depth: number;
  /** Words as compact 0x numbers ("0x0", "0x2a"), bottom first. */
  stack?: string[];
  returnData?: string;
  memory?: string[];
  /** At SLOAD and SSTORE steps only. */
  storage?: StorageMap;
  refund?: number;
}

export interface StructLogTrace {
  gas: number;
  failed: boolean;
  returnValue: string;
  structLogs: StructLog[];
  contractAddress: string;
  initStorage: StorageMap;
  currentStorage: StorageMap;
  storageSize: number;
  result: string;
  error: string;
  reverted: boolean;
}

/**
 * A StructLogTrace already written as JSON text, in parts: short texts, and the steps as bytes
 * (ASCII, so their UTF-8) in chunks of about `chunkBytes`. `byteLength` is the whole text's.
 */
export class StructLogTraceJson {
  constructor(
    readonly parts: readonly (string | Uint8Array)[],
    readonly byteLength: number,
  ) {}
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

/** What the trace knows of one account's storage; its JSON text (keys in order, as geth's) is rebuilt only after a change. */
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
    if (this.json === undefined) {
      const slots = [...this.slots.keys()].sort();
      this.json = `{${slots.map((slot) => `"${slot}":"${this.slots.get(slot)!}"`).join(",")}}`;
    }
    return this.json;
  }
}

/**
 * An SLOAD seen at its step and completed at the next one, where the value it loaded is on the
 * stack: geth's step shows the slot with the value the load reads.
 */
interface PendingLoad {
  account: string;
  slot: string;
  /** Call depth of the load: its value is on the stack only if the frame continues. */
  depth: number;
  /** The step's text up to its storage member; undefined when steps show no storage. */
  text: string | undefined;
  /** The step's text after its storage member (the refund and the closing brace). */
  tail: string;
}

interface OriginalStorageMap {
  map: Map<string, Map<string, Uint8Array>>;
}

/** A limit on the text one request's struct logs may take, and what sets it (named in the refusal). */
export interface StructLogLimit {
  bytes: number;
  /** The command-line flag that sets it, say "--rpc-response-limit". */
  flag: string;
}

/**
 * Most struct-log text one request may build by default (a block's traces share it): memory stays
 * bounded. The RPC layer passes its own limits instead.
 */
export const defaultStructLogLimit: StructLogLimit = { bytes: 1024 * 1024 * 1024, flag: "--trace-answer-limit" };

/** The text still allowed for one request's struct logs. */
export interface StructLogBudget {
  readonly limit: StructLogLimit;
  bytesLeft: number;
}

export function createStructLogBudget(limit: StructLogLimit = defaultStructLogLimit): StructLogBudget {
  return { limit, bytesLeft: limit.bytes };
}

/** A struct-log trace would pass its budget. */
export class StructLogTooLargeError extends Error {
  constructor(
    readonly limitBytes: number,
    readonly flag: string,
  ) {
    super(`the struct-log trace passes the limit of ${limitBytes} bytes (${flag})`);
  }
}

/**
 * Each step's text is written at once into a chunk of this many bytes (a longer step gets a chunk
 * of its own): the texts die young, no long text is ever joined, and a trace of a gigabyte is
 * 8,000 chunks. A chunk has its memory to itself (never Buffer's pool), so it can move to another
 * thread.
 */
const chunkBytes = 128 * 1024;

/** Buffer's own latin1 writer: without Buffer.write's checks of its arguments, a third of the cost of writing a step. */
interface LatinWritable {
  latin1Write(text: string, offset: number): number;
}

/** A frame's return data as the steps show it: the output of its last call or creation. */
interface Frame {
  returnData: Uint8Array;
}

const noBytes = new Uint8Array(0);

export class StructLogger implements TransactionTracer<StructLogTraceJson> {
  /** The steps written so far, comma-separated, in full chunks. */
  private readonly chunks: Uint8Array[] = [];
  /** The chunk being written, and how much of it is. */
  private chunk: (Buffer & LatinWritable) | undefined;
  private chunkUsed = 0;
  private steps = 0;
  private readonly storages = new Map<string, KnownStorage>();
  /** Values before the transaction of the slots it touched, by account. */
  private readonly originals = new Map<string, Map<string, string>>();
  private pending: PendingLoad | undefined;
  private engine: ExecutionEngine | undefined;
  private contract = "";
  private initialSlotCount = 0;
  private previousMemory: { bytes: Uint8Array; json: string } = { bytes: new Uint8Array(0), json: "[]" };
  /** The account of the last step and its hex: steps of one frame share the Address object. */
  private lastAccount: { address: Address | undefined; hex: string } = { address: undefined, hex: "" };
  /** Step heads by position and opcode (see stepHead). */
  private readonly stepHeads = new Map<number, string>();
  /** The previous step's stack words by position, and their text (see stackJson). */
  private readonly stackValues: bigint[] = [];
  private readonly stackTexts: string[] = [];
  /** enableReturnData: the frames running, innermost last. */
  private readonly frames: Frame[] = [];

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
    const events = engine.vm.evm.events!;
    events.on("step", this.onStep);
    if (this.options.enableReturnData) {
      events.on("beforeMessage", this.onMessage);
      events.on("afterMessage", this.onMessageEnd);
    }
  }

  async finish(replayed: ReplayedTransaction | undefined): Promise<StructLogTraceJson> {
    const engine = this.engine;
    const events = engine?.vm.evm.events;
    events?.off("step", this.onStep);
    events?.off("beforeMessage", this.onMessage);
    events?.off("afterMessage", this.onMessageEnd);
    this.completeLoad(undefined);
    this.engine = undefined;
    if (this.overflowed) throw new StructLogTooLargeError(this.budget.limit.bytes, this.budget.limit.flag);
    const result = replayed?.result;
    const execResult = result?.execResult;
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
    const returned = execResult === undefined ? "" : bytesToUnprefixedHex(execResult.returnValue);
    const head = `{"gas":${result?.totalGasSpent ?? 0n},"failed":${error !== undefined},"returnValue":"${returned}","structLogs":[`;
    const summary: Omit<StructLogTrace, "gas" | "failed" | "returnValue" | "structLogs"> = {
      contractAddress: this.contract,
      initStorage,
      currentStorage: Object.fromEntries(known),
      storageSize,
      result: returned,
      error: error === undefined ? "" : callTracerError(error),
      reverted: error === "revert",
    };
    const tail = `],${JSON.stringify(summary).slice(1)}`;
    this.closeChunk();
    const parts: (string | Uint8Array)[] = [head, ...this.chunks, tail];
    let byteLength = Buffer.byteLength(head) + Buffer.byteLength(tail);
    for (const chunk of this.chunks) byteLength += chunk.byteLength;
    this.chunks.length = 0;
    return new StructLogTraceJson(parts, byteLength);
  }

  private readonly onStep = (step: InterpreterStep): void => {
    if (this.overflowed) return;
    if (this.pending !== undefined) this.completeLoad(step);
    const options = this.options;
    const limited = options.limit > 0 && this.steps >= options.limit;
    const code = step.opcode.code;
    const storageStep = code === sloadOpcode || code === sstoreOpcode;
    // Past the limit no step is written, as geth; the storage is still followed for the summary.
    if (limited) {
      if (storageStep) this.followStorage(step, code, undefined, "", false);
      return;
    }
    // Gas figures as numbers: they are below 2^53, and a number's text is cheaper to make than a BigInt's.
    let text = `${this.stepHead(step.pc, step.opcode.code, step.opcode.name)}${Number(step.gasLeft)},"gasCost":${Number(step.opcode.dynamicFee)},"depth":${step.depth + 1}`;
    // The engine copies the stack (and the memory) only when they are read: read them only when needed.
    if (!options.disableStack) text += this.stackJson(step.stack);
    if (options.enableReturnData) {
      const returnData = this.frames[this.frames.length - 1]?.returnData ?? noBytes;
      if (returnData.length > 0) text += `,"returnData":"0x${bytesToUnprefixedHex(returnData)}"`;
    }
    if (options.enableMemory && step.memoryWordCount > 0n) text += `,"memory":${this.memoryJson(step.memory)}`;
    const tail = step.gasRefund === 0n ? "}" : `,"refund":${step.gasRefund}}`;
    this.steps++;
    if (!storageStep) return this.append(text + tail);
    const written = this.followStorage(step, code, text, tail, !options.disableStorage);
    if (written !== undefined) this.append(written);
  };

  /**
   * Keeps the storage of the step's account up to date at an SLOAD or SSTORE. Answers the step's
   * text (`text` undefined: the step is not written), with the storage member when `showStorage`,
   * or undefined for an SLOAD whose text waits for the value it loads (completeLoad).
   */
  private followStorage(step: InterpreterStep, code: number, text: string | undefined, tail: string, showStorage: boolean): string | undefined {
    const stack = step.stack;
    const account = this.accountHex(step.address);
    if (code === sloadOpcode && stack.length >= 1) {
      const deferred = text !== undefined && showStorage;
      this.pending = { account, slot: wordHex(stack[stack.length - 1]!), depth: step.depth, text: deferred ? text : undefined, tail };
      if (deferred) return undefined;
    } else if (code === sstoreOpcode && stack.length >= 2) {
      const slot = wordHex(stack[stack.length - 1]!);
      this.rememberOriginalBeforeStore(account, slot);
      this.storageOf(account).set(slot, wordHex(stack[stack.length - 2]!));
    }
    if (text === undefined) return undefined;
    return showStorage ? `${text},"storage":${this.storageOf(account).toJson()}${tail}` : text + tail;
  }

  private append(text: string): void {
    // Counted in UTF-16 units: the text is ASCII, so that is its size in bytes.
    this.budget.bytesLeft -= text.length;
    if (this.budget.bytesLeft < 0) {
      // A throw here would not stop the engine (it awaits its listeners); stop recording instead.
      this.overflowed = true;
      this.chunks.length = 0;
      this.chunk = undefined;
      return;
    }
    if (this.chunk !== undefined && this.chunkUsed + text.length <= chunkBytes) {
      this.chunkUsed += this.chunk.latin1Write(text, this.chunkUsed);
      return;
    }
    this.closeChunk();
    if (text.length > chunkBytes) {
      this.chunks.push(Buffer.from(text, "latin1"));
      return;
    }
    this.chunk = Buffer.allocUnsafeSlow(chunkBytes) as Buffer & LatinWritable;
    this.chunkUsed = this.chunk.latin1Write(text, 0);
  }

  /** Keeps the written part of the chunk being written; the next step starts a new one. */
  private closeChunk(): void {
    if (this.chunk !== undefined && this.chunkUsed > 0) this.chunks.push(this.chunk.subarray(0, this.chunkUsed));
    this.chunk = undefined;
    this.chunkUsed = 0;
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

  /**
   * Completes the SLOAD of the previous step, now that it ran (`next` undefined: the transaction
   * ended), and writes its step. A load whose frame ended at it (it failed) shows the storage
   * without the slot's value unless the trace knew it already.
   */
  private completeLoad(next: InterpreterStep | undefined): void {
    const load = this.pending;
    if (load === undefined) return;
    this.pending = undefined;
    const storage = this.storageOf(load.account);
    if (next !== undefined && next.depth === load.depth && next.stack.length > 0) {
      const value = wordHex(next.stack[next.stack.length - 1]!);
      storage.set(load.slot, value);
      const originals = this.originalsOf(load.account);
      // Loaded before any write of this transaction: that is the value the slot had before it.
      if (!originals.has(load.slot)) originals.set(load.slot, value);
    }
    if (load.text === undefined || this.overflowed) return;
    this.append(storage.slots.size === 0 ? load.text + load.tail : `${load.text},"storage":${storage.toJson()}${load.tail}`);
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

  /** A frame starts: its return data is empty until a call of its own returns. */
  private readonly onMessage = (): void => {
    this.frames.push({ returnData: noBytes });
  };

  /**
   * A frame ends: its caller's return data is what it returned (a creation's only when it
   * reverted: the code it deployed is not return data).
   */
  private readonly onMessageEnd = (result: { createdAddress?: unknown; execResult: { returnValue: Uint8Array; exceptionError?: { error: string } } }): void => {
    this.frames.pop();
    const caller = this.frames[this.frames.length - 1];
    if (caller === undefined) return;
    const { returnValue, exceptionError } = result.execResult;
    caller.returnData = result.createdAddress !== undefined && exceptionError?.error !== "revert" ? noBytes : returnValue;
  };

  /**
   * The text a step starts with, up to its gas: the same for every step at the same position and
   * opcode, so a loop's steps share it.
   */
  private stepHead(pc: number, code: number, name: string): string {
    const key = pc * 256 + code;
    let head = this.stepHeads.get(key);
    if (head === undefined) {
      head = `,{"pc":${pc},"op":"${name}","gas":`;
      this.stepHeads.set(key, head);
    }
    // The first step has no comma before it.
    return this.steps === 0 ? head.slice(1) : head;
  }

  /**
   * The stack member's text. A step changes the top of the stack only: the words below are the
   * same values as at the previous step, and their text is reused.
   */
  private stackJson(stack: readonly bigint[]): string {
    const values = this.stackValues;
    const texts = this.stackTexts;
    let text = ',"stack":[';
    for (let index = 0; index < stack.length; index++) {
      const value = stack[index]!;
      let word = texts[index];
      if (word === undefined || values[index] !== value) {
        word = `"0x${value.toString(16)}"`;
        texts[index] = word;
        values[index] = value;
      }
      text += index === 0 ? word : `,${word}`;
    }
    return `${text}]`;
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
