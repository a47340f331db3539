// chain-node export and chain-node import as a user runs them: the built command on real data
// dirs, a chain made by a node under automine (deployments, token transfers, logs, a reverted
// transaction in every few blocks, a reorganisation by an imported branch, an uncle), and the
// imported chain compared with the original over JSON-RPC.
import { spawnSync } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { Interface } from "ethers";
import { cliPath, commandRuntimeFlags, startNodeProcess } from "../helpers/nodeProcess.js";
import { compileFixture } from "../helpers/solidity.js";

function runCli(args: string[], timeout = 60_000) {
  return spawnSync(process.execPath, [...commandRuntimeFlags(), cliPath, ...args], { encoding: "utf8", timeout });
}

interface RpcAnswer {
  result?: unknown;
  error?: { message: string };
}

async function rpcBatch(url: string, calls: readonly [string, unknown[]][]): Promise<unknown[]> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(calls.map(([method, params], id) => ({ jsonrpc: "2.0", id, method, params }))),
    signal: AbortSignal.timeout(20_000),
  });
  const answers = ((await response.json()) as (RpcAnswer & { id: number })[]).sort((a, b) => a.id - b.id);
  return answers.map((answer, index) => {
    if (answer.error !== undefined) throw new Error(`${calls[index]![0]}: ${answer.error.message}`);
    return answer.result;
  });
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  return (await rpcBatch(url, [[method, params]]))[0] as T;
}

interface BlockJson {
  number: string;
  hash: string;
  stateRoot: string;
  transactions: string[];
}

const word = (value: bigint | string) => (typeof value === "string" ? value.slice(2) : value.toString(16)).padStart(64, "0");

/**
 * Mines, under automine, a chain of `rounds` * 10 + 3 blocks on `url`: two token deployments and
 * one of the Events contract, then rounds of token transfers (a Transfer log each), value
 * transfers, Events logs with two topics and one reverted token transfer (status 0). Answers the
 * hashes of every transaction sent.
 */
async function mineMixedChain(url: string, rounds: number): Promise<string[]> {
  const accounts = await rpc<string[]>(url, "eth_accounts", []);
  const [owner, sender] = [accounts[0]!, accounts[1]!];
  const token = compileFixture("Token.sol", "Token");
  const events = compileFixture("Events.sol", "Events");
  const tokenInterface = new Interface(token.abi as never[]);
  const eventsInterface = new Interface(events.abi as never[]);
  const constructorArguments = tokenInterface.encodeDeploy(["Test", "TST", 10n ** 24n]).slice(2);
  const deployments = await rpcBatch(url, [
    ["eth_sendTransaction", [{ from: owner, data: `${token.bytecode}${constructorArguments}`, gas: "0x2dc6c0" }]],
    ["eth_sendTransaction", [{ from: owner, data: events.bytecode, gas: "0x2dc6c0" }]],
    ["eth_sendTransaction", [{ from: accounts[2], data: `${token.bytecode}${constructorArguments}`, gas: "0x2dc6c0" }]],
  ]);
  const receipts = (await rpcBatch(url, deployments.map((hash) => ["eth_getTransactionReceipt", [hash]]))) as { contractAddress: string; status: string }[];
  expect(receipts.map(({ status }) => status)).to.deep.equal(["0x1", "0x1", "0x1"]);
  const [tokenAddress, eventsAddress, secondToken] = receipts.map(({ contractAddress }) => contractAddress);
  const hashes = [...(deployments as string[])];
  for (let round = 0; round < rounds; round++) {
    const calls: [string, unknown[]][] = [];
    for (let index = 0; index < 4; index++) {
      const to = accounts[(round + index) % accounts.length]!;
      calls.push(["eth_sendTransaction", [{ from: owner, to: tokenAddress, data: tokenInterface.encodeFunctionData("transfer", [to, BigInt(round * 4 + index + 1)]), gas: "0x186a0" }]]);
    }
    calls.push(["eth_sendTransaction", [{ from: accounts[2], to: secondToken, data: tokenInterface.encodeFunctionData("transfer", [owner, 7n]), gas: "0x186a0" }]]);
    calls.push(["eth_sendTransaction", [{ from: accounts[3], to: accounts[4], value: `0x${(round + 1).toString(16)}` }]]);
    calls.push(["eth_sendTransaction", [{ from: accounts[4], to: `0x${word(BigInt(round + 1)).slice(24)}`, value: "0x1" }]]);
    calls.push(["eth_sendTransaction", [{ from: accounts[5], to: eventsAddress, data: eventsInterface.encodeFunctionData("emitTwo", [`0x${word(BigInt(round))}`, `0x${word(BigInt(round * 7))}`]), gas: "0x186a0" }]]);
    calls.push(["eth_sendTransaction", [{ from: accounts[5], to: eventsAddress, data: eventsInterface.encodeFunctionData("emitNone", [BigInt(round)]), gas: "0x186a0" }]]);
    // More than the whole supply: "balance too low", the transaction reverts (status 0).
    calls.push(["eth_sendTransaction", [{ from: sender, to: tokenAddress, data: tokenInterface.encodeFunctionData("transfer", [owner, 10n ** 30n]), gas: "0x186a0" }]]);
    hashes.push(...((await rpcBatch(url, calls)) as string[]));
  }
  return hashes;
}

