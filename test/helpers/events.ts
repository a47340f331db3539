// The Events fixture deployed on a test node, with calls that emit chosen topics through
// eth_sendTransaction from a development account (automine: each call is one block).
import { Interface } from "ethers";
import type { RpcClient } from "../../generated/client.js";
import { compileFixture, type CompiledContract } from "./solidity.js";

export const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";

let compiled: CompiledContract | undefined;

/** A 32-byte topic from a small number: 0x00..0n. */
export function topic(value: number): string {
  return `0x${value.toString(16).padStart(64, "0")}`;
}

export interface EventsContract {
  readonly address: string;
  /** Sends one call; answers the transaction hash once mined. */
  emitTwo(first: string, second: string): Promise<string>;
  emitNone(value: number): Promise<string>;
  emitFour(topics: [string, string, string, string]): Promise<string>;
  emitPairs(pairs: [string, string][]): Promise<string>;
}

export async function deployEvents(client: RpcClient): Promise<EventsContract> {
  compiled ??= compileFixture("Events.sol", "Events");
  const iface = new Interface(compiled.abi as never);
  const deployHash = await client.eth_sendTransaction({ from: cow, data: compiled.bytecode, gas: "0x200000" });
  const receipt = await client.eth_getTransactionReceipt(deployHash);
  const address = receipt!.contractAddress!;
  const send = (data: string) => client.eth_sendTransaction({ from: cow, to: address, data, gas: "0x100000" });
  return {
    address,
    emitTwo: (first, second) => send(iface.encodeFunctionData("emitTwo", [first, second])),
    emitNone: (value) => send(iface.encodeFunctionData("emitNone", [value])),
    emitFour: (topics) => send(iface.encodeFunctionData("emitFour", topics)),
    emitPairs: (pairs) => send(iface.encodeFunctionData("emitPairs", [pairs.map(([first]) => first), pairs.map(([, second]) => second)])),
  };
}
