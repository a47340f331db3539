// The interpreter's fast paths against the package's own: word conversions against
// @ethereumjs/util, and hand-assembled programs run on the node's engine (fast loop, replaced
// handlers) and on an EVM as it comes, which must end with the same gas, output and error.
import { expect } from "chai";
import { Common, Mainnet } from "@ethereumjs/common";
import { Account, Address, KECCAK256_RLP, bigIntToBytes, bytesToBigInt, bytesToHex, setLengthLeft } from "@ethereumjs/util";
import type { InterpreterStep } from "@ethereumjs/evm";
import { createVM } from "@ethereumjs/vm";
import { createExecutionEngine } from "../../../src/execution/engine.js";
import { bytesToWord, wordToBytes32, wordToMinimalBytes } from "../../../src/execution/interpreterFastPaths.js";
import { createExecutionRules, executionHardfork, extraEips } from "../../../src/execution/rules.js";
import { StateDatabase } from "../../../src/state/stateDatabase.js";
import { createMemoryStore } from "../../../src/storage/keyValueStore.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

const maxWord = (1n << 256n) - 1n;

function randomWord(next: () => number): bigint {
  const bytes = Math.floor(next() * 33);
  let word = 0n;
  for (let index = 0; index < bytes; index++) word = (word << 8n) | BigInt(Math.floor(next() * 256));
  return word;
}

/** One byte as two hex digits. */
function hexByte(value: number): string {
  return value.toString(16).padStart(2, "0");
}

/** PUSHn of `bytes` (PUSH0 for none): n is their count. */
function pushBytes(bytes: Uint8Array): string {
  return hexByte(0x5f + bytes.length) + Buffer.from(bytes).toString("hex");
}

/** PUSHn of the shortest width for `value` (PUSH1 for zero). */
function push(value: bigint | number): string {
  return pushBytes(BigInt(value) === 0n ? new Uint8Array([0]) : bigIntToBytes(BigInt(value)));
}

const op = {
  STOP: "00",
  EXP: "0a",
  KECCAK256: "20",
  CALLDATALOAD: "35",
  CALLDATASIZE: "36",
  CALLDATACOPY: "37",
  CODECOPY: "39",
  RETURNDATACOPY: "3e",
  POP: "50",
  MLOAD: "51",
  MSTORE: "52",
  MSTORE8: "53",
  SLOAD: "54",
  SSTORE: "55",
  JUMP: "56",
  JUMPI: "57",
  JUMPDEST: "5b",
  MCOPY: "5e",
  LOG: (topics: number) => (0xa0 + topics).toString(16),
  RETURN: "f3",
  REVERT: "fd",
  INVALID: "fe",
};

/** Returns 32 bytes of memory from `offset`. */
const returnWord = (offset: number) => push(32) + push(offset) + op.RETURN;

/** SSTORE of `value` into `slot`. */
const store = (slot: number, value: number) => push(value) + push(slot) + op.SSTORE;

/**
 * Called without data, loads slot 2 (the account is then warm), calls itself twice with one byte of
 * data, then loads slot 1; called with data, loads slot 1 and reverts. The revert must take back
 * the warming of the slot, so each load of slot 1 is cold.
 */
function selfCallingProgram(): string {
  const call = push(0) + push(0) + push(1) + push(0) + push(0) + "30" /* ADDRESS */ + "5a" /* GAS */ + "f1" /* CALL */ + op.POP;
  const outer = (destination: number) => op.CALLDATASIZE + push(destination) + op.JUMPI + push(2) + op.SLOAD + op.POP + call + call + push(1) + op.SLOAD + op.POP + op.STOP;
  const inner = op.JUMPDEST + push(1) + op.SLOAD + op.POP + push(0) + push(0) + op.REVERT;
  const destination = outer(0xff).length / 2; // one-byte destinations: the width does not change
  return outer(destination) + inner;
}

/**
 * Without call data it STATICCALLs itself with a byte of call data and returns the call's success
 * flag; with call data it emits a log, which a static frame refuses.
 */
function staticallyLoggingProgram(): string {
  const staticCall = push(0) + push(0) + push(1) + push(0) + "30" /* ADDRESS */ + "5a" /* GAS */ + "fa" /* STATICCALL */;
  const outer = (destination: number) => op.CALLDATASIZE + push(destination) + op.JUMPI + staticCall + push(0) + op.MSTORE + returnWord(0);
  const inner = op.JUMPDEST + push(0) + push(0) + op.LOG(0) + op.STOP;
  const destination = outer(0xff).length / 2;
  return outer(destination) + inner;
}

