// debug_traceCall and eth_createAccessList over HTTP on a three-level call chain whose middle level
// reverts (test/fixtures/Tracing.sol): a call traced at the head gives the struct logs and the call
// tree debug_traceTransaction gives for the same call sent as a transaction; state overrides change
// the traced call only; the access list is geth's, and the call run with it costs the gas reported.
import { expect } from "chai";
import { Contract, ContractFactory, Interface, JsonRpcProvider, NonceManager, Wallet, keccak256, toUtf8Bytes } from "ethers";
import type { CallFrame } from "../../../generated/types.js";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { compileFixture, type CompiledContract } from "../../helpers/solidity.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const stranger = "0x00000000000000000000000000000000000000aa";
const slotZero = `0x${"0".repeat(64)}`;

describe("debug_traceCall and eth_createAccessList", function () {
  this.timeout(90_000);
  let node: TestNode;
  const address: Record<string, string> = {};
  let runCall: { from: string; to: string; data: string; gas: string; gasPrice: string };

  before(async () => {
    const compiled: Record<string, CompiledContract> = {};
    for (const name of ["Inner", "Middle", "Outer"]) compiled[name] = compileFixture("Tracing.sol", name);
    node = await startTestNode();
    const provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true });
    provider.pollingInterval = 20;
    const signer = new NonceManager(new Wallet(keccak256(toUtf8Bytes("cow")), provider));
    for (const name of ["Inner", "Middle", "Outer"]) {
      const factory = new ContractFactory(compiled[name]!.abi as never, compiled[name]!.bytecode, signer);
      const contract = (await factory.deploy({ gasLimit: 3_000_000n, gasPrice: 0n, type: 0 })) as Contract;
      await contract.waitForDeployment();
      address[name] = (await contract.getAddress()).toLowerCase();
    }
    const data = new Interface(compiled.Outer!.abi as never).encodeFunctionData("run", [address.Middle, address.Inner]);
    runCall = { from: cow, to: address.Outer!, data, gas: "0x7a120", gasPrice: "0x0" };
    provider.destroy();
  });
  after(() => node.stop());

  it("traces a call as debug_traceTransaction traces it sent: the same struct logs and the same call tree", async () => {
    const structLogs = await node.client.debug_traceCall(runCall, "latest");
    const callTree = await node.client.debug_traceCall(runCall, "latest", { tracer: "callTracer", tracerConfig: { withLog: true } });
    expectValidResult("debug_traceCall", structLogs);
    expectValidResult("debug_traceCall", callTree);
    const hash = await node.client.eth_sendTransaction(runCall);
    const sentStructLogs = await node.client.debug_traceTransaction(hash);
    const sentCallTree = await node.client.debug_traceTransaction(hash, { tracer: "callTracer", tracerConfig: { withLog: true } });
    expect((structLogs as { structLogs: unknown[] }).structLogs.length).to.be.greaterThan(100);
    expect(structLogs).to.deep.equal(sentStructLogs);
    expect(callTree).to.deep.equal(sentCallTree);
    expect((callTree as CallFrame).calls).to.have.length(2);
  });

  it("applies traceConfig.stateOverrides to the traced call only", async () => {
    const pingsBefore = BigInt(await node.client.eth_getStorageAt(address.Inner!, "0x0", "latest"));
    const overrides = { [address.Inner!]: { stateDiff: { [slotZero]: `0x${"0".repeat(62)}64` } } };
    const tree = (await node.client.debug_traceCall(runCall, "latest", { tracer: "callTracer", stateOverrides: overrides })) as CallFrame;
    // run() answers inner.ping(2): 100 + 2.
    expect(BigInt(tree.output!)).to.equal(102n);
    expect(BigInt(await node.client.eth_getStorageAt(address.Inner!, "0x0", "latest"))).to.equal(pingsBefore);
  });

  it("lists what the call touches by geth's rules, and the call with that list costs the gas reported", async () => {
    const { gas: _gas, ...withoutGas } = runCall;
    const created = await node.client.eth_createAccessList(withoutGas, "latest");
    expectValidResult("eth_createAccessList", created);
    // Outer (the recipient) and cow (the sender) are left out; Inner with its slot, Middle without.
    const expected = [
      { address: address.Inner!, storageKeys: [slotZero] },
      { address: address.Middle!, storageKeys: [] },
    ].sort((first, second) => (first.address < second.address ? -1 : 1));
    expect(created).to.deep.equal({ accessList: expected, gasUsed: created.gasUsed });
    const withList = (await node.client.debug_traceCall({ ...runCall, accessList: created.accessList }, "latest", { tracer: "callTracer" })) as CallFrame;
    const withoutList = (await node.client.debug_traceCall(runCall, "latest", { tracer: "callTracer" })) as CallFrame;
    expect(withList.gasUsed).to.equal(created.gasUsed);
    // Inner's account and slot are cold again after Middle's revert without the list: the list pays.
    expect(BigInt(withList.gasUsed) < BigInt(withoutList.gasUsed), `${withList.gasUsed} < ${withoutList.gasUsed}`).to.equal(true);
  });

  it("answers a failing call's list with its error in geth's words", async () => {
    const created = await node.client.eth_createAccessList({ ...runCall, gas: "0x6000" }, "latest");
    expect(created.error).to.equal("out of gas");
    // The CALL to Middle is listed at its step, though the gas ran out there (geth's tracer likewise).
    expect(created.accessList).to.deep.equal([{ address: address.Middle, storageKeys: [] }]);
  });

  it("refuses every bad input with its error, changing nothing", async () => {
    const client = node.client as unknown as Record<string, (...params: unknown[]) => Promise<unknown>>;
    const blockBefore = await node.client.eth_blockNumber();
    for (const method of ["debug_traceCall", "eth_createAccessList"]) {
      await expectRpcError(client[method]!({ ...runCall, gas: "0xffffffffff" }, "latest"), -32602, "invalid argument 0: gas 1099511627775 exceeds the call gas cap of 50000000");
      await expectRpcError(client[method]!({ ...runCall, to: "0x12" }, "latest"), -32602, /^invalid argument 0: /);
      await expectRpcError(client[method]!(runCall, "pending"), -32602, /^invalid argument 1: /);
      await expectRpcError(client[method]!(runCall, "0x999"), -32600, "Block 0x999 not found");
      await expectRpcError(client[method]!({ from: stranger, to: address.Outer, value: "0x1" }, "latest"), -32000, /^sender doesn.t have enough funds to send tx/);
      await expectRpcError(client[method]!({ ...runCall, accessList: [{ address: "0x12", storageKeys: [] }] }, "latest"), -32602, /^invalid argument 0: /);
    }
    await expectRpcError(client.debug_traceCall!(runCall, "latest", { tracer: "prestateTracer" }), -32602, /^invalid argument 2: field tracer: unknown tracer "prestateTracer"/);
    await expectRpcError(client.debug_traceCall!(runCall, "latest", { blockOverrides: { number: "0x1" } }), -32602, "invalid argument 2: field blockOverrides: block overrides are not supported");
    const twice = { [address.Inner!]: { balance: "0x1" }, [address.Inner!.toUpperCase().replace("0X", "0x")]: { balance: "0x2" } };
    await expectRpcError(client.debug_traceCall!(runCall, "latest", { stateOverrides: twice }), -32602, `invalid argument 2: the account ${address.Inner} is overridden twice`);
    await expectRpcError(client.debug_traceCall!(runCall, "latest", { stateOverrides: { [address.Inner!]: { movePrecompileToAddress: stranger } } }), -32602, "invalid argument 2: movePrecompileToAddress is not supported");
    expect(await node.client.eth_blockNumber()).to.equal(blockBefore);
  });
});
