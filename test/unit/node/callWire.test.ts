// The call worker's packed form of plain calls and their results: what is read back is what was
// written, at the edges of each field; what does not fit goes in the object form.
import { expect } from "chai";
import type { MessageCall, MessageCallResult } from "../../../src/execution/messageCall.js";
import { isPlainCall, isPlainResult, PlainCallWriter, PlainResultWriter, readPlainCalls, readPlainResults } from "../../../src/node/callWire.js";

const largest = (1n << 256n) - 1n;
const bytes = (length: number, fill: number) => new Uint8Array(length).fill(fill);

describe("node/callWire: plain calls and results packed as bytes", () => {
  const calls: MessageCall[] = [
    { from: bytes(20, 0), to: bytes(20, 0xff), gasLimit: 0n, gasPrice: 0n, value: 0n, data: new Uint8Array(0) },
    { from: bytes(20, 1), to: undefined, gasLimit: 0xffn, gasPrice: 0x100n, value: 0xffff_ffffn, data: bytes(1, 7) },
    { from: bytes(20, 2), to: bytes(20, 3), gasLimit: 0x1_0000_0000n, gasPrice: 0xff_ffff_ffff_ffffn, value: largest, data: bytes(70_000, 0xab) },
    { from: bytes(20, 4), to: bytes(20, 5), gasLimit: 50_000_000n, gasPrice: 1n, value: 1n << 200n, data: Uint8Array.from([0x70, 0xa0, 0x82, 0x31]) },
  ];

  it("reads back each call with its id and block index, in order", () => {
    const writer = new PlainCallWriter();
    expect(writer.empty).to.equal(true);
    calls.forEach((call, index) => writer.add(1_000 + index, index % 2, call));
    expect(writer.empty).to.equal(false);
    const read: [number, number, MessageCall][] = [];
    readPlainCalls(writer.take(), (id, blockIndex, call) => read.push([id, blockIndex, call]));
    expect(read).to.deep.equal(calls.map((call, index) => [1_000 + index, index % 2, call]));
    expect(writer.empty, "taken").to.equal(true);
  });

  it("takes only calls without overrides or access lists, with numbers of at most 32 bytes", () => {
    const call = calls[0]!;
    expect(isPlainCall(call, undefined)).to.equal(true);
    expect(isPlainCall(call, [])).to.equal(false);
    expect(isPlainCall({ ...call, accessList: [] }, undefined)).to.equal(false);
    expect(isPlainCall({ ...call, value: largest + 1n }, undefined)).to.equal(false);
    expect(isPlainCall({ ...call, gasPrice: -1n }, undefined)).to.equal(false);
    expect(isPlainCall({ ...call, from: bytes(19, 0) }, undefined)).to.equal(false);
  });

  const results: Extract<MessageCallResult, { kind: "success" | "revert" }>[] = [
    { kind: "success", returnData: bytes(32, 9), gasUsed: 24_255n, gasConsumed: 24_255n, slack: undefined, framesOutOfGas: undefined },
    { kind: "revert", returnData: new Uint8Array(0), gasUsed: 0n, gasConsumed: largest, slack: undefined, framesOutOfGas: undefined },
    { kind: "success", returnData: bytes(100_000, 1), gasUsed: 1n << 40n, gasConsumed: (1n << 40n) + 5n, slack: undefined, framesOutOfGas: undefined },
  ];

  it("reads back each result with the call service's fields", () => {
    const writer = new PlainResultWriter();
    results.forEach((result, index) => writer.add(index + 1, result));
    const read: [number, MessageCallResult][] = [];
    readPlainResults(writer.take(), (id, result) => read.push([id, result]));
    expect(read).to.deep.equal(results.map((result, index) => [index + 1, result]));
    expect(Object.keys(read[0]![1])).to.deep.equal(["kind", "returnData", "gasUsed", "gasConsumed", "slack", "framesOutOfGas"]);
  });

  it("leaves halts, measured runs, estimates and replays to the object form", () => {
    expect(isPlainResult(results[0])).to.equal(true);
    expect(isPlainResult({ kind: "halt", reason: "out of gas", gasUsed: 1n, gasConsumed: 1n })).to.equal(false);
    expect(isPlainResult({ ...results[0]!, slack: { readsGasLeft: false, nestedFrames: false } })).to.equal(false);
    expect(isPlainResult({ ...results[0]!, framesOutOfGas: 0 })).to.equal(false);
    expect(isPlainResult(21_000n)).to.equal(false);
    expect(isPlainResult([])).to.equal(false);
    expect(isPlainResult(null)).to.equal(false);
  });
});
