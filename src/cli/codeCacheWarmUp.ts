// make build's last step, not part of the command: one start of the built command as users start
// it (through its first line, so under the runtime flags it gives node), on a data directory of its
// own, to its first JSON-RPC answer, the call worker's warm-up (node/callWorker.ts) and a stop by
// SIGTERM. The launchers (cli/launch.ts, cli/callWorkerLaunch.ts) write V8's code cache at the exit
// of a run (or of the worker's thread) that found none (cli/cachedBundle.ts), so each cache holds
// what a start compiles on its thread; this checks that each was written.
//   node dist/src/cli/codeCacheWarmUp.js <command> <cache file> [<cache file> ...]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const timeoutMs = 60_000;

async function warmUp(command: string, cacheFiles: readonly string[]): Promise<void> {
  for (const cacheFile of cacheFiles) rmSync(cacheFile, { force: true });
  const dataDir = mkdtempSync(join(tmpdir(), "chain-node-warm-up-"));
  // At debug level for the worker's "warmed up" line.
  const child = spawn(command, ["--port", "0", "--data-dir", join(dataDir, "chain"), "--log-format", "json", "--log-level", "debug"], { stdio: ["ignore", "pipe", "inherit"] });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    const exited = once(child, "exit");
    const waiting = new Map<string, (record: Record<string, unknown>) => void>();
    createInterface({ input: child.stdout! }).on("line", (line) => {
      try {
        const record = JSON.parse(line) as { msg?: string };
        if (record.msg !== undefined) waiting.get(record.msg)?.(record);
      } catch {
        // not a log line
      }
    });
    const logged = (message: string) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        waiting.set(message, resolve);
        exited.then(([code]) => reject(new Error(`${command} exited with ${code} before logging "${message}"`)), reject);
      });
    const warmed = logged("call worker warmed up");
    warmed.catch(() => undefined); // awaited below, after the first answer
    for (const failure of ["the call worker cannot start; calls run on the main thread", "the call worker failed; calls run on the main thread"]) {
      waiting.set(failure, (record) => child.kill("SIGKILL") && process.stderr.write(`code cache warm-up: ${failure}: ${JSON.stringify(record)}\n`));
    }
    const { url } = (await logged("JSON-RPC server listening")) as { url: string };
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' });
    const answer = (await response.json()) as { result?: string };
    if (answer.result === undefined) throw new Error(`${command}: eth_blockNumber answered ${JSON.stringify(answer)}`);
    await warmed;
    child.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    if (code !== 0) throw new Error(`${command} stopped with ${code}`);
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
  for (const cacheFile of cacheFiles) if (!existsSync(cacheFile) || statSync(cacheFile).size === 0) throw new Error(`${command} wrote no code cache at ${cacheFile}`);
}

const [command, ...cacheFiles] = process.argv.slice(2);
if (command === undefined || cacheFiles.length === 0) {
  process.stderr.write("usage: codeCacheWarmUp <command> <cache file> [<cache file> ...]\n");
  process.exit(2);
}
warmUp(command, cacheFiles).catch((error: unknown) => {
  process.stderr.write(`code cache warm-up: ${(error as Error).message}\n`);
  process.exit(1);
});