/** `deployed`: the code is also the account's, so the program can call itself. */
const programs: Record<string, { code: string; data?: string; gas?: bigint; storage?: [slot: number, value: number][]; deployed?: boolean }> = {
  "EXP across exponent widths": {
    code: [0n, 1n, 255n, 256n, 1n << 255n, maxWord].map((exponent, index) => push(exponent) + push(3) + op.EXP + push(index * 32) + op.MSTORE).join("") + push(192) + push(0) + op.RETURN,
  },
  "memory: stores, loads, a byte, hashes and a copy": {
    code:
      push(maxWord) + push(0) + op.MSTORE +
      push(0x1234) + push(31) + op.MSTORE +
      push(0xabcd) + push(1000) + op.MSTORE8 +
      push(990) + op.MLOAD + push(64) + op.MSTORE +
      push(0) + push(0) + op.KECCAK256 + push(96) + op.MSTORE +
      push(100) + push(3) + op.KECCAK256 + push(128) + op.MSTORE +
      push(64) + push(0) + push(2000) + op.MCOPY +
      push(256) + push(0) + op.RETURN,
  },
  "calldata at its edges": {
    data: "0x" + "11".repeat(40),
    code:
      push(0) + op.CALLDATALOAD + push(0) + op.MSTORE +
      push(39) + op.CALLDATALOAD + push(32) + op.MSTORE +
      push(40) + op.CALLDATALOAD + push(64) + op.MSTORE +
      push(maxWord) + op.CALLDATALOAD + push(96) + op.MSTORE +
      push(50) + push(10) + push(128) + op.CALLDATACOPY +
      op.CALLDATASIZE + push(0) + push(300) + op.CODECOPY +
      push(400) + push(0) + op.RETURN,
  },
  "storage: values of every width, zero, overwrite": {
    code:
      push(1) + push(0) + op.SSTORE +
      push(maxWord) + push(maxWord) + op.SSTORE +
      push(0x0100) + push(7) + op.SSTORE +
      push(0) + push(7) + op.SSTORE +
      push(0) + op.SLOAD + push(0) + op.MSTORE +
      push(maxWord) + op.SLOAD + push(32) + op.MSTORE +
      push(7) + op.SLOAD + push(64) + op.MSTORE +
      push(8) + op.SLOAD + push(96) + op.MSTORE +
      push(128) + push(0) + op.RETURN,
  },
  "storage gas and refunds of every EIP-2200 case, cold and warm, over stored values": {
    storage: [
      [1, 5],
      [2, 5],
      [4, 5],
    ],
    code:
      store(1, 5) + store(1, 5) + // no-op, cold then warm
      store(2, 0) + store(2, 7) + store(2, 5) + // delete, recreate, back to the original
      store(3, 9) + store(3, 0) + // create, back to the original zero
      store(4, 6) + store(4, 0) + store(4, 6) + // write, delete a dirty slot, recreate it
      op.STOP,
  },
  "loads of cold and warm slots, and a store after a load": {
    storage: [[1, 5]],
    code: push(1) + op.SLOAD + op.POP + push(1) + op.SLOAD + op.POP + push(2) + op.SLOAD + op.POP + store(2, 3) + push(2) + op.SLOAD + push(0) + op.MSTORE + returnWord(0),
  },
  "slots warmed in a reverted call are cold again": { code: selfCallingProgram(), deployed: true },
  "the gas left after a run of fixed-fee steps": { code: push(1) + push(2) + "01" + push(3) + "02" + op.POP + "5a" /* GAS */ + push(0) + op.MSTORE + returnWord(0) },
  "out of gas within a run of fixed-fee steps": { code: (push(1) + op.POP).repeat(20) + op.STOP, gas: 52n },
  "just enough gas for a run of fixed-fee steps": { code: (push(1) + op.POP).repeat(20) + op.STOP, gas: 100n },
  "a run of fixed-fee steps ending in a stack underflow": { code: push(1) + push(2) + "01" + "01" + op.STOP },
  "code that ends after fixed-fee steps, without STOP": { code: push(1) + push(2) + "01" },
  "a store with no more than the sentry's gas left": { code: store(0, 1) + op.STOP, gas: 2_306n },
  "a store with just more than the sentry's gas left": { code: store(0, 1) + op.STOP, gas: 2_307n },
  "logs with zero to four topics": {
    code: [0, 1, 2, 3, 4].map((topics) => Array.from({ length: topics }, (_, index) => push(index + 1)).join("") + push(topics * 10) + push(topics) + op.LOG(topics)).join("") + op.STOP,
  },
  "logs with topics of zero, of one byte and of full width, and data from memory": {
    code:
      push(0xbeef) + push(0) + op.MSTORE +
      push(2n ** 256n - 1n) + push(0) + push(0xff) + push(2n ** 255n) + push(7) + push(25) + op.LOG(4) +
      push(0) + push(0) + push(0) + op.LOG(1) +
      op.STOP,
  },
  "a log in a stack underflow": { code: push(0) + push(0) + op.LOG(1) },
  "a log in a static call fails the call": { code: staticallyLoggingProgram(), deployed: true },
  "a loop with jumps": {
    // counter = 20; do { counter -= 1; store counter at counter } while (counter != 0)
    code: push(20) + op.JUMPDEST + push(1) + "90" + "03" + "80" + "80" + op.SSTORE + "80" + push(2) + op.JUMPI + returnWord(0),
  },
  "revert with data": { code: push(0xdead) + push(0) + op.MSTORE + push(32) + push(0) + op.REVERT },
  "out of gas in memory expansion": { code: push(1) + push(1 << 22) + op.MSTORE + op.STOP, gas: 100_000n },
  "return data copied past its end": { code: push(1) + push(0) + push(0) + op.RETURNDATACOPY + op.STOP },
  "an invalid opcode": { code: push(1) + op.INVALID },
  "pushes of every width": {
    code:
      Array.from({ length: 32 }, (_, index) => {
        const width = index + 1;
        return pushBytes(Uint8Array.from({ length: width }, (_, byte) => byte + width)) + push(index * 32) + op.MSTORE;
      }).join("") + push(32 * 32) + push(0) + op.RETURN,
  },
  "a push cut short by the end of the code": { code: push(7) + "7f" + "ab".repeat(10) },
  "a stack underflow": { code: op.POP },
  "a jump to a non-destination": { code: push(3) + op.JUMP + op.STOP + op.STOP },
  "a conditional jump not taken carries on, whatever its destination": { code: push(0) + push(0xffff) + op.JUMPI + push(0) + push(2) + op.JUMPI + returnWord(0) },
  "a conditional jump taken to a non-destination": { code: push(1) + push(3) + op.JUMPI + op.STOP + op.STOP },
  "jumps past the end of the code": { code: push(1n << 200n) + op.JUMP },
  "a conditional jump with one operand": { code: push(1) + op.JUMPI },
  "a jump with no operand": { code: op.JUMP },
};

