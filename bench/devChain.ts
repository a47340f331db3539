// Bench of the dev methods on a running node at `url` (the integrator wires it into make bench):
// mines 1,000 blocks with evm_mine, then times evm_snapshot + evm_revert round trips, median of
// 20. Each round mines one block between the two calls (not timed), so every revert really cuts
// the chain back by one block. Self-contained: its own fetch-based JSON-RPC helper.
import { recordResult, targetsOf } from "./results.js";

const chainLength = 1_000;
const rounds = 20;
/** Issue 5: evm_snapshot + evm_revert within 20 ms. */
const targets = targetsOf("lower", [5, 20]);

let nextRequestId = 1;

async function call<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextRequestId++, method, params }),
  });
  const answer = (await response.json()) as { result?: T; error?: { code: number; message: string } };
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.code} ${answer.error.message}`);
  return answer.result as T;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export async function benchSnapshotRevert(url: string): Promise<void> {
  const startNumber = BigInt(await call<string>(url, "eth_blockNumber"));
  for (let mined = 0; mined < chainLength; mined++) await call(url, "evm_mine");
  const head = BigInt(await call<string>(url, "eth_blockNumber"));
  if (head < startNumber + BigInt(chainLength)) throw new Error(`evm_mine left the head at ${head}, expected at least ${startNumber + BigInt(chainLength)}`);

  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const snapshotStarted = performance.now();
    const id = await call<string>(url, "evm_snapshot");
    const snapshotMs = performance.now() - snapshotStarted;
    await call(url, "evm_mine");
    const revertStarted = performance.now();
    const reverted = await call<boolean>(url, "evm_revert", [id]);
    times.push(snapshotMs + performance.now() - revertStarted);
    if (!reverted) throw new Error(`evm_revert(${id}) answered false`);
  }
  const after = BigInt(await call<string>(url, "eth_blockNumber"));
  if (after !== head) throw new Error(`after the reverts the head is ${after}, not ${head}`);

  const medianMs = median(times);
  const verdict = recordResult("evm_snapshot + evm_revert", medianMs, "ms", targets, { bestMs: Math.min(...times), worstMs: Math.max(...times), blocks: Number(head) });
  console.log(
    `${"evm_snapshot + evm_revert".padEnd(34)} median ${medianMs.toFixed(1).padStart(7)} ms  best ${Math.min(...times).toFixed(1)} ms  worst ${Math.max(...times).toFixed(1)} ms  ${verdict}`,
  );
  console.log(`  on a chain of ${head} blocks, median of ${rounds} round trips; each revert removes the one block mined after its snapshot`);
}
