// Records the tree of calls, creations and self-destructs of one transaction from the engine's
// message events. The callTracer and the flat (Parity) traces are both made from this tree.
import type { EVMResult, Message } from "@ethereumjs/evm";
import type { Address } from "@ethereumjs/util";
import type { ExecutionEngine } from "../execution/engine.js";
import { listenToRefusedCalls, madeByStaticCall, type RefusedCallReason } from "../execution/callFrameMarks.js";

export type FrameKind = "CALL" | "CALLCODE" | "DELEGATECALL" | "STATICCALL" | "CREATE" | "CREATE2" | "SELFDESTRUCT";

export interface RecordedLog {
  readonly address: Uint8Array;
  readonly topics: readonly Uint8Array[];
  readonly data: Uint8Array;
}

export interface RecordedFrame {
  readonly kind: FrameKind;
  readonly depth: number;
  readonly from: Uint8Array;
  /** Callee (code address for DELEGATECALL/CALLCODE), created address, or beneficiary. */
  to: Uint8Array | undefined;
  readonly value: bigint;
  /** Gas given to the frame. */
  readonly gas: bigint;
  readonly input: Uint8Array;
  gasUsed: bigint;
  /** Return data, deployed code or revert payload. */
  output: Uint8Array;
  /** The engine's words for the failure (e.g. "revert", "out of gas"); undefined on success. */
  error: string | undefined;
  /** Refused before it began (too little value, too deep): no message ran. */
  refused: boolean;
  /** Logs the frame itself emitted (its children's not included); empty when it failed. */
  logs: RecordedLog[];
  readonly children: RecordedFrame[];
  /** Whether state changes are forbidden in the frame (it or an ancestor is a STATICCALL). */
  readonly isStatic: boolean;
  /** Account whose storage the frame runs on. */
  storageAddress: Uint8Array | undefined;
}

type EngineLog = [Uint8Array, Uint8Array[], Uint8Array];

interface SelfDestructEvent {
  address: Uint8Array;
  beneficiary: Uint8Array;
  balance: bigint;
}

interface SelfDestructHook {
  listener: ((event: SelfDestructEvent) => void) | undefined;
}

interface OpcodeEntry {
  opHandler: (runState: SelfDestructRunState, ...rest: unknown[]) => unknown;
}

interface SelfDestructRunState {
  stack: { peek(count: number): bigint[] };
  interpreter: { getAddress(): Address; getSelfBalance(): bigint };
}

const selfDestructOpcode = 0xff;
const selfDestructHooks = new WeakMap<ExecutionEngine, SelfDestructHook>();

/**
 * The engine emits no event for SELFDESTRUCT: its handler is wrapped (once per engine; the
 * opcode table is internal, hence the casts) to report the account, beneficiary and balance.
 */
function selfDestructHookOf(engine: ExecutionEngine): SelfDestructHook {
  let hook = selfDestructHooks.get(engine);
  if (hook !== undefined) return hook;
  const created: SelfDestructHook = { listener: undefined };
  const opcodeMap = (engine.vm.evm as unknown as { _opcodeMap: OpcodeEntry[] })._opcodeMap;
  const entry = opcodeMap[selfDestructOpcode]!;
  const selfDestruct = entry.opHandler;
  opcodeMap[selfDestructOpcode] = {
    ...entry,
    opHandler(runState, ...rest) {
      if (created.listener !== undefined) {
        const beneficiary = runState.stack.peek(1)[0]!;
        created.listener({
          address: runState.interpreter.getAddress().bytes,
          beneficiary: bigintToAddressBytes(beneficiary),
          balance: runState.interpreter.getSelfBalance(),
        });
      }
      return selfDestruct(runState, ...rest);
    },
  };
  selfDestructHooks.set(engine, created);
  return created;
}

