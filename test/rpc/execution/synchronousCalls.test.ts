// eth_call over HTTP with the synchronous call path (execution/synchronousCalls.ts) and without it:
// two nodes on disk (each with its call worker), the same transactions mined in each, and the same
// calls sent to both, one at a time (tried on the main thread) and in batches (handed to the
// worker). Every answer, results and errors alike, must be the same JSON.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AbiCoder, Interface, Wallet, getCreateAddress, keccak256, toUtf8Bytes } from "ethers";
import { postJson } from "../../helpers/http.js";
import { compileFixture } from "../../helpers/solidity.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const owner = new Wallet(keccak256(toUtf8Bytes("cow")));
const stranger = "0x00000000000000000000000000000000000000aa";

describe("execution: eth_call answers with and without the synchronous path", function () {
  this.timeout(120_000);
  const nodes: TestNode[] = [];
  const directories: string[] = [];
  const token = compileFixture("Token.sol", "Token");
  const probe = compileFixture("Probe.sol", "Probe");
  const frames = compileFixture("Frames.sol", "Frames");
  const tokenInterface = new Interface(token.abi as never);
  const probeInterface = new Interface(probe.abi as never);
  const framesInterface = new Interface(frames.abi as never);
  const addresses = [0, 1, 2, 3].map((nonce) => getCreateAddress({ from: owner.address, nonce }).toLowerCase());
  const [tokenAddress, probeAddress, childAddress, framesAddress] = addresses as [string, string, string, string];

  before(async () => {
    const tokenArguments = AbiCoder.defaultAbiCoder().encode(["string", "string", "uint256"], ["Sync", "SYN", 10n ** 24n]).slice(2);
    const deployments = [token.bytecode + tokenArguments, probe.bytecode, probe.bytecode, frames.bytecode];
    const raws = await Promise.all(deployments.map((data, nonce) => owner.signTransaction({ type: 0, chainId: 33n, nonce, gasPrice: 0n, gasLimit: 5_000_000n, data })));
    for (const synchronousCalls of ["worker", "off"] as const) {
      const directory = await mkdtemp(join(tmpdir(), "chain-node-sync-calls-"));
      directories.push(directory);
      const node = await startTestNode({ dataDir: directory, logLevel: "error", chain: { synchronousCalls } });
      nodes.push(node);
      for (const raw of raws) await node.client.eth_sendRawTransaction(raw);
    }
  });
  after(async () => {
    for (const node of nodes) await node.stop();
    for (const directory of directories) await rm(directory, { recursive: true, force: true });
  });

  const calls: [string, Record<string, string>, string?][] = [
    ["a token balance", { to: tokenAddress, data: tokenInterface.encodeFunctionData("balanceOf", [owner.address]) }],
    ["a token transfer", { from: owner.address, to: tokenAddress, data: tokenInterface.encodeFunctionData("transfer", [stranger, 5n]) }],
    ["a transfer beyond the balance", { from: stranger, to: tokenAddress, data: tokenInterface.encodeFunctionData("transfer", [owner.address, 1n]) }],
    ["a panic", { to: probeAddress, data: probeInterface.encodeFunctionData("divide", [1n, 0n]) }],
    ["a custom error", { to: probeAddress, data: probeInterface.encodeFunctionData("failWithCustomError") }],
    ["a revert without data", { to: probeAddress, data: probeInterface.encodeFunctionData("failWithoutData") }],
    ["the context, with a price and value", { from: owner.address, to: probeAddress, data: probeInterface.encodeFunctionData("context"), gasPrice: "0x7", value: "0xb" }],
    ["a nested call", { to: probeAddress, data: probeInterface.encodeFunctionData("forward", [childAddress, 12n]) }],
    ["a nested call out of gas", { to: probeAddress, data: probeInterface.encodeFunctionData("forward", [childAddress, 400n]), gas: "0x249f0" }],
    ["out of gas at the top (given up)", { to: probeAddress, data: probeInterface.encodeFunctionData("spinForever"), gas: "0x13880" }],
    ["a precompile, a creation, a self-destruct (given up)", { to: framesAddress, data: framesInterface.encodeFunctionData("nest", [2n]), value: "0x8", from: owner.address }],
    ["a long loop (past the step budget)", { to: probeAddress, data: probeInterface.encodeFunctionData("spin", [2_000]) }],
    ["a sender that cannot pay", { from: stranger, to: probeAddress, data: probeInterface.encodeFunctionData("context"), gasPrice: "0x1" }],
    ["at the genesis block", { to: tokenAddress, data: tokenInterface.encodeFunctionData("balanceOf", [owner.address]) }, "0x0"],
  ];

  const request = (id: number, call: Record<string, string>, block = "latest") => ({ jsonrpc: "2.0", id, method: "eth_call", params: [call, block] });

  it("answers each call alike, alone and in a batch", async () => {
    const answers: string[][] = [];
    for (const node of nodes) {
      const alone: string[] = [];
      for (const [index, [, call, block]] of calls.entries()) alone.push((await postJson(node.url, request(index, call, block))).text);
      const batch = (await postJson(node.url, calls.map(([, call, block], index) => request(index, call, block)))).text;
      answers.push([...alone, batch]);
    }
    const [withSync, without] = answers as [string[], string[]];
    for (const [index, [name]] of calls.entries()) expect(withSync[index], name).to.equal(without[index]);
    expect(withSync.at(-1), "the batch").to.equal(without.at(-1));
    // The answers are what they should be, not only alike.
    expect(BigInt((JSON.parse(withSync[0]!) as { result: string }).result)).to.equal(10n ** 24n);
    expect((JSON.parse(withSync[2]!) as { error: { code: number } }).error.code).to.equal(-32015);
    expect((JSON.parse(withSync[9]!) as { result: string }).result).to.equal("0x");
  });
});
