// Frames take their memory and stack from a pool (execution/messageFrames.ts): a frame must never
// see what an earlier frame left there, at the top level or nested, nor lose what its caller holds.
// The contracts are raw bytecode put in place by state overrides.
import { expect } from "chai";
import { Wallet, getBytes, keccak256, toUtf8Bytes } from "ethers";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { createLogger } from "../../../src/common/logger.js";
import { createExecutionBlock, createExecutionEngine, type ExecutionEngine } from "../../../src/execution/engine.js";
import { framesArePooled } from "../../../src/execution/messageFrames.js";
import { runMessageCall, runMessageCallAsTransaction, type MessageCallResult, type StateOverrides } from "../../../src/execution/messageCall.js";
import { openChainServices, type ChainServices } from "../../../src/node/chainServices.js";
import { defaultNodeOptions } from "../../../src/node/options.js";

const ones = "ff".repeat(32);
const address = (last: number) => getBytes(`0x${last.toString(16).padStart(40, "0")}`);
const writer = address(0x1001);
const reader = address(0x1002);
const popper = address(0x1003);
const caller = address(0x1004);
const hexOf = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const push20 = (bytes: Uint8Array) => `73${hexOf(bytes)}`;
/** CALL(gas, to, 0, 0, 0, retOffset, retSize), its success popped. */
const callOf = (to: Uint8Array, retOffset: string, retSize: string) => `${retSize}${retOffset}600060006000${push20(to)}5af150`;

/** Writes ones at memory 0, 0x20, 0x1000 and 0x1fe0 (8 KiB in all), leaves four words on the stack and stops. */
const writerCode = `7f${ones}8060005280602052806110005280611fe05260016002600300`;
/** Returns memory [0, 0x2000) without writing to it. */
const readerCode = "6120006000f3";
/** POP on an empty stack. */
const popperCode = "50";
/** Writes ones at memory 0, calls the writer, calls the reader into memory 0x20, returns memory [0, 0x2020). */
const callerCode = `7f${ones}600052${callOf(writer, "6000", "6000")}${callOf(reader, "6020", "612000")}6120206000f3`;

const overrides: StateOverrides = [
  [writer, { code: getBytes(`0x${writerCode}`) }],
  [reader, { code: getBytes(`0x${readerCode}`) }],
  [popper, { code: getBytes(`0x${popperCode}`) }],
  [caller, { code: getBytes(`0x${callerCode}`) }],
];

describe("execution/messageFrames: pooled memory and stacks", function () {
  this.timeout(60_000);
  let services: ChainServices;
  let engine: ExecutionEngine;
  let block: ReturnType<typeof createExecutionBlock>;
  const from = getBytes(new Wallet(keccak256(toUtf8Bytes("pool"))).address);

  before(async () => {
    services = await openChainServices(findNetworkProfile(33)!, { dataDir: undefined, inMemory: true }, { ...defaultNodeOptions.chain }, createLogger("error"));
    const head = services.chain.head;
    const fields = head.header.fields;
    engine = await createExecutionEngine(services.common, services.state.overlayAt(fields.stateRoot), async () => undefined);
    block = createExecutionBlock(engine.vm.common, { number: head.number, coinbase: fields.coinbase, timestamp: fields.timestamp, gasLimit: fields.gasLimit, baseFee: 0n, difficulty: fields.difficulty });
  });
  after(() => services?.close());

  const run = (to: Uint8Array, asTransaction = false): Promise<MessageCallResult> =>
    (asTransaction ? runMessageCallAsTransaction : runMessageCall)(engine, block, { from, to, gasLimit: 3_000_000n, gasPrice: 0n, value: 0n, data: new Uint8Array(0) }, overrides, undefined);

  it("a call reading memory after one that wrote it sees zeros", async () => {
    for (let round = 0; round < 3; round++) {
      expect((await run(writer)).kind).to.equal("success");
      expect(framesArePooled(), "frames take their parts from the pool").to.equal(true);
      const read = await run(reader, round === 2);
      expect(read.kind).to.equal("success");
      const returned = (read as { returnData: Uint8Array }).returnData;
      expect(returned.length).to.equal(0x2000);
      expect(returned.every((byte) => byte === 0)).to.equal(true);
    }
  });

  it("a call popping an empty stack after one that left words there halts on the underflow", async () => {
    expect((await run(writer)).kind).to.equal("success");
    const popped = await run(popper);
    expect(popped).to.include({ kind: "halt", reason: "stack underflow" });
  });

  it("nested: a callee after a sibling that wrote memory sees zeros, and the caller keeps its own memory", async () => {
    for (let round = 0; round < 2; round++) {
      const result = await run(caller, round === 1);
      expect(result.kind).to.equal("success");
      const returned = (result as { returnData: Uint8Array }).returnData;
      expect(returned.length).to.equal(0x2020);
      expect(hexOf(returned.subarray(0, 32))).to.equal(ones);
      expect(returned.subarray(32).every((byte) => byte === 0)).to.equal(true);
    }
  });
});
