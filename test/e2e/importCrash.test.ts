// kill -9 while `chain-node import` runs a heavier branch into a data dir: the import appends
// blocks, then switches branches (a reorganisation in one batch) once the imported branch
// outweighs the node's own, then appends again. Whenever the kill lands, a node starts on the
// data dir, its head is a block of one of the two branches with
// that branch below it, every block the node had acknowledged before the import is still there,
// and once a start has applied the write-ahead log the dir passes `chain-node verify`. A last import without a kill finishes the job from wherever the kill left it.
// CHAIN_NODE_LONG_TESTS=1 runs 12 kills instead of 4.
import { spawn, spawnSync } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { RpcClient } from "../../generated/client.js";
import { cliPath, commandRuntimeFlags, startNodeProcess } from "../helpers/nodeProcess.js";

const kills = process.env.CHAIN_NODE_LONG_TESTS === "1" ? 12 : 4;
const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const cow1 = "0x7986b3df570230288501eea3d890bd66948c9b79";
const recipient = "0x00000000000000000000000000000000000000cc";

function runCli(args: string[], timeout = 60_000) {
  return spawnSync(process.execPath, [...commandRuntimeFlags(), cliPath, ...args], { encoding: "utf8", timeout });
}

/** Mines `count` one-transfer blocks from `from` on the node at `dataDir`; answers the block hashes, by number from 1. */
async function mineTransfers(dataDir: string, from: string, count: number): Promise<string[]> {
  const node = await startNodeProcess(["--port", "0", "--data-dir", dataDir]);
  try {
    const client = new RpcClient(node.url, { timeoutMs: 10_000 });
    for (let sent = 0; sent < count; sent++) await client.eth_sendTransaction({ from, to: recipient, value: "0x1" });
    const hashes: string[] = [];
    for (let number = 1; number <= count; number++) hashes.push((await client.eth_getBlockByNumber(`0x${number.toString(16)}`, false))!.hash!);
    return hashes;
  } finally {
    await node.stop();
  }
}

describe("crash safety: kill -9 during an import and its reorganisation", function () {
  this.timeout(120_000 + kills * 20_000);
  let directory: string;
  before(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-import-crash-"))));
  after(() => rm(directory, { recursive: true, force: true }));

  it(`leaves a data dir that verifies and starts, with a consistent head and the node's own blocks, after ${kills} kills`, async () => {
    // The heavier branch: 600 blocks of cow's transfers, exported. The node's own: 150 blocks of cow1's.
    const branchDir = join(directory, "branch");
    const branchHashes = await mineTransfers(branchDir, cow, 600);
    const branchFile = join(directory, "branch.blocks");
    const exported = runCli(["export", branchFile, "--data-dir", branchDir]);
    expect(exported.status, exported.stderr).to.equal(0);
    const ownDir = join(directory, "own");
    const ownHashes = await mineTransfers(ownDir, cow1, 150);

    const outcomes: string[] = [];
    let lastKilled = "";
    for (let round = 0; round < kills; round++) {
      const target = join(directory, `killed-${round}`);
      await cp(ownDir, target, { recursive: true });
      const importing = spawn(process.execPath, [...commandRuntimeFlags(), cliPath, "import", branchFile, "--data-dir", target], { stdio: "ignore" });
      // Listened for from the start: an import that finishes before the kill has exited already.
      const exited = new Promise((resolve) => importing.once("exit", resolve));
      // Kill moments spread over the import (about 0.4 s to start, then some 800 blocks/s): before the switch, around it, and after it.
      await new Promise((resolve) => setTimeout(resolve, 350 + round * Math.floor(900 / kills) + Math.floor(Math.random() * 100)));
      importing.kill("SIGKILL");
      await exited;

      // Without mining: under automine the node would mine the transactions the switch took back into its pool.
      const node = await startNodeProcess(["--port", "0", "--data-dir", target, "--no-mining"]);
      try {
        const client = new RpcClient(node.url, { timeoutMs: 10_000 });
        const head = (await client.eth_getBlockByNumber("latest", false))!;
        const headNumber = Number(head.number);
        const onBranch = head.hash === branchHashes[headNumber - 1];
        // Its own chain stays the head until the branch is heavier (more blocks: difficulty 1 each).
        if (!onBranch) expect([headNumber, head.hash]).to.deep.equal([150, ownHashes[149]]);
        else expect(headNumber).to.be.above(150);
        const line = onBranch ? branchHashes : ownHashes;
        for (const number of [1, Math.ceil(headNumber / 2), headNumber]) {
          expect((await client.eth_getBlockByNumber(`0x${number.toString(16)}`, false))!.hash, `block ${number}`).to.equal(line[number - 1]);
        }
        // Every block the node had made is still stored, canonical or not.
        for (const hash of ownHashes) expect(await client.eth_getBlockByHash(hash, false), hash).to.not.equal(null);
        outcomes.push(`${onBranch ? "branch" : "own"} head ${headNumber}`);
      } finally {
        await node.stop();
      }
      // Once a start has applied what the kill left in the write-ahead log, the dir checks whole.
      const verified = runCli(["verify", "--data-dir", target]);
      expect(verified.status, `verify after kill ${round}: ${verified.stdout}${verified.stderr}`).to.equal(0);
      lastKilled = target;
    }
    console.log(`      heads after the kills: ${outcomes.join(", ")}`);

    // An import without a kill takes the dir the last kill left to the branch's head.
    const finished = runCli(["import", branchFile, "--data-dir", lastKilled]);
    expect(finished.status, finished.stderr).to.equal(0);
    const node = await startNodeProcess(["--port", "0", "--data-dir", lastKilled, "--no-mining"]);
    try {
      const client = new RpcClient(node.url, { timeoutMs: 10_000 });
      expect((await client.eth_getBlockByNumber("latest", false))!.hash).to.equal(branchHashes[599]);
    } finally {
      await node.stop();
    }
  });
});
