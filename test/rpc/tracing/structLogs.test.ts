// debug_traceTransaction and debug_traceBlockByHash with the default struct-log tracer: every step of
// a hand-assembled contract against a hand-computed trace in geth's format (Shanghai, EIP-2929
// cold/warm costs; compact stack words, storage at SLOAD and SSTORE only, memory when enabled), the
// switches that add or drop members, the step limit, and old blocks.
import { expect } from "chai";
import { JsonRpcProvider, NonceManager, Wallet, keccak256, toUtf8Bytes, type TransactionResponse } from "ethers";
import { postRaw } from "../../helpers/http.js";
import { exchange } from "../../helpers/rawHttp.js";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
const word = (value: number) => value.toString(16).padStart(64, "0");

// Runtime: PUSH1 0x2a PUSH1 0 MSTORE | PUSH1 0x2a PUSH1 0 SSTORE | PUSH1 0 SLOAD PUSH1 1 ADD | PUSH1 1 SSTORE | STOP
const runtime = "602a600052" + "602a600055" + "600054600101" + "600155" + "00";
// Init: CODECOPY the 20-byte runtime (at offset 12) to memory and RETURN it.
const initCode = "0x6014600c60003960146000f3" + runtime;

/** op, pc, gasCost and the stack before the step, computed by hand. */
const expectedSteps: [string, number, number, number[]][] = [
  ["PUSH1", 0, 3, []],
  ["PUSH1", 2, 3, [0x2a]],
  ["MSTORE", 4, 6, [0x2a, 0]], // 3 + one word of memory expansion
  ["PUSH1", 5, 3, []],
  ["PUSH1", 7, 3, [0x2a]],
  ["SSTORE", 9, 22_100, [0x2a, 0]], // cold slot (2,100) + zero to non-zero (20,000)
  ["PUSH1", 10, 3, []],
  ["SLOAD", 12, 100, [0]], // warm: the SSTORE above touched it
  ["PUSH1", 13, 3, [0x2a]],
  ["ADD", 15, 3, [0x2a, 1]],
  ["PUSH1", 16, 3, [0x2b]],
  ["SSTORE", 18, 22_100, [0x2b, 1]],
  ["STOP", 19, 0, []],
];
const executionGas = expectedSteps.reduce((sum, [, , cost]) => sum + cost, 0);
const gasLimit = 100_000;
/** Storage geth shows at the SLOAD and SSTORE steps, by step: the slots seen so far with the one the step loads or stores. */
const expectedStorage: Record<number, Record<string, string>> = {
  5: { [word(0)]: word(0x2a) },
  7: { [word(0)]: word(0x2a) },
  11: { [word(0)]: word(0x2a), [word(1)]: word(0x2b) },
};

/** The whole steps as geth's struct logger writes them by default (stack and storage, no memory), computed by hand. */
function gethSteps(): Record<string, unknown>[] {
  let gas = gasLimit - 21_000;
  return expectedSteps.map(([op, pc, gasCost, stack], index) => {
    const step: Record<string, unknown> = { pc, op, gas, gasCost, depth: 1, stack: stack.map((item) => `0x${item.toString(16)}`) };
    if (expectedStorage[index] !== undefined) step.storage = expectedStorage[index];
    gas -= gasCost;
    return step;
  });
}

