// make bench-rpc, WebSocket part (issue 36), each on a node running as its own process:
//   - eth_blockNumber at 32 connections over WebSocket beside the same over HTTP keep-alive, on one
//     node, in alternating blocks (the machine is shared with the load client and is noisy);
//   - newHeads delivery under a paced send load of 1,000 tx/s (pre-signed value transfers from 8
//     senders, automine, after 2,000 unpaced ones to warm the node): for each block, from the
//     answer of the eth_sendRawTransaction it holds (the node answers once the block is written:
//     the nearest outside sign of when it was made) to its newHeads notification on each of 4
//     subscribers, negative when the head comes first; and from the send to the head, which adds
//     the wait in the pool and the mining;
//   - 1,000 idle WebSocket connections (--ws-max-connections' default): the node's resident memory
//     before and after they open.
import { connect } from "node:net";
import { startNodeProcess, type NodeProcess } from "../test/helpers/nodeProcess.js";
import { developmentSigners, median, memoryOf, percentile, rpcBody, signedRaw } from "./chainClient.js";
import { runLoad, runSequences, type LoadResult } from "./loadClient.js";
import { recordResult, targetsOf } from "./results.js";
import { openRawWebSocket, runWebSocketLoad, textFrame, type RawWebSocket } from "./webSocketClient.js";

const issue = 36;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function wsUrl(node: NodeProcess): string {
  return `${node.url.replace(/^http/, "ws")}/`;
}


function line(name: string, value: string, rest: string, verdict: string): void {
  console.log(`${name.padEnd(40)} ${value.padStart(12)}  ${rest}  ${verdict}`);
}

/** Adds up blocks of the same load into one result (requests over seconds; latencies: the worst block's). */
function combined(blocks: LoadResult[]): LoadResult {
  const requests = blocks.reduce((sum, block) => sum + block.requests, 0);
  const seconds = blocks.reduce((sum, block) => sum + block.seconds, 0);
  return {
    requests,
    seconds,
    perSecond: requests / seconds,
    p50Ms: median(blocks.map((block) => block.p50Ms)),
    p99Ms: Math.max(...blocks.map((block) => block.p99Ms)),
    errors: blocks.reduce((sum, block) => sum + block.errors, 0),
    firstError: blocks.find((block) => block.firstError !== undefined)?.firstError,
  };
}

/** eth_blockNumber over HTTP and over WebSocket, 32 connections each, alternating. */
export async function benchWebSocketCalls(durationMs: number): Promise<void> {
  const connections = 32;
  const body = rpcBody("eth_blockNumber", []);
  const node = await startNodeProcess(["--port", "0", "--in-memory"]);
  try {
    await runLoad({ url: node.url, body, connections, durationMs: 3_000 });
    await runWebSocketLoad({ url: wsUrl(node), body, connections, durationMs: 3_000 });
    const http: LoadResult[] = [];
    const ws: LoadResult[] = [];
    // Short alternating blocks, so that the host's changes of speed fall on both.
    const rounds = 4;
    for (let round = 0; round < rounds; round++) {
      http.push(await runLoad({ url: node.url, body, connections, durationMs: durationMs / rounds }));
      ws.push(await runWebSocketLoad({ url: wsUrl(node), body, connections, durationMs: durationMs / rounds }));
    }
    const overHttp = combined(http);
    const overWs = combined(ws);
    recordResult("eth_blockNumber over HTTP (32 connections)", overHttp.perSecond, "req/s", [], { p50Ms: overHttp.p50Ms, p99Ms: overHttp.p99Ms, errors: overHttp.errors });
    const verdict = recordResult("eth_blockNumber over WebSocket (32 connections)", overWs.perSecond, "req/s", targetsOf("higher", [issue, Math.round(overHttp.perSecond)]), {
      p50Ms: overWs.p50Ms,
      p99Ms: overWs.p99Ms,
      errors: overWs.errors,
      httpPerSecond: overHttp.perSecond,
    });
    for (const [name, result, judged] of [
      ["eth_blockNumber, HTTP, 32 connections", overHttp, "-"],
      ["eth_blockNumber, WebSocket, 32 connections", overWs, `${verdict} (the HTTP figure)`],
    ] as const) {
      line(name, `${result.perSecond.toFixed(0)} req/s`, `p50 ${result.p50Ms.toFixed(2)} ms  p99 ${result.p99Ms.toFixed(2)} ms  errors ${result.errors}`, judged);
      if (result.firstError !== undefined) console.log(`  first error: ${result.firstError.slice(0, 300)}`);
    }
  } finally {
    await node.stop();
  }
}

interface SentTransaction {
  hash: string;
  sentAt: number;
  answeredAt: number;
}

/**
 * Sends `bodies[i]` on HTTP connection i in order, one at a time, the k-th message of all
 * connections together no earlier than k / perSecond seconds after the start (a connection behind
 * its schedule sends as soon as its previous answer is in). Answers each send's hash and times.
 */
