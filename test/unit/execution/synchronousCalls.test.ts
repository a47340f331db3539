// The synchronous call interpreter (execution/synchronousCalls.ts) against the existing path
// (runMessageCall on the engine, the oracle): every call it answers must answer the same kind,
// return data, gas used and gas consumed. Over the repo's contracts (a token, the probe and the frames
// of the other execution tests), over seeded random programs (arithmetic, memory, storage with
// refunds, transient storage, nested calls of every kind with value and with too little gas, reverts,
// GAS, invalid jumps, stack errors) at gas limits around each program's exact need, and over the
// calls it must give up on, which still answer through the call service as without it.
import { expect } from "chai";
import { createEVM } from "@ethereumjs/evm";
import { AbiCoder, Interface, Wallet, getBytes, getCreateAddress, keccak256, toUtf8Bytes } from "ethers";
import type { Block } from "../../../src/chain/block.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { CallService } from "../../../src/execution/callService.js";
import { createExecutionBlock, createExecutionEngine, type ExecutionBlockContext, type ExecutionEngine } from "../../../src/execution/engine.js";
import { runMessageCall, type MessageCall, type MessageCallResult } from "../../../src/execution/messageCall.js";
import { runSynchronousCall, staticGas } from "../../../src/execution/synchronousCalls.js";
import { openChainServices, type ChainServices } from "../../../src/node/chainServices.js";
import { defaultNodeOptions } from "../../../src/node/options.js";
import type { StoredStateReads } from "../../../src/state/overlayStateManager.js";
import { compileFixture } from "../../helpers/solidity.js";
import { seededRandom } from "../../helpers/seededRandom.js";

type Outcome = { refused: string } | { kind: string; returnData?: string; reason?: string; gasUsed: string; gasConsumed: string };

function comparable(result: MessageCallResult): Outcome {
  return {
    kind: result.kind,
    ...("returnData" in result ? { returnData: Buffer.from(result.returnData).toString("hex") } : { reason: result.reason }),
    gasUsed: result.gasUsed.toString(),
    gasConsumed: result.gasConsumed.toString(),
  };
}

const unlimited = () => ({ steps: 10_000_000, deadline: Number.POSITIVE_INFINITY });

// Bytecode assembly for the generated programs.
function push(value: bigint): number[] {
  if (value === 0n) return [0x5f];
  const bytes = [...getBytes("0x" + value.toString(16).padStart(Math.ceil(value.toString(16).length / 2) * 2, "0"))];
  return [0x5f + bytes.length, ...bytes];
}