/** An operation of the random programs: its code and what it takes from and leaves on the stack. */
interface RandomOperation {
  takes: number;
  leaves: number;
  code: (next: () => number) => string;
}

const plainOperation = (opcode: number, takes: number, leaves: number): RandomOperation => ({ takes, leaves, code: () => hexByte(opcode) });
/** An opcode whose memory or storage operand (pushed first, on top) stays small. */
const boundedOperation = (opcode: number, takes: number, leaves: number, ...limits: number[]): RandomOperation => ({
  takes,
  leaves,
  code: (next) => [...limits].reverse().map((limit) => push(next() % limit)).join("") + hexByte(opcode),
});

/**
 * What the random programs are made of: arithmetic, comparisons and bit operations on random
 * words, the environment's constants, the gas left, memory, hashing, storage and transient
 * storage on a few slots, logs, duplicates and swaps, and pushes of every width.
 */
const randomOperations: RandomOperation[] = [
  ...range(0x01, 0x07).map((opcode) => plainOperation(opcode, 2, 1)),
  plainOperation(0x08, 3, 1), // ADDMOD
  plainOperation(0x09, 3, 1), // MULMOD
  plainOperation(0x0a, 2, 1), // EXP
  plainOperation(0x0b, 2, 1), // SIGNEXTEND
  ...range(0x10, 0x14).map((opcode) => plainOperation(opcode, 2, 1)),
  plainOperation(0x15, 1, 1), // ISZERO
  ...range(0x16, 0x18).map((opcode) => plainOperation(opcode, 2, 1)),
  plainOperation(0x19, 1, 1), // NOT
  ...range(0x1a, 0x1d).map((opcode) => plainOperation(opcode, 2, 1)),
  ...[0x30, 0x33, 0x34, 0x36, 0x38, 0x3a, 0x3d, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x58, 0x59, 0x5a].map((opcode) => plainOperation(opcode, 0, 1)),
  plainOperation(0x50, 1, 0), // POP
  plainOperation(0x5b, 0, 0), // JUMPDEST
  boundedOperation(0x35, 0, 1, 64), // CALLDATALOAD
  boundedOperation(0x51, 0, 1, 2048), // MLOAD
  boundedOperation(0x52, 1, 0, 2048), // MSTORE
  boundedOperation(0x53, 1, 0, 2048), // MSTORE8
  boundedOperation(0x20, 0, 1, 512, 96), // KECCAK256 of offset, length
  boundedOperation(0x54, 0, 1, 6), // SLOAD
  boundedOperation(0x55, 1, 0, 6), // SSTORE
  boundedOperation(0x5c, 0, 1, 4), // TLOAD
  boundedOperation(0x5d, 1, 0, 4), // TSTORE
  ...[0, 1, 2].map((topics): RandomOperation => ({ takes: topics, leaves: 0, code: (next) => push(next() % 64) + push(next() % 512) + hexByte(0xa0 + topics) })),
  ...range(1, 16).map((depth): RandomOperation => ({ takes: depth, leaves: depth + 1, code: () => hexByte(0x7f + depth) })),
  ...range(1, 16).map((depth): RandomOperation => ({ takes: depth + 1, leaves: depth + 1, code: () => hexByte(0x8f + depth) })),
  ...range(0, 32).map((width): RandomOperation => ({ takes: 0, leaves: 1, code: (next) => pushBytes(randomBytes(next, width)) })),
];

