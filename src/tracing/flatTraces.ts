// Flat traces in OpenEthereum's (Parity's) shape: the call tree listed depth-first, each call,
// creation and self-destruct with its own action, result, path (traceAddress) and place in the chain.
import { Address } from "@ethereumjs/util";
import type { Block } from "../chain/block.js";
import type { ChainTransaction } from "../chain/transactions.js";
import { bytesToHex, toQuantity } from "../common/hex.js";
import type { ExecutionEngine } from "../execution/engine.js";
import { CallRecorder, type RecordedFrame } from "./callRecorder.js";
import { flatTraceError } from "./errors.js";
import type { ReplayedTransaction, TransactionTracer } from "./replay.js";

export interface TraceCallAction {
  callType: "call" | "delegatecall" | "staticcall" | "callcode";
  from: string;
  to: string;
  gas: string;
  input: string;
  value: string;
}

export interface TraceCreateAction {
  from: string;
  gas: string;
  init: string;
  value: string;
  creationMethod?: "create" | "create2";
}

export interface TraceSuicideAction {
  address: string;
  refundAddress: string;
  balance: string;
}

export interface FlatTrace {
  action: TraceCallAction | TraceCreateAction | TraceSuicideAction;
  blockHash: string;
  blockNumber: number;
  error?: string;
  result: { gasUsed: string; output: string } | { gasUsed: string; code: string; address: string } | null;
  subtraces: number;
  traceAddress: number[];
  transactionHash: string;
  transactionPosition: number;
  type: "call" | "create" | "suicide";
}

const zeroAddress = new Uint8Array(20);

/** Where a transaction's traces sit in the chain (wire strings, shared by its traces). */
interface TracePlace {
  blockHash: string;
  blockNumber: number;
  transactionHash: string;
  transactionPosition: number;
}

/** The children flat traces show: the frames that ran, not the calls refused before they began. */
function tracedChildren(frame: RecordedFrame): RecordedFrame[] {
  return frame.children.filter((child) => !child.refused);
}

export class FlatTracer implements TransactionTracer<FlatTrace[]> {
  private readonly recorder = new CallRecorder();
  /** A call to an account without code (and not a precompile) runs nothing: its action shows no gas. */
  private plainTransfer = false;

  constructor(private readonly block: Block) {}

  async start(engine: ExecutionEngine, transaction: ChainTransaction): Promise<void> {
    const to = transaction.tx.to;
    const recipient = to === undefined ? undefined : new Address(to.bytes);
    this.plainTransfer = recipient !== undefined && engine.vm.evm.getPrecompile?.(recipient) === undefined && (await engine.state.getCode(recipient)).length === 0;
    this.recorder.start(engine);
  }

  finish(replayed: ReplayedTransaction | undefined): FlatTrace[] {
    const top = this.recorder.finish();
    if (top === undefined || replayed === undefined) return [];
    const place: TracePlace = {
      blockHash: bytesToHex(this.block.hash),
      blockNumber: Number(this.block.number),
      transactionHash: bytesToHex(replayed.transaction.hash),
      transactionPosition: replayed.index,
    };
    const traces: FlatTrace[] = [];
    this.flatten(top, [], place, traces);
    if (this.plainTransfer && traces[0] !== undefined && "callType" in traces[0].action) traces[0].action.gas = "0x0";
    return traces;
  }

  private flatten(frame: RecordedFrame, traceAddress: number[], place: TracePlace, out: FlatTrace[]): void {
    const trace = formatFrame(frame, traceAddress, place);
    out.push(trace);
    tracedChildren(frame).forEach((child, index) => this.flatten(child, [...traceAddress, index], place, out));
  }
}

function formatFrame(frame: RecordedFrame, traceAddress: number[], place: TracePlace): FlatTrace {
  const common = {
    blockHash: place.blockHash,
    blockNumber: place.blockNumber,
    subtraces: tracedChildren(frame).length,
    traceAddress,
    transactionHash: place.transactionHash,
    transactionPosition: place.transactionPosition,
  };
  const failure = frame.error === undefined ? {} : { error: flatTraceError(frame.error) };
  switch (frame.kind) {
    case "SELFDESTRUCT":
      return {
        action: { address: bytesToHex(frame.from), refundAddress: bytesToHex(frame.to ?? zeroAddress), balance: toQuantity(frame.value) },
        ...orderedPlace(common, failure, null),
        type: "suicide",
      };
    case "CREATE":
    case "CREATE2": {
      const action: TraceCreateAction = { from: bytesToHex(frame.from), gas: toQuantity(frame.gas), init: bytesToHex(frame.input), value: toQuantity(frame.value) };
      if (frame.depth > 0) action.creationMethod = frame.kind === "CREATE2" ? "create2" : "create";
      const result = frame.error === undefined ? { gasUsed: toQuantity(frame.gasUsed), code: bytesToHex(frame.output), address: bytesToHex(frame.to ?? zeroAddress) } : null;
      return { action, ...orderedPlace(common, failure, result), type: "create" };
    }
    default: {
      const action: TraceCallAction = {
        callType: frame.kind.toLowerCase() as TraceCallAction["callType"],
        from: bytesToHex(frame.from),
        to: bytesToHex(frame.to ?? zeroAddress),
        gas: toQuantity(frame.gas),
        input: bytesToHex(frame.input),
        value: toQuantity(frame.value),
      };
      const result = frame.error === undefined ? { gasUsed: toQuantity(frame.gasUsed), output: bytesToHex(frame.output) } : null;
      return { action, ...orderedPlace(common, failure, result), type: "call" };
    }
  }
}

/** The members between action and type, in the reference's order. */
function orderedPlace(
  common: Omit<FlatTrace, "action" | "error" | "result" | "type">,
  failure: { error?: string },
  result: FlatTrace["result"],
): Omit<FlatTrace, "action" | "type"> {
  return { blockHash: common.blockHash, blockNumber: common.blockNumber, ...failure, result, subtraces: common.subtraces, traceAddress: common.traceAddress, transactionHash: common.transactionHash, transactionPosition: common.transactionPosition };
}