function sendPaced(url: string, bodies: readonly (readonly string[])[], perSecond: number): Promise<{ sent: SentTransaction[]; errors: number; firstError?: string; seconds: number }> {
  const target = new URL(url);
  const connections = bodies.length;
  const sent: SentTransaction[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const run = (connection: number) =>
    new Promise<void>((resolve) => {
      const socket = connect({ host: target.hostname, port: Number(target.port) });
      socket.setNoDelay(true);
      let index = 0;
      let sentAt = 0;
      let pending: Buffer = Buffer.alloc(0);
      const next = () => {
        if (index === bodies[connection]!.length) return void socket.end();
        const body = bodies[connection]![index]!;
        const due = started + ((index * connections + connection) * 1000) / perSecond;
        index++;
        const write = () => {
          sentAt = performance.now();
          socket.write(`POST / HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        };
        const wait = due - performance.now();
        if (wait > 0) setTimeout(write, wait);
        else write();
      };
      socket.on("connect", next);
      socket.on("data", (chunk: Buffer) => {
        const answeredAt = performance.now();
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        const end = pending.indexOf("\r\n\r\n");
        if (end < 0) return;
        const length = Number(/content-length:\s*(\d+)/i.exec(pending.subarray(0, end).toString("latin1"))?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        const answer = pending.subarray(end + 4, end + 4 + length).toString("utf8");
        pending = pending.subarray(end + 4 + length);
        const hash = /"result":"(0x[0-9a-f]{64})"/.exec(answer)?.[1];
        if (hash === undefined) {
          if (errors++ === 0) firstError = answer;
        } else sent.push({ hash, sentAt, answeredAt });
        next();
      });
      socket.on("error", (error) => {
        if (errors++ === 0) firstError = error.message;
        resolve();
      });
      socket.on("close", () => resolve());
    });
  return Promise.all(Array.from({ length: connections }, (_, connection) => run(connection))).then(() => ({
    sent,
    errors,
    firstError,
    seconds: (performance.now() - started) / 1000,
  }));
}

/** A newHeads subscriber: when each block number arrived. */
async function subscribeHeads(url: string): Promise<{ arrivals: Map<number, number>; socket: RawWebSocket }> {
  const arrivals = new Map<number, number>();
  let subscribed: (() => void) | undefined;
  const socket = await openRawWebSocket(url, (payload, atMs) => {
    const message = JSON.parse(payload.toString("utf8")) as { id?: number; result?: string; params?: { result: { number: string } } };
    if (message.id === 1) return subscribed?.();
    if (message.params !== undefined) arrivals.set(Number(message.params.result.number), atMs);
  });
  await new Promise<void>((resolve) => {
    subscribed = resolve;
    socket.send(textFrame(rpcBody("eth_subscribe", ["newHeads"])));
  });
  return { arrivals, socket };
}

/** The block number of each hash, by batches of receipts. */
async function blockNumbersOf(url: string, hashes: readonly string[]): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (let start = 0; start < hashes.length; start += 100) {
    const batch = hashes.slice(start, start + 100).map((hash, index) => ({ jsonrpc: "2.0", id: start + index, method: "eth_getTransactionReceipt", params: [hash] }));
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(batch) });
    for (const answer of (await response.json()) as { id: number; result: { blockNumber: string } | null }[]) {
      if (answer.result !== null) found.set(hashes[answer.id]!, Number(answer.result.blockNumber));
    }
  }
  return found;
}

/** newHeads delivery latency on 4 subscribers while 1,000 tx/s are sent (automine). */
export async function benchNewHeadsLatency(seconds: number, perSecond = 1_000): Promise<void> {
  const senders = 8;
  const subscribers = 4;
  const signers = developmentSigners().slice(0, senders);
  const transfers = (perSender: number) =>
    signers.map((signer, index) =>
      Array.from({ length: perSender }, (_, sent) => rpcBody("eth_sendRawTransaction", [signedRaw(signer, { to: signers[(index + 1) % senders]!.address, value: 1n, gasLimit: 21_000n })], sent)),
    );
  const warmUp = transfers(250);
  const bodies = transfers(Math.ceil((perSecond * seconds) / senders));
  const node = await startNodeProcess(["--port", "0", "--in-memory"]);
  try {
    // A fresh node sends at half its warm rate while V8 compiles: 2,000 transfers first, unpaced.
    await runSequences({ url: node.url, bodies: warmUp });
    const heads = await Promise.all(Array.from({ length: subscribers }, () => subscribeHeads(wsUrl(node))));
    const load = await sendPaced(node.url, bodies, perSecond);
    await sleep(200);
    const blockOf = await blockNumbersOf(node.url, load.sent.map((item) => item.hash));
    // Per block: the first answer and the first send of a transaction it holds.
    const firstAnswer = new Map<number, number>();
    const firstSend = new Map<number, number>();
    for (const item of load.sent) {
      const block = blockOf.get(item.hash);
      if (block === undefined) continue;
      firstAnswer.set(block, Math.min(firstAnswer.get(block) ?? Infinity, item.answeredAt));
      firstSend.set(block, Math.min(firstSend.get(block) ?? Infinity, item.sentAt));
    }
    const delivery: number[] = [];
    const sendToHead: number[] = [];
    let missing = 0;
    for (const { arrivals } of heads) {
      for (const [block, answeredAt] of firstAnswer) {
        const arrivedAt = arrivals.get(block);
        if (arrivedAt === undefined) {
          missing++;
          continue;
        }
        delivery.push(arrivedAt - answeredAt);
        sendToHead.push(arrivedAt - firstSend.get(block)!);
      }
    }
    for (const { socket } of heads) socket.close();
    const achieved = load.sent.length / load.seconds;
    const p99 = percentile(delivery, 0.99);
    const context = { sentPerSecond: achieved, transactions: load.sent.length, blocks: firstAnswer.size, subscribers, missingHeads: missing, errors: load.errors };
    const verdict = recordResult("newHeads delivery under 1,000 tx/s (p99)", p99, "ms", targetsOf("lower", [issue, 20]), { p50Ms: percentile(delivery, 0.5), p99Ms: p99, ...context });
    const sendP99 = percentile(sendToHead, 0.99);
    recordResult("send to newHeads under 1,000 tx/s (p99)", sendP99, "ms", [], { p50Ms: percentile(sendToHead, 0.5), p99Ms: sendP99, ...context });
    line(
      "newHeads delivery, 1,000 tx/s sent",
      `p99 ${p99.toFixed(2)} ms`,
      `p50 ${percentile(delivery, 0.5).toFixed(2)} ms (block written -> head, ${subscribers} subscribers; ${achieved.toFixed(0)} tx/s sent, ${firstAnswer.size} blocks, ${missing} heads missing, ${load.errors} errors)`,
      verdict,
    );
    line("send -> newHeads, 1,000 tx/s sent", `p99 ${sendP99.toFixed(2)} ms`, `p50 ${percentile(sendToHead, 0.5).toFixed(2)} ms (pool and mining included)`, "-");
    if (load.firstError !== undefined) console.log(`  first error: ${load.firstError.slice(0, 300)}`);
  } finally {
    await node.stop();
  }
}

/** The node's resident memory now: the median of 5 readings 200 ms apart, in MiB. */
async function settledRss(pid: number): Promise<number> {
  const readings: number[] = [];
  for (let index = 0; index < 5; index++) {
    readings.push(memoryOf(pid).rssMiB);
    await sleep(200);
  }
  return median(readings);
}

/** Resident memory of the node before and after 1,000 idle WebSocket connections open. */
export async function benchIdleConnections(count = 1_000): Promise<void> {
  const node = await startNodeProcess(["--port", "0", "--in-memory", "--ws-max-connections", String(count)]);
  const sockets: RawWebSocket[] = [];
  try {
    // Warm the paths an idle connection uses (the upgrade, a call) before the first reading.
    for (let index = 0; index < 20; index++) {
      const socket = await openRawWebSocket(wsUrl(node), () => undefined);
      socket.close();
      await socket.closed;
    }
    await sleep(500);
    const before = await settledRss(node.child.pid!);
    for (let start = 0; start < count; start += 100) {
      sockets.push(...(await Promise.all(Array.from({ length: Math.min(100, count - start) }, () => openRawWebSocket(wsUrl(node), () => undefined)))));
    }
    // All of them are open: one more is refused.
    const refused = await openRawWebSocket(wsUrl(node), () => undefined).then(
      (socket) => (socket.close(), "accepted"),
      (error: Error) => error.message,
    );
    await sleep(1_000);
    const after = await settledRss(node.child.pid!);
    // The issue's target is in MB (10^6 bytes); the readings are MiB.
    const delta = ((after - before) * 1024 * 1024) / 1e6;
    for (const socket of sockets) socket.close();
    await Promise.all(sockets.map((socket) => socket.closed));
    await sleep(1_000);
    const closed = await settledRss(node.child.pid!);
    const verdict = recordResult(`${count.toLocaleString("en-US")} idle WebSocket connections (RSS delta)`, delta, "MB", targetsOf("lower", [issue, 50]), {
      beforeMiB: before,
      openMiB: after,
      afterCloseMiB: closed,
      perConnectionKB: (delta * 1000) / count,
      oneMore: refused,
    });
    line(
      `${count.toLocaleString("en-US")} idle WebSocket connections`,
      `+${delta.toFixed(1)} MB`,
      `RSS ${before.toFixed(1)} -> ${after.toFixed(1)} MiB (${((delta * 1000) / count).toFixed(1)} KB each); ${closed.toFixed(1)} MiB once closed; one more: ${refused}`,
      verdict,
    );
  } finally {
    for (const socket of sockets) socket.socket.destroy();
    await node.stop();
  }
}