function range(first: number, last: number): number[] {
  return Array.from({ length: last - first + 1 }, (_, index) => first + index);
}

/**
 * A program of `length` operations, each taking no more than the stack holds (so most run to
 * their end), then RETURN of 96 bytes of memory, STOP or REVERT.
 */
function randomProgram(next: () => number, length: number): string {
  let height = 0;
  let code = "";
  while (length-- > 0) {
    const usable = randomOperations.filter((operation) => operation.takes <= height && height - operation.takes + operation.leaves <= 1024);
    const operation = usable[next() % usable.length]!;
    code += operation.code(next);
    height += operation.leaves - operation.takes;
  }
  const ending = next() % 3;
  return code + (ending === 0 ? push(96) + push(0) + op.RETURN : ending === 1 ? op.STOP : push(32) + push(0) + op.REVERT);
}

/** What a tracer reads of each step event (everything but the state manager and account objects). */
function recordSteps(events: { on(name: "step", listener: (step: InterpreterStep) => void): void }): unknown[] {
  const steps: unknown[] = [];
  events.on("step", (step) => {
    steps.push({
      pc: step.pc,
      op: step.opcode.name,
      fee: step.opcode.fee,
      dynamicFee: step.opcode.dynamicFee,
      gasLeft: step.gasLeft,
      gasRefund: step.gasRefund,
      depth: step.depth,
      address: step.address.toString(),
      stack: step.stack.map((word) => word.toString(16)),
      memory: bytesToHex(step.memory),
      memoryWordCount: step.memoryWordCount,
      error: step.error === undefined ? undefined : bytesToHex(step.error),
    });
  });
  return steps;
}

