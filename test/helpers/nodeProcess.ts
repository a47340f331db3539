// Runs the built CLI as a child process (as a user would), waiting for its listening line.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

/** The bundled command (make build), as `make run` starts it. */
export const cliPath = fileURLToPath(new URL("../../bundle/cli/chain-node.cjs", import.meta.url));

/**
 * The runtime flags the command's first line gives node (`#!/usr/bin/env -S node <flags>`), so
 * that a test started with this node binary runs the command as `make run` and the bin do.
 */
export function commandRuntimeFlags(bundlePath = cliPath): string[] {
  const head = Buffer.alloc(200);
  const descriptor = openSync(bundlePath, "r");
  try {
    readSync(descriptor, head, 0, head.length, 0);
  } finally {
    closeSync(descriptor);
  }
  const firstLine = head.toString("utf8").split("\n", 1)[0]!;
  const match = /^#!\/usr\/bin\/env -S node((?: --[\w-]+(?:=\S+)?)*)$/.exec(firstLine);
  if (match === null) throw new Error(`unexpected first line of ${bundlePath}: ${firstLine}`);
  return match[1]!.split(" ").filter(Boolean);
}

export interface NodeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** stdout lines so far. */
  readonly lines: string[];
  /** Sends a signal and waits for the exit code (SIGKILL after the time limit). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

/**
 * Starts `chain-node <args>` and resolves once it logs its URL (fails after timeoutMs).
 * `nodeFlags` go to the node runtime (say, --cpu-prof).
 */
export function startNodeProcess(args: string[], timeoutMs = 15_000, nodeFlags: readonly string[] = []): Promise<NodeProcess> {
  return startListeningProcess(cliPath, args, timeoutMs, [...commandRuntimeFlags(), ...nodeFlags]);
}

/** Starts a script that logs the node's listening line, and waits for it. */
export async function startListeningProcess(script: string, args: string[], timeoutMs = 15_000, nodeFlags: readonly string[] = []): Promise<NodeProcess> {
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`node did not start within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      try {
        const record = JSON.parse(line) as { url?: string; msg?: string };
        if (record.msg === "JSON-RPC server listening" && record.url) {
          clearTimeout(timer);
          resolve(record.url);
        }
      } catch {
        // not a log line
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code} before listening; stdout: ${lines.join("\n")}; stderr: ${stderr}`));
    });
  });
  return {
    child,
    url,
    lines,
    async stop(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 10_000) {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, "exit");
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const [code] = (await exited) as [number | null];
      clearTimeout(timer);
      return code;
    },
  };
}
