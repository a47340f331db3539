// eth_createAccessList's tracer, geth's AccessListTracer rule for rule: every SLOAD and SSTORE
// lists the executing account (the storage owner) with the slot, whoever it is; BALANCE,
// EXTCODESIZE, EXTCODECOPY, EXTCODEHASH and SELFDESTRUCT list the address they name, and the CALL
// family its target, unless that is the sender, the recipient (or the created contract) or a
// precompile. Steps inside frames that later revert count too, as in geth.
import type { InterpreterStep } from "@ethereumjs/evm";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { ExecutionEngine } from "../execution/engine.js";
import type { ChainTransaction } from "../chain/transactions.js";
import type { TransactionTracer } from "./replay.js";

/** Account hex (no 0x) -> slot hexes (64 digits, no 0x). */
export type RecordedAccessList = Map<string, Set<string>>;

const slotOpcodes = new Set(["SLOAD", "SSTORE"]);
const addressOpcodes = new Set(["BALANCE", "EXTCODESIZE", "EXTCODECOPY", "EXTCODEHASH", "SELFDESTRUCT"]);
const callOpcodes = new Set(["CALL", "CALLCODE", "DELEGATECALL", "STATICCALL"]);

function addressHex(word: bigint): string {
  return BigInt.asUintN(160, word).toString(16).padStart(40, "0");
}

export class AccessListTracer implements TransactionTracer<RecordedAccessList> {
  private readonly list: RecordedAccessList = new Map();
  private engine: ExecutionEngine | undefined;

  /** `initial`: the list the call came with (its excluded addresses are dropped, their slots kept, as geth). */
  constructor(
    private readonly excluded: ReadonlySet<string>,
    initial: RecordedAccessList = new Map(),
  ) {
    for (const [address, slots] of initial) {
      if (!excluded.has(address) || slots.size > 0) this.list.set(address, new Set(slots));
    }
  }

  start(engine: ExecutionEngine, _transaction: ChainTransaction): void {
    this.engine = engine;
    engine.vm.evm.events!.on("step", this.onStep);
  }

  finish(): RecordedAccessList {
    this.engine?.vm.evm.events!.off("step", this.onStep);
    this.engine = undefined;
    return this.list;
  }

  private readonly onStep = (step: InterpreterStep): void => {
    const name = step.opcode.name;
    if (slotOpcodes.has(name)) {
      const { stack } = step;
      if (stack.length >= 1) this.slotsOf(bytesToUnprefixedHex(step.address.bytes)).add(stack[stack.length - 1]!.toString(16).padStart(64, "0"));
    } else if (addressOpcodes.has(name)) {
      const { stack } = step;
      if (stack.length >= 1) this.addAddress(addressHex(stack[stack.length - 1]!));
    } else if (callOpcodes.has(name)) {
      const { stack } = step;
      if (stack.length >= 5) this.addAddress(addressHex(stack[stack.length - 2]!));
    }
  };

  private addAddress(address: string): void {
    if (!this.excluded.has(address)) this.slotsOf(address);
  }

  private slotsOf(address: string): Set<string> {
    let slots = this.list.get(address);
    if (slots === undefined) this.list.set(address, (slots = new Set()));
    return slots;
  }
}

/** Whether two recorded lists hold the same accounts with the same slots. */
export function sameAccessList(first: RecordedAccessList, second: RecordedAccessList): boolean {
  if (first.size !== second.size) return false;
  for (const [address, slots] of first) {
    const other = second.get(address);
    if (other === undefined || other.size !== slots.size) return false;
    for (const slot of slots) if (!other.has(slot)) return false;
  }
  return true;
}
