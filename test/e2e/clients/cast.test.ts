// Foundry's cast (the @foundry-rs/cast dev dependency: the binary comes in its platform package)
// against a node on 127.0.0.1: sends with --legacy, and without it the refusal (cast's own, or the
// node's naming --legacy when the fees are given), reads over ws://, and `cast run` replays a
// transaction after the ones before it in its block. The binary is run directly: the package's
// bin.mjs wrapper exits 0 whatever cast's exit code was.
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { expect } from "chai";
import { Interface } from "ethers";
import { compileFixture, type CompiledContract } from "../../helpers/solidity.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const require = createRequire(import.meta.url);
const platformArch: Record<string, string> = { x64: "amd64", arm64: "arm64" };
const castPath = require.resolve(`@foundry-rs/cast-${process.platform}-${platformArch[process.arch] ?? process.arch}/bin/cast`);

const stranger = "0x00000000000000000000000000000000000000aa";
const other = "0x00000000000000000000000000000000000000bb";

interface CastRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs cast with a time limit (killed past it); never throws for a non-zero exit. */
function cast(args: string[], timeoutMs = 20_000): Promise<CastRun> {
  return new Promise((resolve, reject) => {
    // No colours, no update notices, no config or keystore from the user's home.
    const env = { ...process.env, NO_COLOR: "1", FOUNDRY_DISABLE_NIGHTLY_WARNING: "1", HOME: "/nonexistent" };
    execFile(castPath, args, { timeout: timeoutMs, killSignal: "SIGKILL", env }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== "number") return reject(new Error(`cast ${args[0]}: ${error.message}; stderr: ${stderr}`));
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
    });
  });
}

async function castOk(args: string[]): Promise<string> {
  const run = await cast(args);
  expect(run.code, `cast ${args.join(" ")}: ${run.stderr}`).to.equal(0);
  return run.stdout.trim();
}

