// eth_call and eth_estimateGas as a contract developer meets them: return data, every kind of
// revert through ethers v6, state overrides that leave nothing behind, the gas cap and time limit,
// and estimates that, used as gas limits, make transactions succeed (and are the smallest that do).
import { expect } from "chai";
import { AbiCoder, Contract, ContractFactory, Interface, JsonRpcProvider, NonceManager, Wallet, keccak256, toUtf8Bytes, zeroPadValue, type ContractTransactionResponse } from "ethers";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { compileFixture, type CompiledContract } from "../../helpers/solidity.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const pauper = "0x00000000000000000000000000000000000000aa";
const storedSlot = zeroPadValue("0x00", 32);

interface Deployment {
  provider: JsonRpcProvider;
  signer: NonceManager;
  probe: Contract;
  address: string;
  iface: Interface;
}

async function deployProbe(node: TestNode, compiled: CompiledContract): Promise<Deployment> {
  const provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true });
  provider.pollingInterval = 20;
  const signer = new NonceManager(new Wallet(cowKey, provider));
  const factory = new ContractFactory(compiled.abi as never, compiled.bytecode, signer);
  const probe = (await factory.deploy({ gasLimit: 3_000_000n })) as Contract;
  await probe.waitForDeployment();
  return { provider, signer, probe, address: (await probe.getAddress()).toLowerCase(), iface: new Interface(compiled.abi as never) };
}

/** What ethers reports for a failed call. */
async function ethersFailure(call: Promise<unknown>): Promise<{ code?: string; reason?: string | null; data?: string; revert?: { name: string; args: unknown[] } | null }> {
  try {
    await call;
  } catch (error) {
    return error as never;
  }
  return expect.fail("the call succeeded");
}