function bigintToAddressBytes(value: bigint): Uint8Array {
  const bytes = new Uint8Array(20);
  let rest = value;
  for (let index = 19; index >= 0; index--) {
    bytes[index] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return bytes;
}

function frameKind(message: Message, parent: RecordedFrame | undefined): FrameKind {
  if (message.to === undefined) return message.salt === undefined ? "CREATE" : "CREATE2";
  if (parent === undefined) return "CALL";
  if (message.delegatecall) return "DELEGATECALL";
  if ((message as unknown as { _codeAddress?: Address })._codeAddress !== undefined) return "CALLCODE";
  if (madeByStaticCall(message) || (message.isStatic && !parent.isStatic)) return "STATICCALL";
  return "CALL";
}

/** What a frame is before it ran: who called whom with what. */
export type FrameStart = Omit<RecordedFrame, "gasUsed" | "output" | "error" | "refused" | "logs" | "children">;

/** A frame that has not run yet (or ran nothing): no gas used, no output, no error, no logs, no children. */
export function newFrame(start: FrameStart): RecordedFrame {
  return { ...start, gasUsed: 0n, output: new Uint8Array(0), error: undefined, refused: false, logs: [], children: [] };
}

/** The frame a message opens, under `parent` (undefined for the transaction's own). */
function frameOf(message: Message, parent: RecordedFrame | undefined): RecordedFrame {
  const kind = frameKind(message, parent);
  const codeAddress = (message as unknown as { _codeAddress?: Address })._codeAddress;
  return newFrame({
    kind,
    depth: message.depth,
    // DELEGATECALL and CALLCODE run in the caller's account: the calling contract is the sender.
    from: parent === undefined ? message.caller.bytes : (parent.storageAddress ?? message.caller.bytes),
    to: kind === "DELEGATECALL" || kind === "CALLCODE" ? codeAddress?.bytes : message.to?.bytes,
    value: message.value,
    gas: message.gasLimit,
    // The engine hands the caller's memory, which later steps overwrite: keep a copy.
    input: message.data.slice(),
    isStatic: message.isStatic,
    storageAddress: message.to?.bytes,
  });
}

/** Subscribes to an engine for one transaction and builds its call tree. */
export class CallRecorder {
  private readonly open: RecordedFrame[] = [];
  private top: RecordedFrame | undefined;
  private engine: ExecutionEngine | undefined;
  private hook: SelfDestructHook | undefined;
  /** Every log a successful frame's result holds, its descendants' included. */
  private readonly engineLogs = new WeakMap<RecordedFrame, EngineLog[]>();

  private readonly onBeforeMessage = (message: Message): void => {
    const parent = this.open[this.open.length - 1];
    const frame = frameOf(message, parent);
    if (parent === undefined) this.top = frame;
    else parent.children.push(frame);
    this.open.push(frame);
  };

  /** A call the interpreter refused before it began: a child of the running frame, failed at once. */
  private readonly onRefusedCall = (message: object, reason: RefusedCallReason): void => {
    const parent = this.open[this.open.length - 1];
    if (parent === undefined) return;
    const frame = frameOf(message as Message, parent);
    frame.error = reason;
    frame.refused = true;
    parent.children.push(frame);
  };

  private readonly onAfterMessage = (result: EVMResult): void => {
    const frame = this.open.pop();
    if (frame === undefined) return;
    const { execResult } = result;
    frame.gasUsed = execResult.executionGasUsed;
    frame.output = execResult.returnValue.slice();
    frame.error = execResult.exceptionError?.error;
    if (frame.kind === "CREATE" || frame.kind === "CREATE2") {
      frame.storageAddress = result.createdAddress?.bytes;
      if (frame.error === undefined) frame.to = result.createdAddress?.bytes;
    }
    if (frame.error === undefined) {
      const logs = (execResult.logs ?? []) as EngineLog[];
      this.engineLogs.set(frame, logs);
      frame.logs = ownLogs(logs, frame.children.map((child) => this.engineLogs.get(child) ?? []));
    }
  };

  private readonly onSelfDestruct = (event: SelfDestructEvent): void => {
    const parent = this.open[this.open.length - 1];
    if (parent === undefined) return;
    parent.children.push(
      newFrame({
        kind: "SELFDESTRUCT",
        depth: parent.depth + 1,
        from: event.address,
        to: event.beneficiary,
        value: event.balance,
        gas: 0n,
        input: new Uint8Array(0),
        isStatic: parent.isStatic,
        storageAddress: event.address,
      }),
    );
  };

  start(engine: ExecutionEngine): void {
    this.engine = engine;
    engine.vm.evm.events!.on("beforeMessage", this.onBeforeMessage);
    engine.vm.evm.events!.on("afterMessage", this.onAfterMessage);
    listenToRefusedCalls(engine.vm.evm, this.onRefusedCall);
    this.hook = selfDestructHookOf(engine);
    this.hook.listener = this.onSelfDestruct;
  }

  /** Unsubscribes and returns the top frame (undefined when no message ran). */
  finish(): RecordedFrame | undefined {
    if (this.engine !== undefined) {
      this.engine.vm.evm.events!.off("beforeMessage", this.onBeforeMessage);
      this.engine.vm.evm.events!.off("afterMessage", this.onAfterMessage);
      listenToRefusedCalls(this.engine.vm.evm, undefined);
      this.engine = undefined;
    }
    if (this.hook !== undefined) this.hook.listener = undefined;
    return this.top;
  }
}

/**
 * A frame's logs hold its successful children's logs too (the engine concatenates the same log
 * objects into the parent's list): the frame's own are those in no child's list.
 */
function ownLogs(logs: readonly EngineLog[], childLogs: readonly (readonly EngineLog[])[]): RecordedLog[] {
  if (logs.length === 0) return [];
  const fromChildren = new Set<EngineLog>();
  for (const list of childLogs) for (const log of list) fromChildren.add(log);
  const own: RecordedLog[] = [];
  for (const log of logs) if (!fromChildren.has(log)) own.push({ address: log[0], topics: log[1], data: log[2].slice() });
  return own;
}