describe("execution/interpreterFastPaths", () => {
  it("converts words like @ethereumjs/util", () => {
    const random = seededRandom(7);
    const next = () => random() / 2 ** 32;
    const words = [0n, 1n, 255n, 256n, 1n << 64n, (1n << 64n) - 1n, 1n << 255n, maxWord];
    for (let index = 0; index < 500; index++) words.push(randomWord(next));
    for (const word of words) {
      const padded = setLengthLeft(bigIntToBytes(word), 32);
      expect(bytesToHex(wordToBytes32(word)), `word ${word}`).to.equal(bytesToHex(padded));
      expect(bytesToHex(wordToMinimalBytes(word)), `minimal ${word}`).to.equal(word === 0n ? "0x00" : bytesToHex(bigIntToBytes(word)));
      expect(bytesToWord(padded)).to.equal(word);
      const minimal = bigIntToBytes(word);
      expect(bytesToWord(minimal)).to.equal(bytesToBigInt(minimal));
    }
  });

  it("random programs end the same on the node's engine and on the package's loop, with any gas", async () => {
    const common = createExecutionRules(33n);
    const state = new StateDatabase(createMemoryStore(), common).at(KECCAK256_RLP);
    const engine = await createExecutionEngine(common, state, async () => undefined);
    const plain = await createVM({ common: new Common({ chain: { ...Mainnet, chainId: 33 }, hardfork: executionHardfork, eips: [...extraEips] }) });
    const random = seededRandom(2026);
    const outcomes = new Map<string, number>();
    for (let index = 0; index < 150; index++) {
      const code = Buffer.from(randomProgram(random, 20 + (random() % 120)), "hex");
      // Mostly enough gas; otherwise a limit that runs out somewhere in the program.
      const gasLimit = random() % 4 === 0 ? BigInt(random() % 30_000) : 1_000_000n;
      const to = new Address(setLengthLeft(bigIntToBytes(BigInt(index + 1)), 20));
      const data = randomBytes(random, random() % 70);
      for (const manager of [state, plain.stateManager]) await manager.putAccount(to, new Account());
      const runBoth = async (limit: bigint) => {
        const options = { code, data, gasLimit: limit, to };
        const fast = await engine.vm.evm.runCode(options);
        const reference = await plain.evm.runCode(options);
        const label = `program ${index} (${code.toString("hex")}, gas ${limit})`;
        expect(fast.exceptionError?.error, `${label}: error`).to.equal(reference.exceptionError?.error);
        expect(fast.executionGasUsed, `${label}: gas`).to.equal(reference.executionGasUsed);
        expect(bytesToHex(fast.returnValue), `${label}: output`).to.equal(bytesToHex(reference.returnValue));
        expect(fast.gasRefund, `${label}: refund`).to.equal(reference.gasRefund);
        expect((fast.logs ?? []).length, `${label}: logs`).to.equal((reference.logs ?? []).length);
        const outcome = reference.exceptionError?.error ?? "success";
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        return reference;
      };
      const first = await runBoth(gasLimit);
      // At the edge: exactly the gas the run used, and one less.
      if (first.exceptionError === undefined || first.exceptionError.error === "revert") {
        await runBoth(first.executionGasUsed);
        if (first.executionGasUsed > 0n) await runBoth(first.executionGasUsed - 1n);
      }
    }
    // The programs reach the ends that matter: success, a revert and running out of gas.
    expect([...outcomes.keys()]).to.include.members(["success", "revert", "out of gas"]);
  });

  describe("programs end the same on the node's engine and on the package's loop", () => {
    for (const [name, program] of Object.entries(programs)) {
      it(name, async () => {
        const to = new Address(new Uint8Array(20).fill(0x42));
        const options = { code: Buffer.from(program.code, "hex"), data: program.data === undefined ? undefined : Buffer.from(program.data.slice(2), "hex"), gasLimit: program.gas ?? 1_000_000n, to };

        const common = createExecutionRules(33n);
        const state = new StateDatabase(createMemoryStore(), common).at(KECCAK256_RLP);
        const engine = await createExecutionEngine(common, state, async () => undefined);
        await state.putAccount(to, new Account());
        const plain = await createVM({ common: new Common({ chain: { ...Mainnet, chainId: 33 }, hardfork: executionHardfork, eips: [...extraEips] }) });
        await plain.stateManager.putAccount(to, new Account());
        if (program.deployed === true) for (const manager of [state, plain.stateManager]) await manager.putCode(to, options.code);
        for (const [slot, value] of program.storage ?? []) {
          for (const manager of [state, plain.stateManager]) await manager.putStorage(to, setLengthLeft(Uint8Array.of(slot), 32), Uint8Array.of(value));
        }

        // Run untraced, then traced: the steps a tracer sees must be the package's too.
        const fast = await engine.vm.evm.runCode(options);
        const reference = await plain.evm.runCode(options);
        const fastSteps = recordSteps(engine.vm.evm.events!);
        const referenceSteps = recordSteps(plain.evm.events!);
        const [fastTraced, referenceTraced] = [await engine.vm.evm.runCode(options), await plain.evm.runCode(options)];
        expect(fastSteps.length, "steps").to.be.greaterThan(0);
        expect(fastSteps).to.deep.equal(referenceSteps);
        expect(fastTraced.executionGasUsed, "traced gas").to.equal(referenceTraced.executionGasUsed);

        expect(fast.exceptionError?.error, "error").to.equal(reference.exceptionError?.error);
        expect(fast.executionGasUsed, "gas").to.equal(reference.executionGasUsed);
        expect(bytesToHex(fast.returnValue), "output").to.equal(bytesToHex(reference.returnValue));
        const logs = (result: typeof fast) => (result.logs ?? []).map(([address, topics, data]) => [bytesToHex(address), topics.map(bytesToHex), bytesToHex(data)]);
        expect(logs(fast), "logs").to.deep.equal(logs(reference));
        expect(fast.gasRefund, "refund").to.equal(reference.gasRefund);
      });
    }
  });
});