describe("tracing: struct logs", function () {
  this.timeout(60_000);
  let node: TestNode;
  let signer: NonceManager;
  let contract: string;
  let traced: TransactionResponse;

  before(async () => {
    node = await startTestNode();
    const provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true });
    provider.pollingInterval = 20;
    signer = new NonceManager(new Wallet(cowKey, provider));
    const deployment = await signer.sendTransaction({ data: initCode, gasLimit: 200_000, gasPrice: 0, type: 0 });
    contract = (await deployment.wait())!.contractAddress!.toLowerCase();
    traced = await signer.sendTransaction({ to: contract, gasLimit, gasPrice: 0, type: 0 });
    await traced.wait();
  });
  after(() => node.stop());

  it("charges what the hand-computed steps add up to", async () => {
    const receipt = await node.client.eth_getTransactionReceipt(traced.hash);
    expect(BigInt(receipt!.gasUsed)).to.equal(BigInt(21_000 + executionGas));
  });

  it("lists every step as geth does: pc, op, gas, gasCost, depth, compact stack, storage at SLOAD and SSTORE", async () => {
    const trace = await node.client.debug_traceTransaction(traced.hash);
    expectValidResult("debug_traceTransaction", trace);
    if (trace === null || !("structLogs" in trace)) return expect.fail("no struct-log trace");
    expect(trace.structLogs).to.deep.equal(gethSteps());
    // The step text itself: geth's members in geth's order.
    const { text } = await postRaw(node.url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "debug_traceTransaction", params: [traced.hash] }));
    expect(text).to.contain('{"pc":9,"op":"SSTORE","gas":78982,"gasCost":22100,"depth":1,"stack":["0x2a","0x0"],"storage":{"0000000000000000000000000000000000000000000000000000000000000000":"000000000000000000000000000000000000000000000000000000000000002a"}}');
    expect(trace).to.include({ gas: 21_000 + executionGas, failed: false, returnValue: "" });
    expect(trace.contractAddress).to.equal(contract.slice(2));
    expect(trace.error).to.equal("");
    expect(trace.reverted).to.equal(false);
    expect(trace.result).to.equal("");
    expect(trace.initStorage).to.deep.equal({});
    expect(trace.currentStorage).to.deep.equal({ [word(0)]: word(0x2a), [word(1)]: word(0x2b) });
    expect(trace.storageSize).to.equal(2);
  });

  it("adds memory with enableMemory (or disableMemory: false), where memory is not empty; disableMemory wins", async () => {
    const stepsWith = async (options: Record<string, unknown>) => {
      const trace = await node.client.debug_traceTransaction(traced.hash, options);
      expectValidResult("debug_traceTransaction", trace);
      return (trace as unknown as { structLogs: Record<string, unknown>[] }).structLogs;
    };
    // Memory as it is before each step: the MSTORE's word appears from the step after it.
    const withMemory = gethSteps().map((step, index) => (index < 3 ? step : { ...step, memory: [word(0x2a)] }));
    expect(await stepsWith({ enableMemory: true })).to.deep.equal(withMemory);
    expect(await stepsWith({ tracerConfig: { enableMemory: "true" } })).to.deep.equal(withMemory);
    expect(await stepsWith({ disableMemory: false })).to.deep.equal(withMemory);
    expect(await stepsWith({ enableMemory: true, disableMemory: true })).to.deep.equal(gethSteps());
    expect(await stepsWith({ enableMemory: true, tracerConfig: { disableMemory: true } })).to.deep.equal(gethSteps());
  });

  it("drops stack and storage when asked, at the top level or in tracerConfig, and keeps the first `limit` steps", async () => {
    const bare = await node.client.debug_traceTransaction(traced.hash, { disableStack: true, disableStorage: true });
    expectValidResult("debug_traceTransaction", bare);
    const bareSteps = (bare as unknown as { structLogs: Record<string, unknown>[] }).structLogs;
    expect(bareSteps).to.have.length(expectedSteps.length);
    for (const step of bareSteps) expect(Object.keys(step)).to.deep.equal(["pc", "op", "gas", "gasCost", "depth"]);
    const configured = await node.client.debug_traceTransaction(traced.hash, { disableStack: false, tracerConfig: { disableStack: true } });
    const steps = (configured as unknown as { structLogs: Record<string, unknown>[] }).structLogs;
    expect(steps[5]).to.not.have.property("stack");
    expect(steps[5]).to.not.have.property("memory");
    expect(steps[5]).to.have.property("storage");
    const limited = await node.client.debug_traceTransaction(traced.hash, { limit: 6 });
    expectValidResult("debug_traceTransaction", limited);
    expect((limited as { structLogs: unknown[] }).structLogs).to.deep.equal(gethSteps().slice(0, 6));
    // The summary still covers the whole transaction.
    expect(limited).to.include({ gas: 21_000 + executionGas, storageSize: 2 });
    expect((await node.client.debug_traceTransaction(traced.hash, { tracerConfig: { limit: 1 } }) as { structLogs: unknown[] }).structLogs).to.have.length(1);
    await expectRpcError(node.client.debug_traceTransaction(traced.hash, { limit: -1 } as never), -32602, /limit/);
    await expectRpcError(node.client.debug_traceTransaction(traced.hash, { limit: "10" } as never), -32602, /limit/);
  });

  it("adds the frame's last return data with enableReturnData, from the step after the call on", async () => {
    const deployRuntime = async (runtimeHex: string) => {
      const length = (runtimeHex.length / 2).toString(16).padStart(2, "0");
      const deployment = await signer.sendTransaction({ data: `0x60${length}600c60003960${length}6000f3${runtimeHex}`, gasLimit: 200_000, gasPrice: 0, type: 0 });
      return (await deployment.wait())!.contractAddress!.toLowerCase();
    };
    // The child returns the word 0x2a; the parent calls it (keeping none of the output), pops the flag and stops.
    const child = await deployRuntime("602a60005260206000f3");
    const parent = await deployRuntime(`60006000600060006000${"73" + child.slice(2)}5af15000`);
    const run = await signer.sendTransaction({ to: parent, gasLimit, gasPrice: 0, type: 0 });
    await run.wait();
    const trace = (await node.client.debug_traceTransaction(run.hash, { enableReturnData: true, disableStack: true, disableStorage: true })) as { structLogs: { op: string; depth: number; returnData?: string }[] };
    expectValidResult("debug_traceTransaction", trace);
    const shown = trace.structLogs.map((step) => [step.op, step.depth, step.returnData]);
    expect(shown.slice(-2)).to.deep.equal([
      ["POP", 1, `0x${word(0x2a)}`],
      ["STOP", 1, `0x${word(0x2a)}`],
    ]);
    expect(shown.slice(0, -2).every(([, , returnData]) => returnData === undefined)).to.equal(true);
    const plain = (await node.client.debug_traceTransaction(run.hash)) as unknown as { structLogs: Record<string, unknown>[] };
    expect(plain.structLogs.every((step) => !("returnData" in step))).to.equal(true);
  });

  it("lists the hundreds of steps of a loop in order, each step's gas its predecessor's less its cost", async () => {
    // PUSH1 100 | JUMPDEST PUSH1 1 SWAP1 SUB DUP1 PUSH1 2 JUMPI (counter - 1, back while non-zero) | STOP
    const loopRuntime = "6064" + "5b" + "6001" + "90" + "03" + "80" + "6002" + "57" + "00";
    const loopInit = "0x600c600c600039600c6000f3" + loopRuntime;
    const deployment = await signer.sendTransaction({ data: loopInit, gasLimit: 200_000, gasPrice: 0, type: 0 });
    const loop = (await deployment.wait())!.contractAddress!;
    const run = await signer.sendTransaction({ to: loop, gasLimit, gasPrice: 0, type: 0 });
    await run.wait();
    const trace = (await node.client.debug_traceTransaction(run.hash, { disableStorage: true })) as { structLogs: { op: string; pc: number; gas: number; gasCost: number; stack: string[] }[] };
    const steps = trace.structLogs;
    const iteration: [string, number][] = [["JUMPDEST", 2], ["PUSH1", 3], ["SWAP1", 5], ["SUB", 6], ["DUP1", 7], ["PUSH1", 8], ["JUMPI", 10]];
    const expected = [["PUSH1", 0], ...Array.from({ length: 100 }, () => iteration).flat(), ["STOP", 11]];
    expect(steps.map((step) => [step.op, step.pc])).to.deep.equal(expected);
    for (let index = 1; index < steps.length; index++) expect(steps[index]!.gas).to.equal(steps[index - 1]!.gas - steps[index - 1]!.gasCost);
    // The counter on the stack at each JUMPDEST: 100 down to 1.
    expect(steps.filter((step) => step.op === "JUMPDEST").map((step) => Number.parseInt(step.stack[0]!, 16))).to.deep.equal(Array.from({ length: 100 }, (_, round) => 100 - round));
  });

  it("writes a trace of megabytes in parts with the same bytes on every way an answer goes out", async () => {
    // 2,000 rounds of the loop above with a two-byte counter: 14,002 steps, about 1.3 MB with the
    // stack, so answered alone it is written in parts (rpc/partedAnswer.ts), in a batch joined.
    const loopRuntime = "6107d0" + "5b" + "6001" + "90" + "03" + "80" + "6003" + "57" + "00";
    const loopInit = "0x600d600c600039600d6000f3" + loopRuntime;
    const deployment = await signer.sendTransaction({ data: loopInit, gasLimit: 200_000, gasPrice: 0, type: 0 });
    const loop = (await deployment.wait())!.contractAddress!;
    const run = await signer.sendTransaction({ to: loop, gasLimit: 1_000_000, gasPrice: 0, type: 0 });
    await run.wait();
    const request = { jsonrpc: "2.0", id: 1, method: "debug_traceTransaction", params: [run.hash, { disableMemory: true }] };
    const body = JSON.stringify(request);
    // Plain POST path, and node:http's (Connection: close is not plain), and inside a batch.
    const plain = await postRaw(node.url, body);
    const { host } = new URL(node.url);
    const viaHttp = await exchange(node.url, [`POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`], "close");
    const batch = await postRaw(node.url, JSON.stringify([request]));
    const trace = (plain.json as { result: { structLogs: unknown[] } }).result;
    expect(trace.structLogs).to.have.length(14_002);
    expect(plain.text.length).to.be.greaterThan(1_000_000);
    expect(viaHttp.answers).to.have.length(1);
    expect(viaHttp.answers[0]!.body).to.equal(plain.text);
    expect(batch.text).to.equal(`[${plain.text}]`);
    // The object form written by JSON.stringify is the same text.
    expect(plain.text).to.equal(JSON.stringify(plain.json));
    expect(plain.headers.get("content-length")).to.equal(String(Buffer.byteLength(plain.text)));
  });

  it("traces the same way once newer blocks sit on top, and traces the creation", async () => {
    const before = await node.client.debug_traceTransaction(traced.hash, { disableMemory: true });
    await (await signer.sendTransaction({ to: contract, gasLimit, gasPrice: 0, type: 0 })).wait();
    const later = await node.client.debug_traceTransaction(traced.hash, { disableMemory: true });
    expect(later).to.deep.equal(before);
    // Slots already hold what is written: each SSTORE is a no-op (cold slot 2,100 + 100), and the trace shows the values before.
    const third = await signer.sendTransaction({ to: contract, gasLimit, gasPrice: 0, type: 0 });
    await third.wait();
    const again = (await node.client.debug_traceTransaction(third.hash, { disableMemory: true, disableStack: true })) as { initStorage: Record<string, string>; structLogs: { op: string; gasCost: number }[]; storageSize: number };
    expect(again.initStorage).to.deep.equal({ [word(0)]: word(0x2a), [word(1)]: word(0x2b) });
    expect(again.storageSize).to.equal(2);
    expect(again.structLogs.filter((step) => step.op === "SSTORE").map((step) => step.gasCost)).to.deep.equal([2_200, 2_200]);
  });

  it("answers null for an unknown transaction and a summary with no steps for a plain transfer", async () => {
    expect(await node.client.debug_traceTransaction(`0x${"ab".repeat(32)}`)).to.equal(null);
    const transfer = await signer.sendTransaction({ to: "0x00000000000000000000000000000000000000aa", value: 5n, gasPrice: 0, type: 0 });
    await transfer.wait();
    const summary = await node.client.debug_traceTransaction(transfer.hash);
    expectValidResult("debug_traceTransaction", summary);
    expect(summary).to.deep.include({ structLogs: [], gas: 21_000, failed: false, returnValue: "" });
    expect(summary).to.include({ contractAddress: "00000000000000000000000000000000000000aa", error: "", reverted: false, storageSize: 0 });
  });

  it("refuses malformed hashes, unknown tracers and mistyped switches", async () => {
    await expectRpcError(node.client.debug_traceTransaction("0x1234"), -32602, /argument 0/);
    await expectRpcError(node.client.debug_traceTransaction(traced.hash, { tracer: "prestateTracer" }), -32602, 'invalid argument 1: field tracer: unknown tracer "prestateTracer": use structLogTracer (or rskTracer) or callTracer');
    await expectRpcError(node.client.debug_traceTransaction(traced.hash, { disableStack: "yes" } as never), -32602, /^invalid argument 1: field disableStack/);
    await expectRpcError(node.client.debug_traceTransaction(traced.hash, { disableStack: "yes" } as never), -32602, /disableStack/);
    await expectRpcError(node.client.debug_traceBlockByHash("latest" as never), -32602, /argument 0/);
    await expectRpcError(node.client.trace_transaction("0xzz" as never), -32602, /argument 0/);
  });

  it("traces a block by hash: one trace per transaction; null for an unknown block", async () => {
    const receipt = await node.client.eth_getTransactionReceipt(traced.hash);
    const traces = await node.client.debug_traceBlockByHash(receipt!.blockHash, { disableStack: true });
    expectValidResult("debug_traceBlockByHash", traces);
    expect(traces).to.have.length(1);
    expect((traces as { structLogs: unknown[] }[])[0]!.structLogs).to.have.length(expectedSteps.length);
    expect(await node.client.debug_traceBlockByHash(`0x${"cd".repeat(32)}`)).to.equal(null);
    const genesis = await node.client.eth_getBlockByNumber("0x0", false);
    expect(await node.client.debug_traceBlockByHash(genesis!.hash!)).to.deep.equal([]);
  });
});
