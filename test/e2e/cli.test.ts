// The chain-node command as a user runs it: a real process, a real socket, signals.
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { cliPath, commandRuntimeFlags, startNodeProcess } from "../helpers/nodeProcess.js";

function runCli(args: string[]) {
  return spawnSync(process.execPath, [...commandRuntimeFlags(), cliPath, ...args], { encoding: "utf8", timeout: 15_000 });
}

describe("chain-node command", () => {
  it("serves eth_chainId 0x21 on its default network and stops cleanly on SIGTERM", async () => {
    const node = await startNodeProcess(["--port", "0", "--in-memory"]);
    try {
      expect(node.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      const response = await fetch(node.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      });
      expect(await response.json()).to.deep.equal({ jsonrpc: "2.0", id: 1, result: "0x21" });
    } finally {
      expect(await node.stop("SIGTERM")).to.equal(0);
    }
    expect(node.lines.some((line) => line.includes('"msg":"node stopped"'))).to.equal(true);
  });

  it("stops cleanly on SIGINT", async () => {
    const node = await startNodeProcess(["--port", "0", "--in-memory", "--network", "31"]);
    expect(await node.stop("SIGINT")).to.equal(0);
  });

  it("logs one line per request at debug level", async () => {
    const node = await startNodeProcess(["--port", "0", "--in-memory", "--log-level", "debug"]);
    try {
      await fetch(node.url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"jsonrpc":"2.0","id":42,"method":"net_version","params":[]}' });
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && !node.lines.some((line) => line.includes('"method":"net_version"'))) await new Promise((resolve) => setTimeout(resolve, 20));
      const line = node.lines.find((each) => each.includes('"method":"net_version"'));
      expect(line, "a debug line for the call").to.not.equal(undefined);
      expect(JSON.parse(line!)).to.include({ msg: "rpc call", id: 42, level: 20 });
    } finally {
      await node.stop();
    }
  });

  it("runs calls on its call worker when the chain is on disk (the bundled worker loads, each bundle through make build's code cache)", async () => {
    const directory = await mkdtemp(join(tmpdir(), "chain-node-cli-"));
    const node = await startNodeProcess(["--port", "0", "--data-dir", directory]);
    try {
      // eth_call of an account without code, until the worker has started and answered some.
      const body = '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x00000000000000000000000000000000000000bb"},"latest"]}';
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && !node.lines.some((line) => line.includes("call worker ready"))) {
        const response = await fetch(node.url, { method: "POST", headers: { "content-type": "application/json" }, body });
        expect(await response.json()).to.deep.equal({ jsonrpc: "2.0", id: 1, result: "0x" });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(node.lines.some((line) => line.includes("call worker ready")), "the worker started").to.equal(true);
      const logged = (message: string) => JSON.parse(node.lines.find((line) => line.includes(message))!) as { codeCache?: string };
      expect(logged('"msg":"JSON-RPC server listening"').codeCache, "the command's code cache").to.equal("accepted");
      expect(logged("call worker ready").codeCache, "the worker's code cache").to.equal("accepted");
      const response = await fetch(node.url, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(await response.json()).to.deep.equal({ jsonrpc: "2.0", id: 1, result: "0x" });
    } finally {
      expect(await node.stop("SIGTERM")).to.equal(0);
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("recovers the senders of a batch's later raw sends on its bundled recovery worker", async function () {
    if (availableParallelism() < 2) this.skip(); // the worker never starts on one core
    const node = await startNodeProcess(["--port", "0", "--in-memory", "--log-level", "debug"]);
    const senders = ["cow", "cow1", "cow2", "cow3"].map((seed) => new Wallet(keccak256(toUtf8Bytes(seed))));
    try {
      // Batches until the worker, started by the first, has had time to serve (2 s at most).
      const deadline = Date.now() + 2_000;
      for (let nonce = 0; nonce < 10 && Date.now() < deadline; nonce++) {
        const raws = await Promise.all(senders.map((sender) => sender.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice: 0n, to: "0x00000000000000000000000000000000000000aa", value: 1n })));
        const response = await fetch(node.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(raws.map((raw, id) => ({ jsonrpc: "2.0", id, method: "eth_sendRawTransaction", params: [raw] }))),
        });
        const answers = (await response.json()) as { result?: string }[];
        expect(answers.every(({ result }) => typeof result === "string"), JSON.stringify(answers)).to.equal(true);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      expect(await node.stop("SIGTERM")).to.equal(0);
    }
    const counts = node.lines.map((line) => JSON.parse(line) as { msg?: string; byWorker?: number }).find((record) => record.msg === "senders recovered on each thread");
    expect(counts?.byWorker, "recoveries on the worker").to.be.greaterThan(0);
  });

  it("greets a person at a terminal with the URL and the development accounts with their keys; piped, writes JSON lines only", async () => {
    const command = [process.execPath, ...commandRuntimeFlags(), cliPath, "--port", "0", "--in-memory"].map((part) => `'${part}'`).join(" ");
    // `script` gives the command a pseudo-terminal; the node stops itself after 3 s.
    const onTerminal = spawnSync("script", ["-q", "-e", "-c", `timeout -s INT 3 ${command}`, "/dev/null"], { encoding: "utf8", timeout: 20_000 });
    const text = onTerminal.stdout.replace(/\r/g, "");
    expect(text).to.match(/JSON-RPC {9}http:\/\/127\.0\.0\.1:(\d+)\nWebSocket {8}ws:\/\/127\.0\.0\.1:\1 \(the same port\)/);
    expect(text).to.include("Network          regtest (network id 33, chain id 33, 0x21)");
    for (const seed of ["cow", "cow1", "cow9"]) expect(text).to.include(keccak256(toUtf8Bytes(seed)));
    expect(text).to.include("(0) 0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826 (1000000000000.000000000000000000 ETH)");
    expect(text).to.include("WARNING: these keys are public");
    expect(text).to.match(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}JSON-RPC server listening {2}url=http/m);

    const piped = await startNodeProcess(["--port", "0", "--in-memory"]);
    await piped.stop();
    expect(piped.lines.length).to.be.above(2);
    for (const line of piped.lines) expect(() => JSON.parse(line), line).to.not.throw();
  });

  it("prints help and version", () => {
    const help = runCli(["--help"]);
    expect(help.status).to.equal(0);
    expect(help.stdout).to.include("Usage: chain-node");
    const version = runCli(["--version"]);
    expect(version.status).to.equal(0);
    expect(version.stdout).to.match(/^chain-node\/0\.1\.0\//);
  });

  it("runs as an executable through its first line, which gives node the command's runtime flags", () => {
    expect(commandRuntimeFlags()).to.include("--v8-pool-size=0");
    const direct = spawnSync(cliPath, ["--version"], { encoding: "utf8", timeout: 15_000, env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` } });
    expect(direct.status, direct.stderr).to.equal(0);
    expect(direct.stdout).to.match(/^chain-node\/0\.1\.0\//);
  });

  it("exits 2 with a clear message on bad usage, and 1 when it cannot start", async () => {
    const bad = runCli(["--network", "7"]);
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.include('unknown --network "7"');
    const unknownModule = runCli(["--port", "0", "--in-memory", "--rpc-modules", "eth,nope"]);
    expect(unknownModule.status).to.equal(1);
    expect(unknownModule.stdout).to.include('unknown RPC module \\"nope\\"');

    const first = await startNodeProcess(["--port", "0", "--in-memory"]);
    try {
      const port = new URL(first.url).port;
      const second = runCli(["--port", port, "--in-memory"]);
      expect(second.status).to.equal(1);
      expect(second.stdout).to.include("cannot start");
      expect(second.stdout).to.include("EADDRINUSE");
    } finally {
      await first.stop();
    }
  });

  it("says in one line why a data dir cannot be used, without a stack, and does not hang on one under /proc", async () => {
    const directory = await mkdtemp(join(tmpdir(), "chain-node-cli-"));
    try {
      const file = join(directory, "a-file");
      await writeFile(file, "");
      const brokenDatabase = join(directory, "broken");
      await mkdir(brokenDatabase);
      await writeFile(join(brokenDatabase, "MANIFEST-000002"), "");
      const keyStoreAsFile = join(directory, "keystore-is-a-file");
      const first = await startNodeProcess(["--port", "0", "--data-dir", keyStoreAsFile]);
      await first.stop();
      await rm(join(keyStoreAsFile, "keystore"), { recursive: true, force: true });
      await writeFile(join(keyStoreAsFile, "keystore"), "");
      for (const [dataDir, message] of [
        [join(file, "chain"), `cannot use ${join(file, "chain")} as the data directory: ENOTDIR`],
        ["/proc/chain-node-test", "cannot use /proc/chain-node-test as the data directory: ENOENT"],
        [file, `${file} is not a directory`],
        [brokenDatabase, `${brokenDatabase} holds the files of a LevelDB database without its CURRENT file`],
        [keyStoreAsFile, `cannot read the key store ${join(keyStoreAsFile, "keystore")}: ENOTDIR`],
      ] as const) {
        const run = runCli(["--port", "0", "--data-dir", dataDir]);
        expect(run.status, `${dataDir}: ${run.stdout}`).to.equal(1);
        expect(run.stdout).to.include(`cannot start: ${message}`);
        expect(run.stdout).to.not.include("stack");
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
