// make build's last step, not part of the command: starts of the built command as users start it
// (through its first line, so under the runtime flags it gives node), each on data of its own.
// The launchers (cli/launch.ts, cli/callWorkerLaunch.ts) write V8's code cache at the exit of a run
// (or of the worker's thread) that found none (cli/cachedBundle.ts), so each cache holds what a
// start compiles on its thread; this checks that each was written.
//   - A lone node, to its first JSON-RPC answer, the call worker's warm-up (node/callWorker.ts) and
//     a stop by SIGTERM: the CLI's and the call worker's caches, made by a start without --p2p so
//     that they hold what a lone node compiles and no more.
//   - With --p2p, then two nodes with the network on (the CLI's and the worker's caches taken, not
//     written again): one with 30 blocks, and one started with it as bootnode, which long-syncs
//     them; both stop, the syncing one last, and the peer-to-peer bundle's cache (its code loaded
//     only with --p2p) is the syncing node's: a start, a connection, the handshake and the requests
//     of a sync.
//   node dist/src/cli/codeCacheWarmUp.js <command> <cache file> [<cache file> ...] [--p2p <cache file>]
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const timeoutMs = 60_000;
/** Blocks the first node of the peer-to-peer start has: past the 24 a long sync needs. */
const syncedBlocks = 30;

interface Started {
  readonly child: ChildProcess;
  readonly exited: Promise<unknown[]>;
  /** The first log line with this message from now on (rejects if the command exits first). */
  logged(message: string): Promise<Record<string, unknown>>;
}

/** The command at debug level with JSON logs, killed after the time limit. */
function start(command: string, args: readonly string[]): Started {
  const child = spawn(command, [...args, "--port", "0", "--log-format", "json", "--log-level", "debug"], { stdio: ["ignore", "pipe", "inherit"] });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const exited = once(child, "exit");
  exited.finally(() => clearTimeout(timer)).catch(() => undefined);
  const waiting = new Map<string, (record: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout! }).on("line", (line) => {
    try {
      const record = JSON.parse(line) as { msg?: string };
      if (record.msg !== undefined) waiting.get(record.msg)?.(record);
    } catch {
      // not a log line
    }
  });
  for (const failure of ["the call worker cannot start; calls run on the main thread", "the call worker failed; calls run on the main thread"]) {
    waiting.set(failure, (record) => child.kill("SIGKILL") && process.stderr.write(`code cache warm-up: ${failure}: ${JSON.stringify(record)}\n`));
  }
  return {
    child,
    exited,
    logged: (message) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        waiting.set(message, resolve);
        exited.then(([code]) => reject(new Error(`${command} exited with ${code} before logging "${message}"`)), reject);
      }),
  };
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const answer = (await response.json()) as { result?: unknown };
  if (answer.result === undefined) throw new Error(`${method} answered ${JSON.stringify(answer)}`);
  return answer.result;
}

/** SIGTERM, and a clean exit. */
async function stop(command: string, started: Started): Promise<void> {
  started.child.kill("SIGTERM");
  const [code] = await started.exited;
  if (code !== 0) throw new Error(`${command} stopped with ${String(code)}`);
}

function kill(started: Started | undefined): void {
  if (started !== undefined && started.child.exitCode === null && started.child.signalCode === null) started.child.kill("SIGKILL");
}

function checkWritten(command: string, cacheFiles: readonly string[]): void {
  for (const cacheFile of cacheFiles) if (!existsSync(cacheFile) || statSync(cacheFile).size === 0) throw new Error(`${command} wrote no code cache at ${cacheFile}`);
}

/** A lone node on a data directory: its first answer, the call worker's warm-up, a stop. */
async function warmUpLoneNode(command: string, cacheFiles: readonly string[]): Promise<void> {
  for (const cacheFile of cacheFiles) rmSync(cacheFile, { force: true });
  const dataDir = mkdtempSync(join(tmpdir(), "chain-node-warm-up-"));
  let node: Started | undefined;
  try {
    // At debug level for the worker's "warmed up" line.
    node = start(command, ["--data-dir", join(dataDir, "chain")]);
    const warmed = node.logged("call worker warmed up");
    warmed.catch(() => undefined); // awaited below, after the first answer
    const { url } = (await node.logged("JSON-RPC server listening")) as { url: string };
    await rpc(url, "eth_blockNumber", []);
    await warmed;
    await stop(command, node);
  } finally {
    kill(node);
    rmSync(dataDir, { recursive: true, force: true });
  }
  checkWritten(command, cacheFiles);
}

/** Two nodes in memory with the network on, the second syncing from the first; the syncing one stops last. */
async function warmUpPeers(command: string, cacheFile: string): Promise<void> {
  rmSync(cacheFile, { force: true });
  const network = ["--in-memory", "--p2p-host", "127.0.0.1", "--p2p-port", "0"];
  let source: Started | undefined;
  let syncing: Started | undefined;
  try {
    source = start(command, [...network, "--p2p"]);
    const p2pListening = source.logged("p2p listening");
    p2pListening.catch(() => undefined); // logged before the server's line, awaited after it
    const { url } = (await source.logged("JSON-RPC server listening")) as { url: string };
    const [multiaddr] = ((await p2pListening) as { multiaddrs: string[] }).multiaddrs;
    if (multiaddr === undefined) throw new Error(`${command} listens on no peer-to-peer address`);
    await rpc(url, "evm_mine", [{ blocks: `0x${syncedBlocks.toString(16)}` }]);
    syncing = start(command, [...network, "--bootnodes", multiaddr]);
    await syncing.logged("long sync done");
    await stop(command, source);
    await stop(command, syncing);
  } finally {
    kill(source);
    kill(syncing);
  }
  checkWritten(command, [cacheFile]);
}

async function warmUp(command: string, cacheFiles: readonly string[], p2pCacheFile: string | undefined): Promise<void> {
  await warmUpLoneNode(command, cacheFiles);
  if (p2pCacheFile !== undefined) await warmUpPeers(command, p2pCacheFile);
}

const [command, ...rest] = process.argv.slice(2);
const p2pAt = rest.indexOf("--p2p");
const cacheFiles = p2pAt === -1 ? rest : rest.slice(0, p2pAt);
const p2pCacheFile = p2pAt === -1 ? undefined : rest[p2pAt + 1];
if (command === undefined || cacheFiles.length === 0 || (p2pAt !== -1 && (p2pCacheFile === undefined || rest.length !== p2pAt + 2))) {
  process.stderr.write("usage: codeCacheWarmUp <command> <cache file> [<cache file> ...] [--p2p <cache file>]\n");
  process.exit(2);
}
warmUp(command, cacheFiles, p2pCacheFile).catch((error: unknown) => {
  process.stderr.write(`code cache warm-up: ${(error as Error).message}\n`);
  process.exit(1);
});