describe("execution/synchronousCalls: the synchronous interpreter against the engine", function () {
  this.timeout(300_000);
  let services: ChainServices;
  let engine: ExecutionEngine;
  let head: Block;
  let context: ExecutionBlockContext;
  let reads: StoredStateReads;
  const owner = new Wallet(keccak256(toUtf8Bytes("cow")));
  const from = getBytes(owner.address);
  const stranger = getBytes("0x00000000000000000000000000000000000000aa");
  const tokenInterface = new Interface(compileFixture("Token.sol", "Token").abi as never);
  const probe = new Interface(compileFixture("Probe.sol", "Probe").abi as never);
  const frames = new Interface(compileFixture("Frames.sol", "Frames").abi as never);
  let nonce = 0;
  let tokenAddress: Uint8Array;
  let probeAddress: Uint8Array;
  let childAddress: Uint8Array;
  let framesAddress: Uint8Array;
  /** Generated contracts, in the order deployed: each calls only those after it (no recursion without end). */
  const generated: Uint8Array[] = [];
  const generatedCount = 14;
  const edges: Record<"copyPastReturnData" | "noopStore" | "callWithGas" | "clearThenRevert" | "valueTwice" | "originCodeHash", Uint8Array> = {} as never;
  const next = seededRandom(39);
  const pick = (count: number) => next() % count;

  const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString("hex")}`;
  const deploy = async (bytecode: string, value = 0n): Promise<Uint8Array> => {
    const raw = await owner.signTransaction({ type: 0, chainId: 33n, nonce: nonce++, gasPrice: 0n, gasLimit: 5_000_000n, data: bytecode, value });
    const transaction = decodeRawTransaction(getBytes(raw), services.common);
    await services.pool.add(transaction);
    await services.miner.mineUntilIncluded(transaction);
    const receipts = await services.chain.getReceipts(services.chain.head.hash);
    expect(receipts![0]!.success, "deployed").to.equal(true);
    return receipts![0]!.contractAddress!;
  };

  /** A random program: snippets that leave the stack as they found it, results stored in memory, an ending. */
  const generateProgram = (index: number, addresses: Uint8Array[]): number[] => {
    const code: number[] = [];
    const word = () => {
      const kind = pick(6);
      if (kind === 0) return 0n;
      if (kind === 1) return BigInt(pick(300));
      if (kind === 2) return (1n << 256n) - 1n - BigInt(pick(5));
      if (kind === 3) return 1n << BigInt(pick(256));
      return BigInt("0x" + Buffer.from(Array.from({ length: 32 }, () => next() & 0xff)).toString("hex"));
    };
    const slot = () => BigInt(pick(6));
    let resultOffset = 0;
    const keep = () => {
      // The word on top goes to memory (returned at the end).
      code.push(...push(BigInt(resultOffset)), 0x52);
      resultOffset = (resultOffset + 32) % 512;
    };
    const target = (): bigint => {
      const later = addresses.slice(index + 1);
      const choices: bigint[] = [BigInt("0x" + Buffer.from(stranger).toString("hex")), 0xdeadn, BigInt("0x" + Buffer.from(context.coinbase).toString("hex"))];
      for (const address of later) choices.push(BigInt("0x" + Buffer.from(address).toString("hex")), BigInt("0x" + Buffer.from(address).toString("hex")));
      if (pick(60) === 0) choices.push(BigInt(1 + pick(9)));
      return choices[pick(choices.length)]!;
    };
    const snippets = 4 + pick(14);
    for (let count = 0; count < snippets; count++) {
      switch (pick(16)) {
        case 0:
        case 1: {
          const binary = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x18, 0x1a, 0x1b, 0x1c, 0x1d];
          code.push(...push(word()), ...push(word()), binary[pick(binary.length)]!);
          keep();
          break;
        }
        case 2:
          code.push(...push(word()), ...push(word()), ...push(word()), pick(2) === 0 ? 0x08 : 0x09);
          keep();
          break;
        case 3: {
          // Memory: stores, loads, copies; now and then far away (out of gas).
          const offset = pick(30) === 0 ? BigInt(1 + pick(2)) << 32n : BigInt(pick(3000));
          const op = pick(4);
          if (op === 0) code.push(...push(word()), ...push(offset), 0x52);
          else if (op === 1) code.push(...push(word()), ...push(offset), 0x53);
          else if (op === 2) {
            code.push(...push(offset), 0x51);
            keep();
          } else code.push(...push(BigInt(pick(200))), ...push(BigInt(pick(600))), ...push(offset), 0x5e);
          break;
        }
        case 4: {
          // Storage: loads and stores of a few slots (some set at deployment), zeros and restores.
          const key = slot();
          if (pick(2) === 0) {
            code.push(...push(key), 0x54);
            keep();
          } else {
            const values = [0n, 1n, 2n, 5n, word()];
            code.push(...push(values[pick(values.length)]!), ...push(key), 0x55);
          }
          break;
        }
        case 5: {
          const key = slot();
          if (pick(2) === 0) {
            code.push(...push(key), 0x5c);
            keep();
          } else code.push(...push(word()), ...push(key), 0x5d);
          break;
        }
        case 6:
          code.push(0x5a);
          keep();
          break;
        case 7:
          code.push(...push(BigInt(pick(300))), ...push(BigInt(pick(400))), 0x20);
          keep();
          break;
        case 8: {
          const op = pick(3);
          if (op === 0) {
            code.push(...push(BigInt(pick(70))), 0x35);
            keep();
          } else if (op === 1) {
            code.push(0x36);
            keep();
          } else code.push(...push(BigInt(pick(80))), ...push(BigInt(pick(70))), ...push(BigInt(pick(600))), 0x37);
          break;
        }
        case 9:
        case 10: {
          // A nested call of any kind, with all the gas, a little, or more than there is.
          const kinds = [0xf1, 0xf2, 0xf4, 0xfa];
          const op = kinds[pick(kinds.length)]!;
          const outSize = BigInt(pick(96));
          const outOffset = BigInt(pick(500));
          const inSize = BigInt(pick(100));
          const inOffset = BigInt(pick(500));
          code.push(...push(outSize), ...push(outOffset), ...push(inSize), ...push(inOffset));
          if (op === 0xf1 || op === 0xf2) code.push(...push(pick(3) === 0 ? BigInt(pick(1000)) : 0n));
          code.push(...push(target()));
          const gas = pick(4);
          if (gas === 0) code.push(0x5a);
          else if (gas === 1) code.push(...push(BigInt(pick(60_000))));
          else if (gas === 2) code.push(...push(BigInt(pick(3_000))));
          else code.push(...push((1n << 255n) + BigInt(pick(9))));
          code.push(op);
          keep();
          code.push(0x3d);
          keep();
          // The return data copied: all of it, or now and then past its end (a halt).
          if (pick(4) === 0) code.push(...push(BigInt(pick(40))), ...push(BigInt(pick(40))), ...push(BigInt(pick(300))), 0x3e);
          else if (pick(2) === 0) code.push(0x3d, 0x5f, ...push(BigInt(pick(300))), 0x3e);
          break;
        }
        case 11: {
          const op = [0x31, 0x3b, 0x3f][pick(3)]!;
          code.push(...push(target()), op);
          keep();
          if (pick(3) === 0) code.push(...push(BigInt(pick(64))), ...push(BigInt(pick(20))), ...push(BigInt(pick(300))), ...push(target()), 0x3c);
          break;
        }
        case 12: {
          const context = [0x30, 0x32, 0x33, 0x34, 0x38, 0x3a, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x58, 0x59];
          code.push(context[pick(context.length)]!);
          keep();
          if (pick(4) === 0) code.push(...push(BigInt(pick(40))), ...push(BigInt(pick(30))), ...push(BigInt(pick(300))), 0x39);
          break;
        }
        case 13: {
          const topics = pick(5);
          for (let topic = 0; topic < topics; topic++) code.push(...push(word()));
          code.push(...push(BigInt(pick(100))), ...push(BigInt(pick(300))), 0xa0 + topics);
          break;
        }
        case 14: {
          // A forward jump over a byte that is not an instruction, taken or not; rarely a jump nowhere.
          const conditional = pick(2) === 0;
          if (conditional) code.push(...push(BigInt(pick(2))));
          const at = code.length;
          // Not taken, JUMPI falls through to PUSH0 POP; JUMP always jumps over an invalid opcode.
          if (conditional) code.push(0x61, 0, 0, 0x57, 0x5f, 0x50, 0x5b);
          else code.push(0x61, 0, 0, 0x56, 0xfe, 0x5b);
          const destination = pick(15) === 0 ? at + 4 : code.length - 1;
          code[at + 1] = destination >> 8;
          code[at + 2] = destination & 0xff;
          break;
        }
        default:
          // Now and then a few random bytes (stack errors, invalid opcodes, whatever comes) or a jump
          // to no destination; otherwise a signed division.
          if (pick(8) === 0) {
            if (pick(2) === 0) for (let byte = 1 + pick(3); byte > 0; byte--) code.push(next() & 0xff);
            else code.push(...push(BigInt(pick(3))), 0x56);
          } else {
            code.push(...push(word()), ...push(word()), pick(2) === 0 ? 0x05 : 0x07);
            keep();
          }
      }
    }
    const ending = pick(5);
    if (ending === 0) code.push(0x00);
    else if (ending === 1) code.push(...push(BigInt(pick(200))), ...push(BigInt(pick(64))), 0xfd);
    else if (ending !== 2) code.push(...push(512n), 0x5f, 0xf3);
    return code;
  };

  /** Creation code that sets a few slots (random ones unless given) and returns `runtime`. */
  const creationCode = (runtime: number[], slots?: [bigint, bigint][]): string => {
    const prefix: number[] = [];
    if (slots !== undefined) for (const [key, value] of slots) prefix.push(...push(value), ...push(key), 0x55);
    else for (let key = 0; key < 4; key++) if (pick(3) !== 0) prefix.push(...push(BigInt(pick(3)) * BigInt(1 + pick(1000))), ...push(BigInt(key)), 0x55);
    // PUSH2 length, DUP1, PUSH2 offset, PUSH0, CODECOPY, PUSH0, RETURN: 11 bytes.
    const offset = prefix.length + 11;
    prefix.push(0x61, runtime.length >> 8, runtime.length & 0xff, 0x80, 0x61, offset >> 8, offset & 0xff, 0x5f, 0x39, 0x5f, 0xf3);
    return "0x" + Buffer.from([...prefix, ...runtime]).toString("hex");
  };

  before(async () => {
    const network = findNetworkProfile(33)!;
    services = await openChainServices(network, { dataDir: undefined, inMemory: true }, { ...defaultNodeOptions.chain }, createLogger("error"));
    const tokenArguments = AbiCoder.defaultAbiCoder().encode(["string", "string", "uint256"], ["Sync", "SYN", 10n ** 24n]).slice(2);
    tokenAddress = await deploy(compileFixture("Token.sol", "Token").bytecode + tokenArguments);
    probeAddress = await deploy(compileFixture("Probe.sol", "Probe").bytecode);
    childAddress = await deploy(compileFixture("Probe.sol", "Probe").bytecode);
    framesAddress = await deploy(compileFixture("Frames.sol", "Frames").bytecode);
    context = { number: 0n, coinbase: services.chain.head.header.fields.coinbase, timestamp: 0n, gasLimit: 0n, baseFee: 0n, difficulty: 0n };
    const addresses = Array.from({ length: generatedCount }, (_, index) => getBytes(getCreateAddress({ from: owner.address, nonce: nonce + index })));
    for (let index = 0; index < generatedCount; index++) {
      const address = await deploy(creationCode(generateProgram(index, addresses)), pick(2) === 0 ? 10_000n : 0n);
      expect(Buffer.from(address).toString("hex")).to.equal(Buffer.from(addresses[index]!).toString("hex"));
      generated.push(address);
    }
    // Hand-written edges (see "answers the edges the random programs rarely reach").
    const returner = await deploy(creationCode([0x60, 0x2a, 0x5f, 0x52, 0x60, 0x20, 0x5f, 0xf3], []));
    edges.copyPastReturnData = await deploy(creationCode([0x5f, 0x5f, 0x5f, 0x5f, 0x5f, ...push(BigInt(hex(returner))), 0x5a, 0xf1, 0x50, 0x60, 0x20, 0x60, 0x10, 0x5f, 0x3e, 0x60, 0x20, 0x5f, 0xf3], []));
    edges.noopStore = await deploy(creationCode([0x5f, 0x54, 0x50, 0x5f, 0x5f, 0x55, 0x00], []));
    edges.callWithGas = await deploy(creationCode([0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x60, 0x20, 0x35, 0x5f, 0x35, 0xf1, 0x5f, 0x52, 0x60, 0x20, 0x5f, 0xf3], []));
    edges.clearThenRevert = await deploy(creationCode([0x5f, 0x5f, 0x55, 0x5f, 0x5f, 0xfd], [[0n, 5n]]));
    const valueCall = (to: number[]) => [0x5f, 0x5f, 0x5f, 0x5f, 0x60, 0x01, ...to, 0x5f, 0xf1, 0x50];
    edges.valueTwice = await deploy(creationCode([...valueCall(push(0xdead01n)), ...valueCall(push(0xdead01n)), ...valueCall([0x32]), 0x00], []), 100n);
    edges.originCodeHash = await deploy(creationCode([0x32, 0x3f, 0x5f, 0x52, 0x60, 0x20, 0x5f, 0xf3], []));
    head = services.chain.head;
    const fields = head.header.fields;
    context = { number: head.number, coinbase: fields.coinbase, timestamp: fields.timestamp, gasLimit: fields.gasLimit, baseFee: fields.minimumGasPrice, difficulty: fields.difficulty };
    engine = await createExecutionEngine(services.common, services.state.overlayAt(fields.stateRoot), async () => undefined);
    reads = services.state.overlayAt(fields.stateRoot).storedReads();
  });
  after(() => services?.close());

  const engineBlocks = new Map<bigint, ReturnType<typeof createExecutionBlock>>();
  const onEngine = async (call: MessageCall): Promise<Outcome> => {
    // As CallService runs it: a free call with a base fee of zero.
    const baseFee = call.gasPrice === 0n ? 0n : context.baseFee;
    let block = engineBlocks.get(baseFee);
    if (block === undefined) engineBlocks.set(baseFee, (block = createExecutionBlock(services.common, { ...context, baseFee })));
    try {
      return comparable(await runMessageCall(engine, block, call, undefined, undefined));
    } catch (error) {
      return { refused: (error as Error).message };
    }
  };
  const synchronously = (call: MessageCall): Outcome | undefined => {
    const result = runSynchronousCall(reads, context, call, services.common, unlimited());
    return result === undefined ? undefined : comparable(result);
  };

  /** Both paths; the synchronous one's answer, when it gives one, must be the engine's. */
  const compare = async (call: MessageCall, label: string): Promise<{ handled: boolean; engine: Outcome }> => {
    const expected = await onEngine(call);
    const actual = synchronously(call);
    if (actual !== undefined) expect(actual, label).to.deep.equal(expected);
    return { handled: actual !== undefined, engine: expected };
  };

  const call = (to: Uint8Array, data: string, extra: Partial<MessageCall> = {}): MessageCall => ({ from, to, gasLimit: 3_000_000n, gasPrice: 0n, value: 0n, data: getBytes(data), ...extra });

  it("has the engine's opcode table, precompiles and gas parameters", async () => {
    const evm = await createEVM({ common: services.common });
    const opcodes = (evm as unknown as { _opcodeMap: ({ opcodeInfo: { fee: number; isInvalid: boolean } } | undefined)[] })._opcodeMap;
    for (let op = 0; op < 256; op++) {
      const info = opcodes[op]?.opcodeInfo;
      expect(staticGas[op], `opcode 0x${op.toString(16)}`).to.equal(info === undefined || info.isInvalid ? -1 : info.fee);
    }
    expect([...evm.precompiles.keys()]).to.deep.equal(Array.from({ length: 9 }, (_, index) => (index + 1).toString(16).padStart(40, "0")));
    const parameters: Record<string, bigint> = {
      sstoreSentryEIP2200Gas: 2300n,
      sstoreNoopEIP2200Gas: 100n,
      sstoreInitEIP2200Gas: 20000n,
      sstoreCleanEIP2200Gas: 2900n,
      sstoreDirtyEIP2200Gas: 100n,
      sstoreClearRefundEIP2200Gas: 4800n,
      sstoreInitRefundEIP2200Gas: 19900n,
      sstoreCleanRefundEIP2200Gas: 4900n,
      sstoreResetGas: 5000n,
      coldsloadGas: 2100n,
      warmstoragereadGas: 100n,
      coldaccountaccessGas: 2600n,
      callValueTransferGas: 9000n,
      callNewAccountGas: 25000n,
      callStipendGas: 2300n,
      memoryGas: 3n,
      quadCoefficientDivGas: 512n,
      copyGas: 3n,
      keccak256WordGas: 6n,
      logTopicGas: 375n,
      logDataGas: 8n,
      expByteGas: 50n,
      txGas: 21000n,
      txDataZeroGas: 4n,
      txDataNonZeroGas: 16n,
      maxRefundQuotient: 5n,
      stackLimit: 1024n,
    };
    for (const [name, value] of Object.entries(parameters)) expect(services.common.param(name), name).to.equal(value);
    for (const eip of [2929, 3651, 3529, 3855, 1153, 5656, 4399]) expect(services.common.isActivatedEIP(eip), `EIP-${eip}`).to.equal(true);
    for (const eip of [3540, 6780, 7702, 4844]) expect(services.common.isActivatedEIP(eip), `EIP-${eip}`).to.equal(false);
  });

  it("answers the repo's contracts as the engine does", async () => {
    const cases: [string, MessageCall][] = [
      ["a token balance", call(tokenAddress, tokenInterface.encodeFunctionData("balanceOf", [owner.address]))],
      ["a token balance of an empty account", call(tokenAddress, tokenInterface.encodeFunctionData("balanceOf", [hex(stranger)]))],
      ["a token transfer", call(tokenAddress, tokenInterface.encodeFunctionData("transfer", ["0x00000000000000000000000000000000000000bb", 5n]))],
      ["a transfer of the whole balance back and forth", call(tokenAddress, tokenInterface.encodeFunctionData("transfer", [owner.address, 10n ** 24n]))],
      ["a transfer beyond the balance", call(tokenAddress, tokenInterface.encodeFunctionData("transfer", [owner.address, 10n ** 30n]), { from: stranger })],
      ["an approval", call(tokenAddress, tokenInterface.encodeFunctionData("approve", [hex(stranger), 77n]))],
      ["a transferFrom without allowance", call(tokenAddress, tokenInterface.encodeFunctionData("transferFrom", [owner.address, hex(stranger), 1n]), { from: stranger })],
      ["a loop of hashes and stores", call(probeAddress, probe.encodeFunctionData("spin", [40]))],
      ["stores into fresh slots", call(probeAddress, probe.encodeFunctionData("fill", [6]))],
      ["a cleared slot (refund)", call(probeAddress, probe.encodeFunctionData("clearStored"))],
      ["a stored value set back (refund)", call(probeAddress, probe.encodeFunctionData("setStored", [7n]))],
      ["a panic", call(probeAddress, probe.encodeFunctionData("divide", [1n, 0n]))],
      ["a reason", call(probeAddress, probe.encodeFunctionData("failWithReason", ["no"]))],
      ["a custom error", call(probeAddress, probe.encodeFunctionData("failWithCustomError"))],
      ["a revert without data", call(probeAddress, probe.encodeFunctionData("failWithoutData"))],
      ["the context with a price and value", call(probeAddress, probe.encodeFunctionData("context"), { gasPrice: 7n, value: 11n })],
      ["a nested call", call(probeAddress, probe.encodeFunctionData("forward", [hex(childAddress), 12n]))],
      ["a nested call to the coinbase", call(probeAddress, probe.encodeFunctionData("forward", [hex(context.coinbase), 1n]))],
      ["a nested call out of gas, caught", call(probeAddress, probe.encodeFunctionData("tryForward", [hex(childAddress), 400n]), { gasLimit: 200_000n })],
      ["a nested call out of gas, low-level", call(probeAddress, probe.encodeFunctionData("callForward", [hex(childAddress), 400n]), { gasLimit: 150_000n })],
      ["a nested call out of gas, required", call(probeAddress, probe.encodeFunctionData("forward", [hex(childAddress), 400n]), { gasLimit: 150_000n })],
      ["a memory churn", call(probeAddress, probe.encodeFunctionData("churn", [50]))],
      ["a call to an account without code, with value", call(stranger, "0x", { value: 1n })],
      ["frames: a note", call(framesAddress, frames.encodeFunctionData("note", [3n]), { value: 5n })],
      ["frames: a note then a failure", call(framesAddress, frames.encodeFunctionData("noteThenFail", [3n]))],
      ["frames: the count", call(framesAddress, frames.encodeFunctionData("count"))],
    ];
    let handled = 0;
    for (const [name, made] of cases) {
      const { handled: answered, engine: expected } = await compare(made, name);
      if (answered) handled++;
      else expect(expected, `${name}: given up only on a halt`).to.have.property("kind", "halt");
      // Around the gas the call needs: one less, exactly it, one more.
      if ("gasConsumed" in expected && expected.kind !== "halt") {
        const needed = BigInt(expected.gasConsumed);
        for (const gasLimit of [needed - 1n, needed, needed + 1n, needed + 2_300n, (needed * 64n) / 63n]) if (gasLimit >= 21_000n) await compare({ ...made, gasLimit }, `${name} at ${gasLimit}`);
      }
    }
    expect(handled).to.equal(cases.length);
  });

  it("answers the edges the random programs rarely reach", async () => {
    // Return data copied past its end: the engine halts the top frame, so this must be given up.
    const copied = await compare(call(edges.copyPastReturnData, "0x"), "return data copied past its end");
    expect(copied.engine).to.have.property("kind", "halt");
    expect(copied.handled).to.equal(false);
    // SSTORE with exactly the sentry's 2,300 gas left halts the callee, with one more it does not.
    const gasAndTarget = (gas: number, target: Uint8Array) => "0x" + gas.toString(16).padStart(64, "0") + Buffer.from(target).toString("hex").padStart(64, "0");
    const flags = new Set<string>();
    for (let gas = 4_400; gas <= 4_416; gas++) {
      const { engine: answer, handled } = await compare(call(edges.callWithGas, gasAndTarget(gas, edges.noopStore)), `SSTORE with a callee gas of ${gas}`);
      expect(handled).to.equal(true);
      if ("returnData" in answer) flags.add(answer.returnData!);
    }
    expect(flags.size, "the callee both failed and succeeded").to.equal(2);
    // A child's refund goes with its revert.
    const refunded = await compare(call(edges.callWithGas, gasAndTarget(100_000, edges.clearThenRevert)), "a refund in a reverted child");
    expect(refunded.handled).to.equal(true);
    // The second value transfer to a fresh account finds it no longer empty; the sender, its nonce
    // raised, is not empty either, even without an account before the call.
    for (const sender of [from, stranger]) {
      expect((await compare(call(edges.valueTwice, "0x", { from: sender }), "value to a fresh account twice, then to the sender")).handled).to.equal(true);
      const hashed = await compare(call(edges.originCodeHash, "0x", { from: sender }), "the sender's code hash");
      expect(hashed.handled).to.equal(true);
      expect(hashed.engine).to.have.property("returnData", keccak256(new Uint8Array(0)).slice(2));
    }
  });

  it("answers seeded random programs as the engine does, at the edges of their gas", async () => {
    let compared = 0;
    let handled = 0;
    const kinds = new Map<string, number>();
    for (let round = 0; round < 400; round++) {
      const to = generated[pick(generated.length)]!;
      const data = Buffer.from(Array.from({ length: pick(70) }, () => (pick(3) === 0 ? 0 : next() & 0xff))).toString("hex");
      const made = call(to, "0x" + data, { value: pick(4) === 0 ? BigInt(pick(1000)) : 0n, gasPrice: pick(5) === 0 ? BigInt(1 + pick(3)) : 0n, gasLimit: BigInt(30_000 + pick(1_000_000)), from: pick(6) === 0 ? stranger : from });
      const limits = [made.gasLimit];
      const first = await compare(made, `program ${hex(to)} round ${round}`);
      compared++;
      if (first.handled) handled++;
      const kind = "kind" in first.engine ? (first.engine.kind === "halt" ? `halt ${first.engine.reason?.slice(0, 20)}` : first.engine.kind) : "refused";
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      if ("gasConsumed" in first.engine) {
        const needed = BigInt(first.engine.gasConsumed);
        limits.push(needed - 1n, needed, needed + 1n, needed - BigInt(pick(3000)), needed + BigInt(pick(3000)));
      }
      for (const gasLimit of limits.slice(1)) {
        if (gasLimit < 21_000n) continue;
        const edge = await compare({ ...made, gasLimit }, `program ${hex(to)} round ${round} at ${gasLimit}`);
        compared++;
        if (edge.handled) handled++;
      }
    }
    // The comparison means something only if most calls were answered, and every kind came up.
    expect(handled, `answered ${handled} of ${compared}, ${JSON.stringify([...kinds])}`).to.be.greaterThan(compared / 3);
    expect(kinds.get("success") ?? 0, JSON.stringify([...kinds])).to.be.greaterThan(20);
    expect(kinds.get("revert") ?? 0, JSON.stringify([...kinds])).to.be.greaterThan(5);
  });

  it("gives up on what it does not run, and the call service still answers as without it", async () => {
    const givenUp: [string, MessageCall][] = [
      ["a creation", { ...call(tokenAddress, "0x"), to: undefined, data: getBytes(compileFixture("Probe.sol", "Probe").bytecode) }],
      ["a precompile, a creation and a self-destruct in the frames", call(framesAddress, frames.encodeFunctionData("nest", [2n]), { value: 8n })],
      ["a call to a precompile", call(getBytes("0x0000000000000000000000000000000000000004"), "0x1234")],
      ["an out-of-gas halt of the top frame", call(probeAddress, probe.encodeFunctionData("spinForever"), { gasLimit: 80_000n })],
      ["an access list", call(tokenAddress, tokenInterface.encodeFunctionData("balanceOf", [owner.address]), { accessList: [{ address: tokenAddress, storageKeys: [] }] })],
      ["too little gas for the intrinsic cost", call(tokenAddress, tokenInterface.encodeFunctionData("balanceOf", [owner.address]), { gasLimit: 21_100n })],
      ["a sender that cannot pay", call(probeAddress, probe.encodeFunctionData("context"), { from: stranger, gasPrice: 1n })],
      ["a sender with code", call(tokenAddress, tokenInterface.encodeFunctionData("balanceOf", [owner.address]), { from: probeAddress })],
    ];
    for (const [name, made] of givenUp) expect(runSynchronousCall(reads, context, made, services.common, unlimited()), name).to.equal(undefined);
    // Past the step budget: given up, not cut short.
    const long = call(probeAddress, probe.encodeFunctionData("spin", [400]));
    expect(runSynchronousCall(reads, context, long, services.common, { steps: 1_000, deadline: Number.POSITIVE_INFINITY }), "past the step budget").to.equal(undefined);
    expect(runSynchronousCall(reads, context, long, services.common, { steps: 10_000_000, deadline: performance.now() - 1 }), "past the deadline").to.equal(undefined);

    // Through the call service, with and without the synchronous path: the same answers.
    const limits = { gasCap: 50_000_000n, timeLimitMs: 5_000 };
    const pending = { execute: () => Promise.reject(new Error("no pending block here")) };
    const withSync = new CallService(services.common, services.state, async () => undefined, pending, limits, "all");
    const withoutSync = new CallService(services.common, services.state, async () => undefined, pending, limits, "none");
    const answer = async (service: CallService, made: MessageCall) => {
      try {
        return comparable(await service.call({ kind: "block", block: head }, made));
      } catch (error) {
        return { refused: (error as Error).message };
      }
    };
    for (const [name, made] of [...givenUp.filter(([name]) => name !== "an access list"), ["the long spin", long] as [string, MessageCall], ["a token balance", call(tokenAddress, tokenInterface.encodeFunctionData("balanceOf", [owner.address]))] as [string, MessageCall]]) {
      expect(await answer(withSync, made), name).to.deep.equal(await answer(withoutSync, made));
    }
  });
});