/** What the two nodes must answer alike: the head, the logs of the whole chain, every receipt. */
async function chainAnswers(url: string, hashes: readonly string[]) {
  const head = await rpc<BlockJson>(url, "eth_getBlockByNumber", ["latest", false]);
  const logs = await rpc<unknown[]>(url, "eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest" }]);
  const receipts: unknown[] = [];
  for (let index = 0; index < hashes.length; index += 100) receipts.push(...(await rpcBatch(url, hashes.slice(index, index + 100).map((hash) => ["eth_getTransactionReceipt", [hash]]))));
  return { head: { number: head.number, hash: head.hash, stateRoot: head.stateRoot }, logs, receipts };
}

/** Sends value transfers from `from`, one block each; answers their hashes. */
async function sendTransfers(url: string, from: string, values: readonly number[]): Promise<string[]> {
  return (await rpcBatch(url, values.map((value) => ["eth_sendTransaction", [{ from, to: `0x${"0c".repeat(20)}`, value: `0x${value.toString(16)}` }]]))) as string[];
}

describe("chain-node export and import", function () {
  this.timeout(120_000);
  let directory: string;
  let original: string;
  let hashes: string[];
  let exported: string;
  let head: BlockJson;
  /** The heavier branch's import into the original, its fork point and the two branches' heads. */
  let branch: { run: ReturnType<typeof runCli>; fork: number; ownHead: BlockJson; heavierHead: BlockJson; ownTransaction: string };

  // The chain: mixed transactions; then a fork, the original mining one block on it while a copy
  // mines three, the copy's branch imported into the original (a reorganisation), and more mixed
  // transactions, whose first blocks take the original's own block of the fork as an uncle.
  before(async () => {
    directory = await mkdtemp(join(tmpdir(), "chain-node-transfer-"));
    original = join(directory, "original");
    const copy = join(directory, "fork-copy");
    let node = await startNodeProcess(["--port", "0", "--data-dir", original]);
    let accounts: string[];
    try {
      hashes = await mineMixedChain(node.url, 25);
      accounts = await rpc<string[]>(node.url, "eth_accounts", []);
    } finally {
      await node.stop();
    }
    await cp(original, copy, { recursive: true });
    const other = await startNodeProcess(["--port", "0", "--data-dir", copy]);
    let heavierHead: BlockJson;
    try {
      hashes.push(...(await sendTransfers(other.url, accounts[6]!, [1, 2, 3])));
      heavierHead = await rpc<BlockJson>(other.url, "eth_getBlockByNumber", ["latest", false]);
    } finally {
      await other.stop();
    }
    node = await startNodeProcess(["--port", "0", "--data-dir", original]);
    let ownHead: BlockJson;
    let ownTransaction: string;
    try {
      [ownTransaction] = (await sendTransfers(node.url, accounts[7]!, [9])) as [string];
      ownHead = await rpc<BlockJson>(node.url, "eth_getBlockByNumber", ["latest", false]);
      // Refused while the node runs: its data dir is in use.
      const exportInUse = runCli(["export", join(directory, "in-use.blocks"), "--data-dir", original]);
      expect(exportInUse.status, exportInUse.stderr).to.equal(1);
      expect(exportInUse.stderr).to.include(`${original} is in use by process ${node.child.pid} (it holds LevelDB's lock): stop the node first`);
      const importInUse = runCli(["import", join(directory, "in-use.blocks"), "--data-dir", original]);
      expect(importInUse.status, importInUse.stderr).to.equal(1);
      expect(importInUse.stderr).to.include(`${original} is in use by process ${node.child.pid}`);
    } finally {
      await node.stop();
    }
    hashes.push(ownTransaction);
    const fork = Number(BigInt(ownHead.number));
    const branchFile = join(directory, "branch.blocks");
    expect(runCli(["export", branchFile, "--data-dir", copy, "--from", String(fork)]).status).to.equal(0);
    branch = { run: runCli(["import", branchFile, "--data-dir", original]), fork, ownHead, heavierHead, ownTransaction };

    node = await startNodeProcess(["--port", "0", "--data-dir", original]);
    try {
      hashes.push(...(await mineMixedChain(node.url, 25)));
      head = await rpc<BlockJson>(node.url, "eth_getBlockByNumber", ["latest", false]);
    } finally {
      await node.stop();
    }
    exported = join(directory, "chain.blocks");
    const run = runCli(["export", exported, "--data-dir", original]);
    expect(run.status, run.stderr).to.equal(0);
    expect(run.stdout).to.include(`blocks 1 to ${BigInt(head.number)}`).and.include(head.hash);
  });

  after(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("mined at least 500 blocks with deployments, token transfers, logs, reverted transactions and an uncle", async () => {
    expect(Number(BigInt(head.number))).to.be.at.least(500);
    const node = await startNodeProcess(["--port", "0", "--data-dir", original]);
    try {
      const receipts = (await rpcBatch(node.url, hashes.slice(0, 20).map((hash) => ["eth_getTransactionReceipt", [hash]]))) as { status: string; logs: unknown[] }[];
      expect(receipts.some(({ status }) => status === "0x0"), "a reverted transaction").to.equal(true);
      expect(receipts.some(({ logs }) => logs.length > 0), "logs").to.equal(true);
      const uncleCounts = (await rpcBatch(node.url, Array.from({ length: 7 }, (_, index) => ["eth_getUncleCountByBlockNumber", [`0x${(branch.fork + 3 + index).toString(16)}`]]))) as string[];
      expect(uncleCounts.map(Number).reduce((sum, count) => sum + count, 0), "uncles in the blocks after the fork").to.equal(1);
    } finally {
      await node.stop();
    }
  });

  it("importing a heavier branch makes it canonical; the transaction only the lighter branch held is mined again", async () => {
    const { run, fork, ownHead, heavierHead, ownTransaction } = branch;
    expect(run.status, run.stderr).to.equal(0);
    // The branch's first block ties with the original's own at the fork: the first seen stays; the second is heavier.
    expect(run.stdout).to.include(`imported 3 blocks (1 on a side branch), 0 already present; head before ${fork} ${ownHead.hash}, after ${fork + 2} ${heavierHead.hash}`);
    const node = await startNodeProcess(["--port", "0", "--data-dir", original]);
    try {
      expect((await rpc<BlockJson>(node.url, "eth_getBlockByNumber", [`0x${(fork + 2).toString(16)}`, false])).hash).to.equal(heavierHead.hash);
      const receipt = await rpc<{ blockNumber: string; status: string }>(node.url, "eth_getTransactionReceipt", [ownTransaction]);
      expect(Number(BigInt(receipt.blockNumber))).to.be.above(fork + 2);
      expect(receipt.status).to.equal("0x1");
    } finally {
      await node.stop();
    }
  });

  it("imports the exported chain into a fresh data dir: the same head, state root, logs and receipts; a second import finds every block present", async () => {
    const copy = join(directory, "copy");
    const run = runCli(["import", exported, "--data-dir", copy]);
    expect(run.status, `${run.stdout}\n${run.stderr}`).to.equal(0);
    const blocks = Number(BigInt(head.number));
    expect(run.stdout).to.match(new RegExp(`^imported ${blocks} blocks, 0 already present; head before 0 0x[0-9a-f]{64}, after ${blocks} ${head.hash}; `));
    expect(run.stdout).to.match(/; [\d.]+ s \([\d.]+ s importing, \d+ blocks\/s, [\d.]+ Mgas\/s, [\d.]+ Mgas\)\n$/);
    expect(run.stderr, "plain progress lines off a terminal").to.match(/^import: blocks \d+ /m);

    const again = runCli(["import", exported, "--data-dir", copy]);
    expect(again.status, again.stderr).to.equal(0);
    expect(again.stdout).to.include(`imported 0 blocks, ${blocks} already present; head before ${blocks} ${head.hash}, after ${blocks} ${head.hash}`);

    const [first, second] = [await startNodeProcess(["--port", "0", "--data-dir", original]), await startNodeProcess(["--port", "0", "--data-dir", copy])];
    try {
      const [expected, actual] = [await chainAnswers(first.url, hashes), await chainAnswers(second.url, hashes)];
      expect(actual.head).to.deep.equal(expected.head);
      expect(actual.logs).to.have.length(expected.logs.length).and.to.have.length.above(300);
      expect(actual.logs).to.deep.equal(expected.logs);
      expect(actual.receipts).to.deep.equal(expected.receipts);
      expect(actual.receipts.every((receipt) => receipt !== null)).to.equal(true);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it("stops at a block with a byte flipped, naming it, its offset and why; the data dir keeps its head", async () => {
    const target = 200;
    const dataDir = join(directory, "flipped");
    const prefix = join(directory, "prefix.blocks");
    expect(runCli(["export", prefix, "--data-dir", original, "--to", String(target - 1)]).status).to.equal(0);
    const imported = runCli(["import", prefix, "--data-dir", dataDir]);
    expect(imported.status, imported.stderr).to.equal(0);
    // Where block `target` starts: right after the prefix's blocks (both files start at block 1).
    const offset = (await readFile(prefix)).length;
    const bytes = await readFile(exported);
    const node = await startNodeProcess(["--port", "0", "--data-dir", original]);
    let block: BlockJson;
    try {
      block = await rpc<BlockJson>(node.url, "eth_getBlockByNumber", [`0x${target.toString(16)}`, false]);
    } finally {
      await node.stop();
    }
    // The block's state root, found in its bytes, one byte changed.
    const stateRootAt = bytes.indexOf(Buffer.from(block.stateRoot.slice(2), "hex"), offset);
    expect(stateRootAt).to.be.above(offset).and.below(offset + 600);
    bytes[stateRootAt + 5] ^= 0x01;
    const flipped = join(directory, "flipped.blocks");
    await writeFile(flipped, bytes);

    const run = runCli(["import", flipped, "--data-dir", dataDir]);
    expect(run.status, run.stderr).to.equal(1);
    expect(run.stdout).to.include(`imported 0 blocks, ${target - 1} already present`);
    expect(run.stdout).to.match(new RegExp(`head before ${target - 1} (0x[0-9a-f]{64}), after ${target - 1} \\1;`));
    expect(run.stderr).to.match(new RegExp(`chain-node import: stopped: block ${target} 0x[0-9a-f]{64} at offset ${offset} of ${flipped} is invalid: .+ \\(rule \\w+\\)`));
  });

  it("a file cut inside its last block: the blocks before it imported, then exit 1 naming the cut block's offset", async () => {
    const bytes = await readFile(exported);
    const cut = join(directory, "cut.blocks");
    const prefix = join(directory, "cut-prefix.blocks");
    expect(runCli(["export", prefix, "--data-dir", original, "--to", String(Number(BigInt(head.number)) - 1)]).status).to.equal(0);
    const lastOffset = (await readFile(prefix)).length;
    await writeFile(cut, bytes.subarray(0, bytes.length - 10));
    const run = runCli(["import", cut, "--data-dir", join(directory, "cut")]);
    expect(run.status, run.stderr).to.equal(1);
    expect(run.stdout).to.include(`imported ${lastOffset === 0 ? 0 : Number(BigInt(head.number)) - 1} blocks`);
    expect(run.stderr).to.include(`chain-node import: stopped: the file ends inside the block at offset ${lastOffset}: it announces ${bytes.length - lastOffset} bytes, ${bytes.length - lastOffset - 10} are left`);
  });

  it("a file of garbage, or of blocks whose parent is unknown, is refused with a message that says so", async () => {
    const garbage = join(directory, "garbage.blocks");
    await writeFile(garbage, "these are not blocks\n");
    const run = runCli(["import", garbage, "--data-dir", join(directory, "garbage")]);
    expect(run.status).to.equal(1);
    expect(run.stderr).to.include("stopped: at offset 0: byte 0x74 does not start an RLP list");
    expect(run.stdout).to.include("imported 0 blocks, 0 already present; head before 0");

    const late = join(directory, "late.blocks");
    expect(runCli(["export", late, "--data-dir", original, "--from", "10", "--to", "12"]).status).to.equal(0);
    const orphan = runCli(["import", late, "--data-dir", join(directory, "orphan")]);
    expect(orphan.status).to.equal(1);
    expect(orphan.stderr).to.match(/stopped: block 10 0x[0-9a-f]{64} at offset 0 of .*: its parent 0x[0-9a-f]{64} is neither in the data dir nor earlier in the file/);

    const missing = runCli(["import", join(directory, "no-such-file"), "--data-dir", join(directory, "never")]);
    expect(missing.status).to.equal(1);
    expect(missing.stderr).to.include("cannot read").and.include("ENOENT");
  });

  it("export: the range flags, an existing file refused unless --force, usage errors", async () => {
    const file = join(directory, "range.blocks");
    const ranged = runCli(["export", file, "--data-dir", original, "--from", "5", "--to", "9"]);
    expect(ranged.status, ranged.stderr).to.equal(0);
    expect(ranged.stdout).to.include("blocks 5 to 9 (5 blocks,");
    const exists = runCli(["export", file, "--data-dir", original]);
    expect(exists.status).to.equal(1);
    expect(exists.stderr).to.include(`${file} exists: pass --force to replace it`);
    const forced = runCli(["export", file, "--data-dir", original, "--from", "0", "--to", "0", "--force"]);
    expect(forced.status, forced.stderr).to.equal(0);
    expect(forced.stdout).to.include("blocks 0 to 0 (1 blocks,");
    const past = runCli(["export", file, "--data-dir", original, "--to", "100000", "--force"]);
    expect(past.status).to.equal(1);
    expect(past.stderr).to.include(`--to 100000 is past the head of the chain in ${original}, block ${BigInt(head.number)}`);
    for (const [args, message] of [
      [["export"], "chain-node export takes one FILE, got none"],
      [["export", file, "--from", "9", "--to", "5"], "--from 9 is after --to 5"],
      [["export", file, "--from", "0x10"], '--from takes a block number (a non-negative integer), got "0x10"'],
      [["import", "a", "b"], 'chain-node import takes one FILE, got "a" "b"'],
      [["import", file, "--from", "1"], "Unknown option '--from'"],
    ] as const) {
      const run = runCli([...args]);
      expect(run.status, args.join(" ")).to.equal(2);
      expect(run.stderr).to.include(message);
    }
    expect(runCli(["export", "--help"]).stdout).to.include("Usage: chain-node export FILE");
    expect(runCli(["import", "--help"]).stdout).to.include("Usage: chain-node import FILE");
  });
});
