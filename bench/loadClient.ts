// A small HTTP/1.1 load generator: N keep-alive connections, each sending the same prebuilt POST
// as soon as the previous answer is complete. It does as little work per request as it can (no
// header objects, no JSON parsing), so that on a 2-core machine the node, not the client, is what
// gets measured. Every answer is checked: HTTP 200 and a JSON-RPC result, not an error.
import { connect, type Socket } from "node:net";

export interface LoadOptions {
  url: string;
  body: string;
  connections: number;
  durationMs: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers that were not HTTP 200 with a "result" member, plus connection failures. */
  errors: number;
}

const headerEnd = Buffer.from("\r\n\r\n");
const contentLengthName = Buffer.from("content-length:");
const resultMember = Buffer.from('"result"');

function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

/** Finds Content-Length in a raw header block (ASCII, any case). */
function contentLength(buffer: Buffer, end: number): number {
  const lower = Buffer.from(buffer.subarray(0, end).toString("latin1").toLowerCase(), "latin1");
  const at = lower.indexOf(contentLengthName);
  if (at < 0) return 0;
  const lineEnd = lower.indexOf("\r\n", at);
  return Number.parseInt(lower.subarray(at + contentLengthName.length, lineEnd).toString("latin1").trim(), 10);
}

export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  const request = Buffer.from(
    `POST ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(options.body)}\r\n\r\n${options.body}`,
  );
  let latencies = new Float64Array(1 << 16);
  let completed = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + options.durationMs;

  const record = (latency: number) => {
    if (completed === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[completed++] = latency;
  };

  const runConnection = (): Promise<void> =>
    new Promise((resolve) => {
      const socket: Socket = connect({ host: target.hostname, port: Number(target.port) });
      socket.setNoDelay(true);
      let pending: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        if (performance.now() >= deadline) {
          socket.end();
          return;
        }
        sentAt = performance.now();
        socket.write(request);
      };
      socket.on("connect", send);
      socket.on("data", (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        const end = pending.indexOf(headerEnd);
        if (end < 0) return;
        const total = end + headerEnd.length + contentLength(pending, end);
        if (pending.length < total) return;
        const ok = pending[9] === 0x32 && pending[10] === 0x30 && pending[11] === 0x30 && pending.indexOf(resultMember, end) >= 0;
        if (!ok) errors++;
        record(performance.now() - sentAt);
        pending = pending.subarray(total);
        send();
      });
      socket.on("error", () => {
        errors++;
        resolve();
      });
      socket.on("close", () => resolve());
    });

  return Promise.all(Array.from({ length: options.connections }, runConnection)).then(() => {
    const seconds = (performance.now() - started) / 1000;
    const sorted = latencies.slice(0, completed).sort();
    return { requests: completed, seconds, perSecond: completed / seconds, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), errors };
  });
}
