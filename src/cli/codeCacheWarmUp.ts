// make build's last step, not part of the command: one start of the built command as users start
// it (through its first line, so under the runtime flags it gives node), on a data directory of its
// own, to its first JSON-RPC answer and a stop by SIGTERM. The launcher (cli/launch.ts) writes V8's
// code cache at the exit of a run that found none, so the cache holds what a start compiles.
//   node dist/src/cli/codeCacheWarmUp.js <command> <cache file>
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const timeoutMs = 60_000;

async function warmUp(command: string, cacheFile: string): Promise<void> {
  rmSync(cacheFile, { force: true });
  const dataDir = mkdtempSync(join(tmpdir(), "chain-node-warm-up-"));
  const child = spawn(command, ["--port", "0", "--data-dir", join(dataDir, "chain"), "--log-format", "json"], { stdio: ["ignore", "pipe", "inherit"] });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    const exited = once(child, "exit");
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        try {
          const record = JSON.parse(line) as { url?: string; msg?: string };
          if (record.msg === "JSON-RPC server listening" && record.url !== undefined) resolve(record.url);
        } catch {
          // not a log line
        }
      });
      exited.then(([code]) => reject(new Error(`${command} exited with ${code} before listening`)), reject);
    });
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' });
    const answer = (await response.json()) as { result?: string };
    if (answer.result === undefined) throw new Error(`${command}: eth_blockNumber answered ${JSON.stringify(answer)}`);
    child.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    if (code !== 0) throw new Error(`${command} stopped with ${code}`);
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (!existsSync(cacheFile) || statSync(cacheFile).size === 0) throw new Error(`${command} wrote no code cache at ${cacheFile}`);
}

const [command, cacheFile] = process.argv.slice(2);
if (command === undefined || cacheFile === undefined) {
  process.stderr.write("usage: codeCacheWarmUp <command> <cache file>\n");
  process.exit(2);
}
warmUp(command, cacheFile).catch((error: unknown) => {
  process.stderr.write(`code cache warm-up: ${(error as Error).message}\n`);
  process.exit(1);
});