describe("execution: eth_call and eth_estimateGas", function () {
  this.timeout(60_000);
  let compiled: CompiledContract;
  let node: TestNode;
  let deployment: Deployment;
  before(async () => {
    compiled = compileFixture("Probe.sol", "Probe");
    node = await startTestNode();
    deployment = await deployProbe(node, compiled);
  });
  after(() => node.stop());

  function data(name: string, args: unknown[] = []): string {
    return deployment.iface.encodeFunctionData(name, args);
  }

  describe("eth_call", () => {
    it("returns the return data, on the latest state and on older blocks", async () => {
      expect(await deployment.probe.getFunction("stored")()).to.equal(7n);
      const before = await node.client.eth_blockNumber();
      await (await (deployment.probe.getFunction("setStored") as (value: bigint) => Promise<ContractTransactionResponse>)(42n)).wait();
      const latest = await node.client.eth_call({ to: deployment.address, data: data("stored") }, "latest");
      expectValidResult("eth_call", latest);
      expect(BigInt(latest)).to.equal(42n);
      expect(BigInt(await node.client.eth_call({ to: deployment.address, input: data("stored") }, before))).to.equal(7n);
      await (await (deployment.probe.getFunction("setStored") as (value: bigint) => Promise<ContractTransactionResponse>)(7n)).wait();
    });

    it("runs in the block's context with the named sender; a call changes nothing", async () => {
      const head = BigInt(await node.client.eth_blockNumber());
      const answer = await node.client.eth_call({ from: cow, to: deployment.address, data: data("context"), value: "0x5" }, "latest");
      const [sender, senderBalance, blockNumber, value] = AbiCoder.defaultAbiCoder().decode(["address", "uint256", "uint256", "uint256"], answer);
      expect((sender as string).toLowerCase()).to.equal(cow);
      expect(senderBalance).to.equal(BigInt(await node.client.eth_getBalance(cow, "latest")) - 5n);
      expect(blockNumber).to.equal(head);
      expect(value).to.equal(5n);
      expect(await node.client.eth_getBalance(deployment.address, "latest")).to.equal("0x0");
      expect(BigInt(await node.client.eth_blockNumber())).to.equal(head);
    });

    it("surfaces Error(string) reverts in ethers and in the raw answer", async () => {
      const failure = await ethersFailure(deployment.probe.getFunction("failWithReason").staticCall("not today"));
      expect(failure.code).to.equal("CALL_EXCEPTION");
      expect(failure.reason).to.equal("not today");
      const payload = deployment.iface.encodeErrorResult("Error", ["not today"]);
      const raw = await expectRpcError(node.client.eth_call({ to: deployment.address, data: data("failWithReason", ["not today"]) }, "latest"), -32015, "VM Exception while processing transaction: revert not today");
      expect(raw.data).to.equal(payload);
    });

    it("decodes Panic(uint256) to its meaning", async () => {
      const raw = await expectRpcError(
        node.client.eth_call({ to: deployment.address, data: data("divide", [1, 0]) }, "latest"),
        -32015,
        "VM Exception while processing transaction: revert panic code 0x12 (division or modulo by zero)",
      );
      expect(raw.data).to.equal(deployment.iface.encodeErrorResult("Panic", [0x12]));
      const failure = await ethersFailure(deployment.probe.getFunction("divide").staticCall(1, 0));
      expect(failure.revert?.name).to.equal("Panic");
    });

    it("answers custom errors and empty reverts as 'transaction reverted', with the payload when there is one", async () => {
      const custom = await expectRpcError(
        node.client.eth_call({ from: cow, to: deployment.address, data: data("failWithCustomError") }, "latest"),
        -32015,
        "VM Exception while processing transaction: transaction reverted",
      );
      expect(custom.data).to.equal(deployment.iface.encodeErrorResult("Unauthorized", [cow]));
      const failure = await ethersFailure(deployment.probe.getFunction("failWithCustomError").staticCall({ from: cow }));
      expect(failure.revert?.name).to.equal("Unauthorized");
      const empty = await expectRpcError(node.client.eth_call({ to: deployment.address, data: data("failWithoutData") }, "latest"), -32015, "VM Exception while processing transaction: transaction reverted");
      expect(empty.data).to.equal(undefined);
    });

    it("returns 0x when the call runs out of gas", async () => {
      expect(await node.client.eth_call({ to: deployment.address, data: data("spin", [1000]), gas: "0x186a0" }, "latest")).to.equal("0x");
    });

    it("applies balance, code, state and stateDiff overrides for the call only", async () => {
      const context = await node.client.eth_call({ from: pauper, to: deployment.address, data: data("context") }, "latest", { [pauper]: { balance: "0x3e8" } });
      expect(AbiCoder.defaultAbiCoder().decode(["address", "uint256", "uint256", "uint256"], context)[1]).to.equal(1000n);

      const creditSlot = keccak256(AbiCoder.defaultAbiCoder().encode(["address", "uint256"], [cow, 1]));
      const creditCall = { to: deployment.address, data: data("credit", [cow]) };
      expect(BigInt(await node.client.eth_call(creditCall, "latest"))).to.equal(100n);
      const diff = { [deployment.address]: { stateDiff: { [storedSlot]: zeroPadValue("0x2a", 32) } } };
      expect(BigInt(await node.client.eth_call({ to: deployment.address, data: data("stored") }, "latest", diff))).to.equal(42n);
      expect(BigInt(await node.client.eth_call(creditCall, "latest", diff))).to.equal(100n);
      const replaced = { [deployment.address]: { state: { [storedSlot]: zeroPadValue("0x2a", 32) } } };
      expect(BigInt(await node.client.eth_call({ to: deployment.address, data: data("stored") }, "latest", replaced))).to.equal(42n);
      expect(BigInt(await node.client.eth_call(creditCall, "latest", replaced)), "state replaces every slot").to.equal(0n);

      const runtime = await node.client.eth_getCode(deployment.address, "latest");
      const elsewhere = "0x00000000000000000000000000000000000000bb";
      const withCode = { [elsewhere]: { code: runtime, stateDiff: { [creditSlot]: zeroPadValue("0x05", 32) } } };
      expect(BigInt(await node.client.eth_call({ to: elsewhere, data: data("credit", [cow]) }, "latest", withCode))).to.equal(5n);

      // Nothing stayed behind.
      expect(BigInt(await node.client.eth_call({ to: deployment.address, data: data("stored") }, "latest"))).to.equal(7n);
      expect(BigInt(await node.client.eth_call(creditCall, "latest"))).to.equal(100n);
      expect(await node.client.eth_getCode(elsewhere, "latest")).to.equal("0x");
      expect(await node.client.eth_getBalance(pauper, "latest")).to.equal("0x0");
    });

    it("refuses malformed overrides and bad calls with clear errors", async () => {
      const call = { to: deployment.address, data: data("stored") };
      await expectRpcError(
        node.client.eth_call(call, "latest", { [deployment.address]: { state: {}, stateDiff: {} } } as never),
        -32602,
        /^invalid argument 2: .*state.*stateDiff/,
      );
      await expectRpcError(node.client.eth_call(call, "latest", { [deployment.address]: { movePrecompileToAddress: pauper } }), -32602, "invalid argument 2: movePrecompileToAddress is not supported");
      await expectRpcError(node.client.eth_call(call, "latest", { "0x1234": { balance: "0x1" } } as never), -32602, /^invalid argument 2: /);
      await expectRpcError(node.client.eth_call(call, "latest", { [deployment.address]: { stateDiff: { "0x01": "0x02" } } } as never), -32602, /^invalid argument 2: /);
      await expectRpcError(node.client.eth_call(call, "latest", { [deployment.address]: { balance: "0x1" }, [deployment.address.toUpperCase().replace("0X", "0x")]: { balance: "0x2" } }), -32602, /overridden twice/);
      await expectRpcError(node.client.eth_call({ ...call, input: "0x01" }, "latest"), -32602, 'invalid argument 0: "data" and "input" are both given and differ');
      await expectRpcError(node.client.eth_call({ ...call, gas: "0x2faf081" }, "latest"), -32602, "invalid argument 0: gas 50000001 exceeds the call gas cap of 50000000");
      await expectRpcError(node.client.eth_call(call, "0x3e8"), -32602, "Invalid block number 1000");
      // The engine's message without the context it appends ("(vm hf=... -> block number=... -> tx type=...)").
      await expectRpcError(node.client.eth_call({ from: pauper, ...call, value: "0x1" }, "latest"), -32000, /^sender doesn't have enough funds to send tx\. The upfront cost is: 1 and the sender's account \(0x0{38}aa\) only has: 0$/);
      expect(BigInt(await node.client.eth_call(call, "latest"))).to.equal(7n);
    });

    it("stops a call past the time limit, and the next call runs", async () => {
      const limited = await startTestNode({ chain: { calls: { gasCap: 50_000_000n, timeLimitMs: 300 } } });
      try {
        const { address } = await deployProbe(limited, compiled);
        const started = performance.now();
        await expectRpcError(limited.client.eth_call({ to: address, data: data("spinForever") }, "latest"), -32011, "Execution has got timeout out.");
        expect(performance.now() - started).to.be.lessThan(5_000);
        expect(BigInt(await limited.client.eth_call({ to: address, data: data("stored") }, "latest"))).to.equal(7n);
        await expectRpcError(limited.client.eth_call({ to: address, data: data("spinForever") }, "pending"), -32011, "Execution has got timeout out.");
        expect(BigInt(await limited.client.eth_call({ to: address, data: data("stored") }, "pending"))).to.equal(7n);
      } finally {
        await limited.stop();
      }
    });

    it("gives a whole batch the time limit: past it, the batch's remaining calls answer -32011 without running", async () => {
      const limited = await startTestNode({ chain: { calls: { gasCap: 50_000_000n, timeLimitMs: 300 } } });
      try {
        const { address } = await deployProbe(limited, compiled);
        const endless = (id: number) => ({ jsonrpc: "2.0", id, method: "eth_call", params: [{ to: address, data: data("spinForever") }, "latest"] });
        const batch = [...Array.from({ length: 8 }, (_, index) => endless(index)), { jsonrpc: "2.0", id: 8, method: "eth_blockNumber", params: [] }];
        const started = performance.now();
        const response = await fetch(limited.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(batch) });
        const answers = (await response.json()) as { id: number; error?: { code: number; message: string } }[];
        // Each call alone would run 300 ms: eight in a row would take 2.4 s.
        expect(performance.now() - started).to.be.lessThan(1_500);
        expect(answers.map((answer) => [answer.id, answer.error?.code])).to.deep.equal(Array.from({ length: 9 }, (_, index) => [index, -32011]));
        expect(answers[8]!.error!.message).to.equal("Execution has got timeout out.");
      } finally {
        await limited.stop();
      }
    });

    it("stops a BLAKE2f or pairing precompile call that cannot end within the time limit", async () => {
      const limited = await startTestNode({ chain: { calls: { gasCap: 50_000_000n, timeLimitMs: 300 } } });
      try {
        // 48 million rounds at 1 gas each: one synchronous step of some 30 s here, without the guard.
        const blake2f = (rounds: number) => ({ to: "0x0000000000000000000000000000000000000009", data: `0x${rounds.toString(16).padStart(8, "0")}${"00".repeat(208)}01`, gas: "0x2faf080" });
        const started = performance.now();
        await expectRpcError(limited.client.eth_call(blake2f(48_000_000), "latest"), -32011, "Execution has got timeout out.");
        expect(performance.now() - started).to.be.lessThan(5_000);
        // Calls that can end in time still run: EIP-152's test vector 5 (12 rounds), and 30,000 rounds.
        const h = "48c9bdf267e6096a3ba7ca8485ae67bb2bf894fe72f36e3cf1361d5f3af54fa5d182e6ad7f520e511f6c3e2b8c68059b6bbd41fbabd9831f79217e1319cde05b";
        const vector5 = `0x0000000c${h}${"616263".padEnd(256, "0")}${"03".padEnd(32, "0")}01`;
        expect(await limited.client.eth_call({ to: "0x0000000000000000000000000000000000000009", data: vector5 }, "latest")).to.equal(
          "0xba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
        );
        expect(await limited.client.eth_call(blake2f(30_000), "latest")).to.match(/^0x[0-9a-f]{128}$/);

        // The bn254 pairing check at 34,000 gas a pair: 1,400 pairs are some 15 s of work here.
        const g1 = `${"0".repeat(63)}1${"0".repeat(63)}2`;
        const g2 =
          "198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c21800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed" +
          "090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa";
        const pairing = (pairs: number) => ({ to: "0x0000000000000000000000000000000000000008", data: `0x${(g1 + g2).repeat(pairs)}`, gas: "0x2faf080" });
        const pairingStarted = performance.now();
        await expectRpcError(limited.client.eth_call(pairing(1_400), "latest"), -32011, "Execution has got timeout out.");
        expect(performance.now() - pairingStarted).to.be.lessThan(5_000);
        // e(G1, G2) is not 1: the check answers false.
        expect(await limited.client.eth_call(pairing(1), "latest")).to.equal(`0x${"0".repeat(64)}`);
      } finally {
        await limited.stop();
      }
    });
  });

  describe("eth_estimateGas", () => {
    async function expectSmallest(call: { from: string; to: string; data: string }): Promise<bigint> {
      const estimate = await node.client.eth_estimateGas(call);
      expectValidResult("eth_estimateGas", estimate);
      const gas = BigInt(estimate);
      // One gas less and the simulation fails: out of gas, or the contract's own check reverts.
      const short = await expectRpcError(node.client.eth_estimateGas({ ...call, gas: `0x${(gas - 1n).toString(16)}` }), -32010, `gas required exceeds allowance (${gas - 1n})`).catch(
        () => expectRpcError(node.client.eth_estimateGas({ ...call, gas: `0x${(gas - 1n).toString(16)}` }), -32015, /^VM Exception while processing transaction: /),
      );
      expect(short).to.not.equal(undefined);
      const sent = await deployment.signer.sendTransaction({ to: call.to, data: call.data, gasLimit: gas, type: 0 });
      expect((await sent.wait())!.status, "the estimate as gas limit").to.equal(1);
      return gas;
    }

    it("without a block, estimates after the executable pool transactions when there are any (mining stopped)", async () => {
      const own = await startTestNode();
      try {
        const { address } = await deployProbe(own, compiled);
        await own.client.evm_stopMining();
        // Waiting in the pool: stored 7 -> 0. Storing 5 then costs a fresh slot's write.
        await own.client.eth_sendTransaction({ from: cow, to: address, data: data("setStored", [0]), gas: "0x100000" });
        const call = { from: cow, to: address, data: data("setStored", [5]) };
        const atLatest = BigInt(await own.client.eth_estimateGas(call, "latest"));
        const byDefault = BigInt(await own.client.eth_estimateGas(call));
        expect(byDefault).to.equal(BigInt(await own.client.eth_estimateGas(call, "pending")));
        expect(byDefault > atLatest + 10_000n, `${byDefault} after the pool, ${atLatest} at latest`).to.equal(true);
        const sent = await own.client.eth_sendTransaction({ ...call, gas: `0x${byDefault.toString(16)}` });
        await own.client.evm_mine();
        expect((await own.client.eth_getTransactionReceipt(sent))!.status).to.equal("0x1");
        // Nothing waits now: the default is the latest block again.
        expect(await own.client.eth_estimateGas(call)).to.equal(await own.client.eth_estimateGas(call, "latest"));
      } finally {
        await own.stop();
      }
    });

    it("answers 21000 for a plain transfer", async () => {
      expect(await node.client.eth_estimateGas({ from: cow, to: pauper, value: "0x1" })).to.equal("0x5208");
    });

    it("takes a gas below 21000 as no bound, as geth does", async () => {
      const call = { from: cow, to: deployment.address, data: data("spin", [20]) };
      const unbounded = await node.client.eth_estimateGas(call);
      for (const gas of ["0x0", "0x5207"]) expect(await node.client.eth_estimateGas({ ...call, gas }), gas).to.equal(unbounded);
      await expectRpcError(node.client.eth_estimateGas({ ...call, gas: "0x5208" }), -32010, "gas required exceeds allowance (21000)");
    });

    it("gives the smallest gas that makes a loop succeed", async () => {
      const gas = await expectSmallest({ from: cow, to: deployment.address, data: data("spin", [200]) });
      expect(gas > 100_000n, `${gas} gas`).to.equal(true);
    });

    it("gives the smallest gas when a call forwards all but 1/64 of its gas to a child", async () => {
      const child = await new ContractFactory(compiled.abi as never, compiled.bytecode, deployment.signer).deploy({ gasLimit: 3_000_000n });
      await child.waitForDeployment();
      await expectSmallest({ from: cow, to: deployment.address, data: data("forward", [await child.getAddress(), 30]) });
    });

    it("gives enough gas for a child call whose failure the caller would catch and carry on from", async () => {
      const child = await new ContractFactory(compiled.abi as never, compiled.bytecode, deployment.signer).deploy({ gasLimit: 3_000_000n });
      await child.waitForDeployment();
      const childAddress = await child.getAddress();
      const childDone = deployment.iface.getEvent("ChildDone")!;
      for (const name of ["tryForward", "callForward"]) {
        const call = { from: cow, to: deployment.address, data: data(name, [childAddress, 200]) };
        const gas = BigInt(await node.client.eth_estimateGas(call));
        const sent = await deployment.signer.sendTransaction({ to: call.to, data: call.data, gasLimit: gas, type: 0 });
        const receipt = (await sent.wait())!;
        expect(receipt.status).to.equal(1);
        const done = receipt.logs.map((log) => deployment.iface.parseLog(log)).find((log) => log?.name === childDone.name);
        expect(done?.args[0], `${name}: the child's work is done with the estimate (${gas}) as gas limit`).to.equal(true);
      }
    });

    it("gives the smallest gas for code that reads the gas left to decide what to do", async () => {
      // Runtime: while (gasleft() > 10000) {} — with less gas it takes fewer rounds, so the first
      // run's spare gas says nothing: the smallest limit is one pass at 22 gas.
      const runtime = "5b6127105a1160005700";
      const initCode = `0x69${runtime}600052600a6016f3`;
      const created = await deployment.signer.sendTransaction({ data: initCode, gasLimit: 200_000n, type: 0 });
      const address = (await created.wait())!.contractAddress!;
      expect(await node.client.eth_getCode(address, "latest")).to.equal(`0x${runtime}`);
      expect(await expectSmallest({ from: cow, to: address, data: "0x" })).to.equal(21_022n);
    });

    it("counts the gas a refund gives back", async () => {
      await expectSmallest({ from: cow, to: deployment.address, data: data("clearStored") });
      await (await (deployment.probe.getFunction("setStored") as (value: bigint) => Promise<ContractTransactionResponse>)(7n)).wait();
    });

    it("lets ethers send without a gas limit, and estimates contract creation", async () => {
      const sent = (await deployment.probe.getFunction("spin")(25)) as ContractTransactionResponse;
      expect((await sent.wait())!.status).to.equal(1);
      const creation = BigInt(await node.client.eth_estimateGas({ from: cow, data: compiled.bytecode }));
      const deployed = await new ContractFactory(compiled.abi as never, compiled.bytecode, deployment.signer).deploy({ gasLimit: creation });
      expect((await deployed.deploymentTransaction()!.wait())!.status).to.equal(1);
    });

    it("answers a revert with -32015 and other failures with -32010", async () => {
      const reverted = await expectRpcError(
        node.client.eth_estimateGas({ from: cow, to: deployment.address, data: data("failWithReason", ["no estimate"]) }),
        -32015,
        "VM Exception while processing transaction: revert no estimate",
      );
      expect(reverted.data).to.equal(deployment.iface.encodeErrorResult("Error", ["no estimate"]));
      await expectRpcError(node.client.eth_estimateGas({ from: pauper, to: cow, value: "0x1" }), -32010, /^sender doesn't have enough funds to send tx\. The upfront cost is: 1 and the sender's account \(0x0{38}aa\) only has: 0$/);
      await expectRpcError(node.client.eth_estimateGas({ from: cow, to: deployment.address, data: data("spin", [100_000]), gas: "0x100000" }), -32010, "gas required exceeds allowance (1048576)");
      await expectRpcError(node.client.eth_estimateGas({ from: cow, to: cow }, "0x3e8"), -32602, "Invalid block number 1000");
    });
  });
});

describe("execution: calls on the pending block", function () {
  this.timeout(60_000);
  let node: TestNode;
  before(async () => (node = await startTestNode({ chain: { mining: { kind: "off" } } })));
  after(() => node.stop());

  it("sees the pool's transactions with 'pending' and not with 'latest'", async () => {
    const wallet = new Wallet(cowKey);
    const raw = await wallet.signTransaction({ type: 0, chainId: 33n, nonce: 0, gasLimit: 21_000n, gasPrice: 0n, to: pauper, value: 1_000n });
    await node.client.eth_sendRawTransaction(raw);
    const spend = { from: pauper, to: cow, value: "0x3e8" };
    await expectRpcError(node.client.eth_call(spend, "latest"), -32000, /^sender doesn't have enough funds/);
    expect(await node.client.eth_call(spend, "pending")).to.equal("0x");
    expect(await node.client.eth_estimateGas(spend, "pending")).to.equal("0x5208");
  });
});
