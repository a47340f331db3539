// A small HTTP/1.1 load generator: N keep-alive connections, each sending its next prebuilt POST
// as soon as the previous answer is complete (the same body for a time, or its own list of bodies). It does as little work per request as it can (no
// header objects, no JSON parsing), so that on a 2-core machine the node, not the client, is what
// gets measured. Every answer is checked: HTTP 200 and a JSON-RPC result, not an error.
import { connect, type Socket } from "node:net";

export interface LoadOptions {
  url: string;
  body: string;
  connections: number;
  durationMs: number;
}

/** Connection i sends `bodies[i]` in order, one at a time, and closes after the last answer. */
export interface SequenceOptions {
  url: string;
  bodies: readonly (readonly string[])[];
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers that were not HTTP 200 with a "result" member, plus connection failures. */
  errors: number;
  /** The first such answer, for the report. */
  firstError?: string;
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

function postRequest(target: URL, body: string): Buffer {
  return Buffer.from(`POST ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

/** The same body on every connection until `durationMs` has passed. */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  const request = postRequest(target, options.body);
  const deadline = performance.now() + options.durationMs;
  return drive(target, options.connections, () => (performance.now() < deadline ? request : undefined));
}

/** Each connection its own bodies, in order (say, one sender's transactions by nonce). */
export function runSequences(options: SequenceOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  const requests = options.bodies.map((bodies) => bodies.map((body) => postRequest(target, body)));
  const sent = requests.map(() => 0);
  return drive(target, requests.length, (connection) => requests[connection]![sent[connection]!++]);
}

/** Runs `connections` keep-alive connections; each sends `nextRequest(itself)` until it answers undefined. */
function drive(target: URL, connections: number, nextRequest: (connection: number) => Buffer | undefined): Promise<LoadResult> {
  let latencies = new Float64Array(1 << 16);
  let completed = 0;
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();

  const record = (latency: number) => {
    if (completed === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[completed++] = latency;
  };

  const runConnection = (connection: number): Promise<void> =>
    new Promise((resolve) => {
      const socket: Socket = connect({ host: target.hostname, port: Number(target.port) });
      socket.setNoDelay(true);
      let pending: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        const request = nextRequest(connection);
        if (request === undefined) {
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
        if (!ok && errors++ === 0) firstError = pending.subarray(end + headerEnd.length, total).toString("utf8");
        record(performance.now() - sentAt);
        pending = pending.subarray(total);
        send();
      });
      socket.on("error", (error) => {
        if (errors++ === 0) firstError = error.message;
        resolve();
      });
      socket.on("close", () => resolve());
    });

  return Promise.all(Array.from({ length: connections }, (_, connection) => runConnection(connection))).then(() => {
    const seconds = (performance.now() - started) / 1000;
    const sorted = latencies.slice(0, completed).sort();
    return { requests: completed, seconds, perSecond: completed / seconds, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), errors, firstError };
  });
}
