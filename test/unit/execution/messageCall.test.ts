// Calls take a lean path (the message without the transaction around it) where the engine's runTx
// would accept them, on the overlay state (changes held in memory, never written). Every way must
// answer as runTx on the engine's own state manager: kind, output, gas used, gas consumed and the
// measured slack, and the same refusal where the engine refuses.
import { expect } from "chai";
import { AbiCoder, Interface, Wallet, getBytes, keccak256, toUtf8Bytes } from "ethers";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { createExecutionBlock, createExecutionEngine, type ExecutionEngine } from "../../../src/execution/engine.js";
import { runMessageCall, runMessageCallAsTransaction, type MessageCall, type MessageCallResult } from "../../../src/execution/messageCall.js";
import { openChainServices, type ChainServices } from "../../../src/node/chainServices.js";
import { defaultNodeOptions } from "../../../src/node/options.js";
import { compileFixture } from "../../helpers/solidity.js";

type Outcome = { refused: string } | (MessageCallResult & { refused?: undefined });

async function outcomeOf(run: () => Promise<MessageCallResult>): Promise<Outcome> {
  try {
    return await run();
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

function comparable(outcome: Outcome): unknown {
  if (outcome.refused !== undefined) return outcome;
  const { slack, ...rest } = outcome;
  return { ...rest, ...("returnData" in rest ? { returnData: Buffer.from(rest.returnData).toString("hex") } : {}), slack: slack === undefined ? undefined : { ...slack } };
}

describe("execution/messageCall: the lean path against runTx", function () {
  this.timeout(60_000);
  let services: ChainServices;
  let engine: ExecutionEngine;
  let overlayEngine: ExecutionEngine;
  let block: ReturnType<typeof createExecutionBlock>;
  const owner = new Wallet(keccak256(toUtf8Bytes("cow")));
  const token = new Interface(compileFixture("Token.sol", "Token").abi as never);
  const probe = new Interface(compileFixture("Probe.sol", "Probe").abi as never);
  let tokenAddress: Uint8Array;
  let probeAddress: Uint8Array;
  let childAddress: Uint8Array;

  before(async () => {
    const network = findNetworkProfile(33)!;
    services = await openChainServices(network, { dataDir: undefined, inMemory: true }, { ...defaultNodeOptions.chain }, createLogger("error"));
    let nonce = 0;
    const deploy = async (bytecode: string): Promise<Uint8Array> => {
      const raw = await owner.signTransaction({ type: 0, chainId: 33n, nonce: nonce++, gasPrice: 0n, gasLimit: 5_000_000n, data: bytecode });
      const transaction = decodeRawTransaction(getBytes(raw), services.common);
      await services.pool.add(transaction);
      await services.miner.mineUntilIncluded(transaction);
      const receipts = await services.chain.getReceipts(services.chain.head.hash);
      return receipts![0]!.contractAddress!;
    };
    const tokenArguments = AbiCoder.defaultAbiCoder().encode(["string", "string", "uint256"], ["Lean", "LEN", 10n ** 24n]).slice(2);
    tokenAddress = await deploy(compileFixture("Token.sol", "Token").bytecode + tokenArguments);
    probeAddress = await deploy(compileFixture("Probe.sol", "Probe").bytecode);
    childAddress = await deploy(compileFixture("Probe.sol", "Probe").bytecode);
    const head = services.chain.head;
    engine = await createExecutionEngine(services.common, services.state.at(head.header.fields.stateRoot), async () => undefined);
    overlayEngine = await createExecutionEngine(services.common, services.state.overlayAt(head.header.fields.stateRoot), async () => undefined);
    const fields = head.header.fields;
    block = createExecutionBlock(engine.vm.common, { number: head.number, coinbase: fields.coinbase, timestamp: fields.timestamp, gasLimit: fields.gasLimit, baseFee: 0n, difficulty: fields.difficulty });
  });
  after(() => services?.close());

  const from = getBytes(owner.address);
  const stranger = getBytes("0x00000000000000000000000000000000000000aa");
  const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString("hex")}`;
  /** A call built when the test runs, once the contracts are deployed. */
  const call = (to: () => Uint8Array | undefined, data: () => string, extra: () => Partial<MessageCall> = () => ({})) => (): MessageCall => ({
    from,
    to: to(),
    gasLimit: 3_000_000n,
    gasPrice: 0n,
    value: 0n,
    data: getBytes(data()),
    ...extra(),
  });
  const cases: Record<string, () => MessageCall> = {
    "a token balance": call(() => tokenAddress, () => token.encodeFunctionData("balanceOf", [owner.address])),
    "a token transfer": call(() => tokenAddress, () => token.encodeFunctionData("transfer", ["0x00000000000000000000000000000000000000bb", 5n])),
    "a transfer beyond the balance (revert with a reason)": call(() => tokenAddress, () => token.encodeFunctionData("transfer", [owner.address, 10n ** 30n]), () => ({ from: stranger })),
    "a loop of hashes and stores": call(() => probeAddress, () => probe.encodeFunctionData("spin", [40])),
    "stores into fresh slots": call(() => probeAddress, () => probe.encodeFunctionData("fill", [6])),
    "a cleared slot (refund)": call(() => probeAddress, () => probe.encodeFunctionData("clearStored")),
    "a panic": call(() => probeAddress, () => probe.encodeFunctionData("divide", [1n, 0n])),
    "a revert without data": call(() => probeAddress, () => probe.encodeFunctionData("failWithoutData")),
    "the sender's balance seen after the gas is paid, with value": call(() => probeAddress, () => probe.encodeFunctionData("context"), () => ({ gasPrice: 7n, value: 11n })),
    "out of gas": call(() => probeAddress, () => probe.encodeFunctionData("spinForever"), () => ({ gasLimit: 80_000n })),
    "a nested call": call(() => probeAddress, () => probe.encodeFunctionData("forward", [hex(childAddress), 12n])),
    // The coinbase is warm from the start (EIP-3651): a cold call would cost 2,500 gas more.
    "a nested call to the coinbase": call(() => probeAddress, () => probe.encodeFunctionData("forward", [hex(block.header.coinbase.bytes), 1n])),
    "a call to an account without code": call(() => stranger, () => "0x", () => ({ value: 1n })),
    "too little gas for the intrinsic cost": call(() => tokenAddress, () => token.encodeFunctionData("balanceOf", [owner.address]), () => ({ gasLimit: 21_100n })),
    "a sender that cannot pay": call(() => probeAddress, () => probe.encodeFunctionData("context"), () => ({ from: stranger, gasPrice: 1n })),
    "a sender with code": call(() => tokenAddress, () => token.encodeFunctionData("balanceOf", [owner.address]), () => ({ from: probeAddress })),
    "a creation": call(() => undefined, () => compileFixture("Probe.sol", "Probe").bytecode),
  };

  for (const [name, make] of Object.entries(cases)) {
    it(name, async () => {
      const built = make();
      for (const measurements of [{}, { gasSlack: true, framesOutOfGas: true }]) {
        const measured = JSON.stringify(measurements);
        const asTransaction = comparable(await outcomeOf(() => runMessageCallAsTransaction(engine, block, built, undefined, undefined, measurements)));
        const lean = await outcomeOf(() => runMessageCall(engine, block, built, undefined, undefined, measurements));
        expect(comparable(lean), `lean, ${measured}`).to.deep.equal(asTransaction);
        const onOverlay = await outcomeOf(() => runMessageCall(overlayEngine, block, built, undefined, undefined, measurements));
        expect(comparable(onOverlay), `lean on the overlay, ${measured}`).to.deep.equal(asTransaction);
        const transactionOnOverlay = await outcomeOf(() => runMessageCallAsTransaction(overlayEngine, block, built, undefined, undefined, measurements));
        expect(comparable(transactionOnOverlay), `runTx on the overlay, ${measured}`).to.deep.equal(asTransaction);
      }
    });
  }

  it("leaves the engine's state as it found it", async () => {
    for (const each of [engine, overlayEngine]) {
      const before = await each.state.getStateRoot();
      for (const make of Object.values(cases)) await outcomeOf(() => runMessageCall(each, block, make(), undefined, undefined));
      expect(Buffer.from(await each.state.getStateRoot()).toString("hex")).to.equal(Buffer.from(before).toString("hex"));
    }
  });
});
