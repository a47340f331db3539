// callTracer and flat traces on small contracts: a three-level call chain whose middle level
// reverts, a CREATE2 and a self-destruct, checked against the expected trees; each traced
// transaction's gas is the receipt's (the replay reproduces the block).
import { expect } from "chai";
import { Contract, ContractFactory, Interface, JsonRpcProvider, NonceManager, Wallet, getCreate2Address, keccak256, toUtf8Bytes, zeroPadValue, type ContractTransactionResponse } from "ethers";
import type { CallFrame, FlatTrace } from "../../../generated/types.js";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { compileFixture, type CompiledContract } from "../../helpers/solidity.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const heir = "0x00000000000000000000000000000000000000be";

describe("tracing: call trees and flat traces", function () {
  this.timeout(90_000);
  let node: TestNode;
  let signer: NonceManager;
  const compiled: Record<string, CompiledContract> = {};
  const address: Record<string, string> = {};
  const iface = (name: string) => new Interface(compiled[name]!.abi as never);

  async function deploy(name: string, value = 0n): Promise<Contract> {
    const factory = new ContractFactory(compiled[name]!.abi as never, compiled[name]!.bytecode, signer);
    const contract = (await factory.deploy({ gasLimit: 3_000_000n, gasPrice: 0n, type: 0, value })) as Contract;
    await contract.waitForDeployment();
    address[name] = (await contract.getAddress()).toLowerCase();
    return contract;
  }

  async function send(contract: Contract, method: string, args: unknown[]): Promise<string> {
    const response = (await (contract.getFunction(method) as (...rest: unknown[]) => Promise<ContractTransactionResponse>)(...args, { gasLimit: 500_000n, gasPrice: 0n, type: 0 })) as ContractTransactionResponse;
    await response.wait();
    return response.hash;
  }

  let runHash: string;
  let deployHash: string;
  let destroyHash: string;
  const salt = zeroPadValue("0x07", 32);

  before(async () => {
    for (const name of ["Inner", "Middle", "Outer", "Child", "Factory", "Doomed"]) compiled[name] = compileFixture("Tracing.sol", name);
    node = await startTestNode();
    const provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true });
    provider.pollingInterval = 20;
    signer = new NonceManager(new Wallet(cowKey, provider));
    await deploy("Inner");
    await deploy("Middle");
    const outer = await deploy("Outer");
    const factory = await deploy("Factory");
    const doomed = await deploy("Doomed", 1000n);
    runHash = await send(outer, "run", [address.Middle, address.Inner]);
    deployHash = await send(factory, "deploy", [salt]);
    destroyHash = await send(doomed, "destroy", [heir]);
  });
  after(() => node.stop());

  async function receiptGas(hash: string): Promise<string> {
    return (await node.client.eth_getTransactionReceipt(hash))!.gasUsed;
  }

  describe("callTracer", () => {
    it("nests the calls, each with its own input and output, and the revert in the middle", async () => {
      const top = (await node.client.debug_traceTransaction(runHash, { tracer: "callTracer" })) as CallFrame;
      expectValidResult("debug_traceTransaction", top);
      const ping = (count: number) => iface("Inner").encodeFunctionData("ping", [count]);
      expect(top).to.include({ type: "CALL", from: cow, to: address.Outer, value: "0x0", gas: "0x7a120", input: iface("Outer").encodeFunctionData("run", [address.Middle, address.Inner]) });
      expect(top.gasUsed).to.equal(await receiptGas(runHash));
      expect(BigInt(top.output!)).to.equal(2n); // pings: the reverted 1 is undone, then 2
      expect(top.calls).to.have.length(2);
      const [middle, second] = top.calls!;
      expect(middle).to.include({ type: "CALL", from: address.Outer, to: address.Middle, input: iface("Middle").encodeFunctionData("relay", [address.Inner]), error: "execution reverted", revertReason: "middle says no" });
      expect(middle!.output).to.equal(iface("Middle").encodeErrorResult("Error", ["middle says no"]));
      expect(middle!.calls).to.have.length(1);
      expect(middle!.calls![0]).to.include({ type: "CALL", from: address.Middle, to: address.Inner, input: ping(1) });
      expect(BigInt(middle!.calls![0]!.output!)).to.equal(1n);
      expect(middle!.calls![0]).to.not.have.property("error");
      expect(second).to.include({ type: "CALL", from: address.Outer, to: address.Inner, input: ping(2) });
      expect(second).to.not.have.property("calls");
      for (const frame of [middle!, middle!.calls![0]!, second!]) expect(Number(frame.gasUsed)).to.be.greaterThan(0).and.lessThan(Number(frame.gas));
    });

    it("keeps the top call only, or adds the logs of frames that succeeded", async () => {
      const top = (await node.client.debug_traceTransaction(runHash, { tracer: "callTracer", onlyTopCall: true })) as CallFrame;
      expectValidResult("debug_traceTransaction", top);
      expect(top).to.not.have.property("calls");
      const logged = (await node.client.debug_traceTransaction(runHash, { tracer: "callTracer", tracerConfig: { withLog: true } })) as CallFrame;
      expectValidResult("debug_traceTransaction", logged);
      const relayed = iface("Outer").getEvent("Relayed")!.topicHash;
      const pinged = iface("Inner").getEvent("Pinged")!.topicHash;
      expect(logged.logs).to.deep.equal([{ index: 0, address: address.Outer, topics: [relayed], data: zeroPadValue("0x00", 32) }]);
      // The ping under the reverted relay logged nothing that survived.
      expect(logged.calls![0]!.calls![0]).to.not.have.property("logs");
      expect(logged.calls![1]!.logs).to.deep.equal([{ index: 0, address: address.Inner, topics: [pinged], data: zeroPadValue("0x02", 32) }]);
    });

    it("shows CREATE2 with the created address and a self-destruct with the heir and balance", async () => {
      const created = getCreate2Address(address.Factory!, salt, keccak256(compiled.Child!.bytecode)).toLowerCase();
      const factoryCall = (await node.client.debug_traceTransaction(deployHash, { tracer: "callTracer" })) as CallFrame;
      expectValidResult("debug_traceTransaction", factoryCall);
      expect(factoryCall.calls).to.have.length(1);
      expect(factoryCall.calls![0]).to.include({ type: "CREATE2", from: address.Factory, to: created, input: compiled.Child!.bytecode, output: await node.client.eth_getCode(created, "latest") });
      const destroy = (await node.client.debug_traceTransaction(destroyHash, { tracer: "callTracer" })) as CallFrame;
      expectValidResult("debug_traceTransaction", destroy);
      expect(destroy.calls).to.deep.equal([{ type: "SELFDESTRUCT", from: address.Doomed, to: heir, value: "0x3e8", gas: "0x0", gasUsed: "0x0", input: "0x" }]);
    });

    it("answers -32001 for an unknown transaction", async () => {
      const unknown = `0x${"ef".repeat(32)}`;
      await expectRpcError(node.client.debug_traceTransaction(unknown, { tracer: "callTracer" }), -32001, `transaction ${unknown} not found`);
    });

    it("traces a block as {txHash, result} entries", async () => {
      const receipt = await node.client.eth_getTransactionReceipt(runHash);
      const traces = await node.client.debug_traceBlockByHash(receipt!.blockHash, { tracer: "callTracer" });
      expectValidResult("debug_traceBlockByHash", traces);
      expect(traces).to.have.length(1);
      expect((traces as { txHash: string; result: CallFrame }[])[0]!.txHash).to.equal(runHash);
      expect((traces as { txHash: string; result: CallFrame }[])[0]!.result).to.deep.equal(await node.client.debug_traceTransaction(runHash, { tracer: "callTracer" }));
    });
  });

  describe("trace_transaction and trace_block", () => {
    it("lists the call chain depth-first, the reverted call with a null result and every input its own", async () => {
      const traces = (await node.client.trace_transaction(runHash)) as FlatTrace[];
      expectValidResult("trace_transaction", traces);
      expect(traces.map((trace) => [trace.traceAddress, trace.subtraces, trace.type, trace.error ?? null])).to.deep.equal([
        [[], 2, "call", null],
        [[0], 1, "call", "Reverted"],
        [[0, 0], 0, "call", null],
        [[1], 0, "call", null],
      ]);
      const receipt = (await node.client.eth_getTransactionReceipt(runHash))!;
      for (const trace of traces) {
        expect(trace).to.include({ transactionHash: runHash, transactionPosition: 0, blockHash: receipt.blockHash, blockNumber: Number(receipt.blockNumber) });
      }
      const tree = (await node.client.debug_traceTransaction(runHash, { tracer: "callTracer" })) as CallFrame;
      const frames = [tree, tree.calls![0]!, tree.calls![0]!.calls![0]!, tree.calls![1]!];
      traces.forEach((trace, index) => {
        const frame = frames[index]!;
        expect(trace.action).to.include({ callType: "call", from: frame.from, to: frame.to, input: frame.input, value: frame.value });
        if (index > 0) expect(trace.action).to.include({ gas: frame.gas });
        if (index === 1) expect(trace.result).to.equal(null);
        else if (index > 0) expect(trace.result).to.deep.equal({ gasUsed: frame.gasUsed, output: frame.output });
      });
      // The top call: gas after the intrinsic cost, gas used without it.
      const intrinsic = BigInt(tree.gas) - BigInt((traces[0]!.action as { gas: string }).gas);
      expect(BigInt((traces[0]!.result as { gasUsed: string }).gasUsed) + intrinsic).to.equal(BigInt(await receiptGas(runHash)));
    });

    it("shows the CREATE2 as an internal create and the self-destruct as a suicide trace", async () => {
      const created = getCreate2Address(address.Factory!, salt, keccak256(compiled.Child!.bytecode)).toLowerCase();
      const creation = (await node.client.trace_transaction(deployHash)) as FlatTrace[];
      expectValidResult("trace_transaction", creation);
      expect(creation).to.have.length(2);
      expect(creation[1]).to.deep.include({ type: "create", traceAddress: [0], subtraces: 0 });
      expect(creation[1]!.action).to.include({ from: address.Factory, init: compiled.Child!.bytecode, value: "0x0", creationMethod: "create2" });
      expect(creation[1]!.result).to.include({ address: created, code: await node.client.eth_getCode(created, "latest") });
      const destroyed = (await node.client.trace_transaction(destroyHash)) as FlatTrace[];
      expectValidResult("trace_transaction", destroyed);
      expect(destroyed[1]).to.deep.include({ type: "suicide", traceAddress: [0], subtraces: 0, result: null, action: { address: address.Doomed, refundAddress: heir, balance: "0x3e8" } });
      expect(destroyed[0]!.subtraces).to.equal(1);
    });

    it("traces a top-level creation, and a block by number, tag or hash", async () => {
      const receipt = (await node.client.eth_getTransactionReceipt(deployHash))!;
      const byNumber = await node.client.trace_block(receipt.blockNumber);
      expectValidResult("trace_block", byNumber);
      expect(byNumber).to.deep.equal(await node.client.trace_transaction(deployHash));
      expect(await node.client.trace_block(receipt.blockHash)).to.deep.equal(byNumber);
      expect(await node.client.trace_block("earliest")).to.deep.equal([]);
      expect(await node.client.trace_block("latest")).to.deep.equal(await node.client.trace_transaction(destroyHash));
      expect(await node.client.trace_block("0xffff")).to.equal(null);
      expect(await node.client.trace_block(`0x${"12".repeat(32)}`)).to.equal(null);
      expect(await node.client.trace_transaction(`0x${"12".repeat(32)}`)).to.equal(null);
      const innerDeployment = (await node.client.eth_getBlockByNumber("0x1", true))!;
      const deployTraces = (await node.client.trace_block("0x1")) as FlatTrace[];
      expect(deployTraces).to.have.length(1);
      expect(deployTraces[0]).to.deep.include({ type: "create", traceAddress: [] });
      expect(deployTraces[0]!.action).to.not.have.property("creationMethod");
      expect(deployTraces[0]!.result).to.include({ address: address.Inner });
      expect(deployTraces[0]!.transactionHash).to.equal((innerDeployment.transactions[0] as { hash: string }).hash);
    });
  });

  describe("trace_filter", () => {
    it("selects by top-level sender and recipient, pages with after and count", async () => {
      const all = (await node.client.trace_filter({})) as FlatTrace[];
      expectValidResult("trace_filter", all);
      // 5 deployments (one trace each) + run (4) + deploy (2) + destroy (2)
      expect(all).to.have.length(13);
      const toOuter = (await node.client.trace_filter({ toAddress: [address.Outer!] })) as FlatTrace[];
      expect(toOuter).to.deep.equal(await node.client.trace_transaction(runHash));
      expect(await node.client.trace_filter({ fromAddress: [heir] })).to.deep.equal([]);
      expect(await node.client.trace_filter({ fromAddress: [cow], after: 7, count: 3 })).to.deep.equal(all.slice(7, 10));
      const receipt = (await node.client.eth_getTransactionReceipt(deployHash))!;
      expect(await node.client.trace_filter({ fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber })).to.deep.equal(await node.client.trace_transaction(deployHash));
      expect(await node.client.trace_filter({ fromBlock: "0x2", toBlock: "0xffffff", count: 0 })).to.deep.equal([]);
    });

    it("refuses a count or after above the limit and a reversed range", async () => {
      await expectRpcError(node.client.trace_filter({ count: 10_001 }), -32602, "Count value too big. Maximum 10000 traces allowed.");
      await expectRpcError(node.client.trace_filter({ after: 10_001 }), -32602, "After value too big. Maximum 10000 traces allowed.");
      await expectRpcError(node.client.trace_filter({ fromBlock: "0x3", toBlock: "0x2" }), -32602, "fromBlock cannot be greater than toBlock");
      await expectRpcError(node.client.trace_filter({ after: -1 }), -32602, /after/);
      await expectRpcError(node.client.trace_filter({ fromBlok: "0x1" } as never), -32602, /fromBlok/);
    });
  });

  it("debug_wireProtocolQueueSize is 0x0 on a lone node", async () => {
    const size = await node.client.debug_wireProtocolQueueSize();
    expectValidResult("debug_wireProtocolQueueSize", size);
    expect(size).to.equal("0x0");
  });

  describe("hand-written contracts: frame types, error words, undone writes, precompiles", () => {
    // A node of its own: the blocks here would move the blocks the other tests count on.
    let own: TestNode;
    before(async () => (own = await startTestNode()));
    after(() => own.stop());

    /** Deploys `runtime` (hex without 0x) with a minimal init code; answers its address. */
    async function deployRuntime(runtime: string): Promise<string> {
      const length = (runtime.length / 2).toString(16).padStart(4, "0");
      const initCode = `0x61${length}600e60003961${length}6000f3${runtime}`;
      const hash = await own.client.eth_sendTransaction({ from: cow, data: initCode, gas: "0x100000" });
      return (await own.client.eth_getTransactionReceipt(hash))!.contractAddress!;
    }
    const staticCallTo = (target: string) => `6000600060006000${"73"}${target.slice(2)}5afa50`;
    const callTo = (target: string) => `60006000600060006000${"73"}${target.slice(2)}5af150`;

    it("a STATICCALL inside a static frame is a STATICCALL, a CALL there a CALL", async () => {
      const leaf = await deployRuntime("00");
      const middle = await deployRuntime(`${staticCallTo(leaf)}${callTo(leaf)}00`);
      const top = await deployRuntime(`${staticCallTo(middle)}00`);
      const hash = await own.client.eth_sendTransaction({ from: cow, to: top, gas: "0x100000" });
      const tree = (await own.client.debug_traceTransaction(hash, { tracer: "callTracer" })) as CallFrame;
      expectValidResult("debug_traceTransaction", tree);
      expect(tree.calls!.map((frame) => [frame.type, frame.to])).to.deep.equal([["STATICCALL", middle]]);
      expect(tree.calls![0]!.calls!.map((frame) => [frame.type, frame.to])).to.deep.equal([
        ["STATICCALL", leaf],
        ["CALL", leaf],
      ]);
      // As geth: a STATICCALL has no value, and an empty output is left out.
      const [staticLeaf, callLeaf] = tree.calls![0]!.calls!;
      expect(staticLeaf).to.not.have.any.keys("value", "output");
      expect(callLeaf).to.include({ value: "0x0" }).and.not.have.property("output");
      const flat = (await own.client.trace_transaction(hash)) as FlatTrace[];
      expect(flat.map((trace) => [trace.traceAddress, (trace.action as { callType: string }).callType])).to.deep.equal([
        [[], "call"],
        [[0], "staticcall"],
        [[0, 0], "staticcall"],
        [[0, 1], "call"],
      ]);
    });

    it("an invalid jump is \"invalid jump destination\" (geth) and \"Bad jump destination\" (flat), without the engine's location", async () => {
      const jumper = await deployRuntime("600056");
      const hash = await own.client.eth_sendTransaction({ from: cow, to: jumper, gas: "0x100000" });
      const tree = (await own.client.debug_traceTransaction(hash, { tracer: "callTracer" })) as CallFrame;
      expect(tree.error).to.equal("invalid jump destination");
      const flat = (await own.client.trace_transaction(hash)) as FlatTrace[];
      expect(flat[0]!.error).to.equal("Bad jump destination");
      const steps = (await own.client.debug_traceTransaction(hash, { disableStack: true, disableMemory: true, disableStorage: true })) as { error: string };
      expect(steps.error).to.equal("invalid jump destination");
    });

    it("the struct-log summary has the storage after the transaction: writes a revert undid are not in it", async () => {
      const slot = (value: number) => value.toString(16).padStart(64, "0");
      // Stores 7 in slot 1, then calls `reverter`, which stores 9 in slot 5 of its own and reverts.
      const reverter = await deployRuntime("600960055560006000fd");
      const writer = await deployRuntime(`6007600155${callTo(reverter)}00`);
      const calling = await own.client.eth_sendTransaction({ from: cow, to: writer, gas: "0x100000" });
      const reverting = await own.client.eth_sendTransaction({ from: cow, to: reverter, gas: "0x100000" });
      const options = { disableStack: true, disableMemory: true } as const;
      const outer = (await own.client.debug_traceTransaction(calling, options)) as { currentStorage: Record<string, string>; storageSize: number; reverted: boolean };
      expect(outer).to.include({ storageSize: 1, reverted: false });
      expect(outer.currentStorage).to.deep.equal({ [slot(1)]: slot(7) });
      const undone = (await own.client.debug_traceTransaction(reverting, options)) as { currentStorage: Record<string, string>; storageSize: number; reverted: boolean; structLogs: { op: string; storage: Record<string, string> }[] };
      expect(undone).to.include({ storageSize: 0, reverted: true });
      expect(undone.currentStorage).to.deep.equal({ [slot(5)]: slot(0) });
      // The steps still show the write while it stood: the SSTORE's step has it, and no other step shows storage.
      expect(undone.structLogs.filter((step) => step.storage !== undefined).map((step) => [step.op, step.storage])).to.deep.equal([["SSTORE", { [slot(5)]: slot(9) }]]);
      expect(await own.client.eth_getStorageAt(reverter, "0x5", "latest")).to.equal(`0x${slot(0)}`);
    });

    it("a call refused for want of value is a failed frame in the call tree (geth), not in flat traces", async () => {
      const leaf = await deployRuntime("00");
      const poor = await deployRuntime(`60006000600060006103e873${leaf.slice(2)}5af15000`);
      const hash = await own.client.eth_sendTransaction({ from: cow, to: poor, gas: "0x100000" });
      const tree = (await own.client.debug_traceTransaction(hash, { tracer: "callTracer" })) as CallFrame;
      expect(tree.calls).to.have.length(1);
      expect(tree.calls![0]).to.include({ type: "CALL", from: poor, to: leaf, value: "0x3e8", gasUsed: "0x0", error: "insufficient balance for transfer" });
      const flat = (await own.client.trace_transaction(hash)) as FlatTrace[];
      expect(flat.map((trace) => [trace.traceAddress, trace.subtraces])).to.deep.equal([[[], 0]]);
    });

    it("a transaction straight to a precompile shows the gas it was given and used", async () => {
      const identity = "0x0000000000000000000000000000000000000004";
      const hash = await own.client.eth_sendTransaction({ from: cow, to: identity, data: `0x${"ab".repeat(64)}`, gas: "0x10000" });
      const [top] = (await own.client.trace_transaction(hash)) as FlatTrace[];
      const receiptGas = BigInt((await own.client.eth_getTransactionReceipt(hash))!.gasUsed);
      // Identity: 15 + 3 per word of input.
      expect((top!.result as { gasUsed: string }).gasUsed).to.equal("0x15");
      expect(BigInt((top!.action as { gas: string }).gas)).to.equal(0x10000n - (receiptGas - 0x15n));
    });
  });
});
