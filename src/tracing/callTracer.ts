// The callTracer: the transaction's tree of calls and creations (and self-destructs), each frame
// with its own input, output, gas and error, geth's shape.
import { bytesToHex, toQuantity } from "../common/hex.js";
import type { ChainTransaction } from "../chain/transactions.js";
import type { ExecutionEngine } from "../execution/engine.js";
import { decodeRevertReason } from "../execution/messageCall.js";
import { CallRecorder, newFrame, type RecordedFrame } from "./callRecorder.js";
import { callTracerError } from "./errors.js";
import type { ReplayedTransaction, TransactionTracer } from "./replay.js";

export interface CallTracerOptions {
  onlyTopCall: boolean;
  withLog: boolean;
}

export interface CallFrameLog {
  index: number;
  address: string;
  topics: string[];
  data: string;
}

export interface CallFrame {
  type: RecordedFrame["kind"];
  from: string;
  to?: string;
  value?: string;
  gas: string;
  gasUsed: string;
  input: string;
  output?: string;
  error?: string;
  revertReason?: string;
  calls?: CallFrame[];
  logs?: CallFrameLog[];
}

/** A transaction that ran no message at all (cannot happen for a mined one) still answers its top frame. */
function emptyTopFrame(transaction: ChainTransaction): RecordedFrame {
  const { tx } = transaction;
  return newFrame({
    kind: tx.to === undefined ? "CREATE" : "CALL",
    depth: 0,
    from: transaction.sender,
    to: tx.to?.bytes,
    value: tx.value,
    gas: tx.gasLimit,
    input: tx.data,
    isStatic: false,
    storageAddress: tx.to?.bytes,
  });
}

export class CallTracer implements TransactionTracer<CallFrame> {
  private readonly recorder = new CallRecorder();
  private transaction: ChainTransaction | undefined;

  constructor(private readonly options: CallTracerOptions) {}

  start(engine: ExecutionEngine, transaction: ChainTransaction): void {
    this.transaction = transaction;
    this.recorder.start(engine);
  }

  finish(replayed: ReplayedTransaction | undefined): CallFrame {
    const top = this.recorder.finish() ?? emptyTopFrame(this.transaction!);
    const frame = this.format(top, false);
    // The top frame answers for the whole transaction: its gas limit and the gas it paid for.
    frame.gas = toQuantity(this.transaction!.tx.gasLimit);
    if (replayed !== undefined) frame.gasUsed = toQuantity(replayed.result.totalGasSpent);
    return frame;
  }

  /** `undoneByAncestor`: an enclosing frame failed, so this frame's logs did not survive. */
  private format(recorded: RecordedFrame, undoneByAncestor: boolean): CallFrame {
    const frame: CallFrame = {
      type: recorded.kind,
      from: bytesToHex(recorded.from),
      ...(recorded.to === undefined ? {} : { to: bytesToHex(recorded.to) }),
      // As geth: a STATICCALL carries no value.
      ...(recorded.kind === "STATICCALL" ? {} : { value: toQuantity(recorded.value) }),
      gas: toQuantity(recorded.gas),
      gasUsed: toQuantity(recorded.gasUsed),
      input: bytesToHex(recorded.input),
    };
    const { error } = recorded;
    // Output on success and revert (the revert payload); a frame that failed otherwise has none,
    // and, as in geth, neither has one whose output is empty.
    if (recorded.kind !== "SELFDESTRUCT" && (error === undefined || error === "revert") && recorded.output.length > 0) frame.output = bytesToHex(recorded.output);
    if (error !== undefined) {
      frame.error = callTracerError(error);
      if (error === "revert") {
        const reason = decodeRevertReason(recorded.output);
        if (reason !== undefined) frame.revertReason = reason;
      }
    }
    if (!this.options.onlyTopCall && recorded.children.length > 0) frame.calls = recorded.children.map((child) => this.format(child, undoneByAncestor || error !== undefined));
    if (this.options.withLog && !undoneByAncestor && recorded.logs.length > 0) {
      frame.logs = recorded.logs.map((log, index) => ({ index, address: bytesToHex(log.address), topics: log.topics.map(bytesToHex), data: bytesToHex(log.data) }));
    }
    return frame;
  }
}