describe("Foundry's cast", function () {
  this.timeout(30_000);
  let node: TestNode;
  let wsUrl: string;
  let cowKey: string;
  let cow1Key: string;
  let cow: string;
  let cow1: string;

  beforeEach(async () => {
    node = await startTestNode();
    wsUrl = node.url.replace(/^http/, "ws");
    const accounts = await node.node.developmentAccounts();
    [cow, cow1] = [accounts[0]!.address, accounts[1]!.address];
    [cowKey, cow1Key] = [accounts[0]!.privateKey, accounts[1]!.privateKey];
  });
  afterEach(async () => {
    await node.stop();
  });

  it("cast send --legacy sends, signed by cast or by the node (--unlocked)", async () => {
    const signed = JSON.parse(await castOk(["send", "--legacy", "--json", "--private-key", cowKey, "--rpc-url", node.url, stranger, "--value", "7"])) as Record<string, unknown>;
    expect(signed).to.deep.include({ status: "0x1", type: "0x0", from: cow, to: stranger });
    const unlocked = JSON.parse(await castOk(["send", "--legacy", "--json", "--unlocked", "--from", cow1, "--rpc-url", node.url, stranger, "--value", "5"])) as Record<string, unknown>;
    expect(unlocked).to.deep.include({ status: "0x1", type: "0x0", from: cow1 });
    expect(await node.client.eth_getBalance(stranger, "latest")).to.equal("0xc");
    expect(await node.client.eth_getTransactionReceipt(signed.transactionHash as string)).to.deep.include({ blockHash: signed.blockHash });
  });

  it("cast send without --legacy fails: cast's own refusal (no base fee), or the node's naming --legacy when the fees are given", async () => {
    // By default cast estimates EIP-1559 fees and stops: the latest block has no baseFeePerGas.
    const estimated = await cast(["send", "--private-key", cowKey, "--rpc-url", node.url, stranger, "--value", "1"]);
    expect(estimated.code).to.equal(1);
    expect(estimated.stderr).to.match(/unsupported feature: eip1559/);
    // With the fees named, cast signs a type-2 transaction and sends it: the node refuses it and says how to send.
    const typed = await cast(["send", "--gas-price", "1", "--priority-gas-price", "0", "--private-key", cowKey, "--rpc-url", node.url, stranger, "--value", "1"]);
    expect(typed.code).to.equal(1);
    expect(typed.stderr).to.match(/-32602/);
    expect(typed.stderr).to.match(/typed transactions are not supported \(type 0x02\); send a legacy \(type 0\) transaction: --legacy in Foundry/);
    expect(await node.client.eth_getTransactionCount(cow, "pending")).to.equal("0x0");
    expect(await node.client.eth_getBalance(stranger, "latest")).to.equal("0x0");
  });

  it("with --typed-transactions, cast's default send (EIP-1559, fees estimated) works", async () => {
    const typedNode = await startTestNode({ chain: { typedTransactions: true } });
    try {
      const sent = JSON.parse(await castOk(["send", "--json", "--private-key", cowKey, "--rpc-url", typedNode.url, stranger, "--value", "3"])) as Record<string, unknown>;
      expect(sent).to.deep.include({ status: "0x1", type: "0x2", from: cow, to: stranger });
      expect(await typedNode.client.eth_getBalance(stranger, "latest")).to.equal("0x3");
    } finally {
      await typedNode.stop();
    }
  });

  it("cast reads over ws://: block-number, balance, chain-id, block", async () => {
    await node.client.evm_mine();
    await node.client.evm_mine();
    expect(await castOk(["block-number", "--rpc-url", wsUrl])).to.equal("2");
    expect(await castOk(["chain-id", "--rpc-url", wsUrl])).to.equal("33");
    expect(BigInt(await castOk(["balance", cow1, "--rpc-url", wsUrl]))).to.equal(BigInt(await node.client.eth_getBalance(cow1, "latest")));
    const block = JSON.parse(await castOk(["block", "latest", "--json", "--rpc-url", wsUrl])) as Record<string, unknown>;
    const ours = (await node.client.eth_getBlockByNumber("latest", false))!;
    expect(block).to.deep.include({ number: "0x2", hash: ours.hash, mixHash: ours.mixHash, stateRoot: ours.stateRoot });
  });

  it("cast run replays a transaction after the ones before it in its block; --quick skips them and it reverts", async () => {
    const token: CompiledContract = compileFixture("Token.sol", "Token");
    const iface = new Interface(token.abi as never);
    const deployed = JSON.parse(
      await castOk(["send", "--legacy", "--json", "--private-key", cowKey, "--rpc-url", node.url, "--create", token.bytecode, "constructor(string,string,uint256)", "Token", "TOK", "1000000"]),
    ) as { contractAddress: string };
    const address = deployed.contractAddress;
    // One block: cow gives cow1 5 tokens, then cow1 (cast, signing) passes them on. The second
    // succeeds only after the first.
    await node.client.evm_setAutomine(false);
    const first = await node.client.eth_sendTransaction({ from: cow, to: address, data: iface.encodeFunctionData("transfer", [cow1, 5]), gas: "0x100000" });
    const second = await castOk(["send", "--legacy", "--async", "--private-key", cow1Key, "--rpc-url", node.url, address, "transfer(address,uint256)", other, "5"]);
    await node.client.evm_mine();
    const receipt = (await node.client.eth_getTransactionReceipt(second))!;
    expect(receipt.status).to.equal("0x1");
    expect((await node.client.eth_getTransactionReceipt(first))!.blockHash).to.equal(receipt.blockHash);

    const replay = await castOk(["run", second, "--rpc-url", wsUrl]);
    expect(replay).to.match(/Executing previous transactions from the block/);
    expect(replay).to.match(/transfer\(0x0{38}bb, 5\)/);
    expect(replay).to.match(/\[Return\] true/);
    expect(replay).to.match(/Transaction successfully executed/);
    expect(replay).to.include(`Gas used: ${BigInt(receipt.gasUsed)}`);

    const quick = await cast(["run", second, "--quick", "--rpc-url", node.url]);
    expect(quick.stdout).to.match(/\[Revert\] balance too low/);
    expect(quick.stderr).to.match(/Transaction failed/);
  });
});
