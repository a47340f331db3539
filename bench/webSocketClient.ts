// A small WebSocket client for the benchmarks, over a raw TCP socket: the upgrade, masked text
// frames built once (a zero masking key: valid, and the frame can be sent again as it is), and
// server frames read as they come (unmasked, unfragmented: what the node's ws server sends). It does
// as little work per message as it can, as bench/loadClient.ts does for HTTP, so that on a 2-core
// machine the node, not the client, is what gets measured.
import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import type { LoadResult } from "./loadClient.js";

const headerEnd = Buffer.from("\r\n\r\n");
const resultMember = Buffer.from('"result"');

/** A client frame (masked, zero key) of one text message. */
export function textFrame(text: string): Buffer {
  return frame(0x1, Buffer.from(text, "utf8"));
}

function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const extended = length < 126 ? 0 : length < 65_536 ? 2 : 8;
  const header = Buffer.alloc(2 + extended + 4);
  header[0] = 0x80 | opcode;
  if (extended === 0) header[1] = 0x80 | length;
  else if (extended === 2) {
    header[1] = 0x80 | 126;
    header.writeUInt16BE(length, 2);
  } else {
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  // The masking key (the last 4 bytes of the header) is zero: the payload goes as it is.
  return Buffer.concat([header, payload]);
}

export interface RawWebSocket {
  readonly socket: Socket;
  send(frame: Buffer): void;
  /** Sends a close frame and ends the socket. */
  close(): void;
  /** Resolves when the socket has closed. */
  readonly closed: Promise<void>;
}

/**
 * Opens a WebSocket to `url` (ws://host:port/); `onMessage` gets each text message's payload and
 * the time it was read (performance.now()). Pings are answered.
 */
export function openRawWebSocket(url: string, onMessage: (payload: Buffer, atMs: number) => void): Promise<RawWebSocket> {
  const target = new URL(url);
  const socket = connect({ host: target.hostname, port: Number(target.port) });
  socket.setNoDelay(true);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const connection: RawWebSocket = {
    socket,
    send: (data) => void socket.write(data),
    close: () => {
      if (!socket.writable) return;
      socket.write(frame(0x8, Buffer.from([0x03, 0xe8])));
      socket.end();
    },
    closed,
  };
  return new Promise((resolve, reject) => {
    let upgraded = false;
    let pending: Buffer = Buffer.alloc(0);
    socket.once("error", reject);
    socket.on("connect", () => {
      const key = randomBytes(16).toString("base64");
      socket.write(`GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    socket.on("data", (chunk: Buffer) => {
      const atMs = performance.now();
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      if (!upgraded) {
        const end = pending.indexOf(headerEnd);
        if (end < 0) return;
        const status = pending.subarray(0, end).toString("latin1").split("\r\n", 1)[0]!;
        if (!status.startsWith("HTTP/1.1 101")) {
          socket.destroy();
          reject(new Error(`upgrade refused: ${status}`));
          return;
        }
        upgraded = true;
        pending = pending.subarray(end + headerEnd.length);
        socket.off("error", reject);
        socket.on("error", () => undefined);
        resolve(connection);
      }
      for (;;) {
        if (pending.length < 2) return;
        const opcode = pending[0]! & 0x0f;
        let length = pending[1]! & 0x7f;
        let offset = 2;
        if (length === 126) {
          if (pending.length < 4) return;
          length = pending.readUInt16BE(2);
          offset = 4;
        } else if (length === 127) {
          if (pending.length < 10) return;
          length = Number(pending.readBigUInt64BE(2));
          offset = 10;
        }
        if (pending.length < offset + length) return;
        const payload = pending.subarray(offset, offset + length);
        pending = pending.subarray(offset + length);
        if (opcode === 0x1 || opcode === 0x2) onMessage(payload, atMs);
        else if (opcode === 0x9) socket.write(frame(0xa, Buffer.from(payload)));
        else if (opcode === 0x8) socket.end();
      }
    });
  });
}

function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

/**
 * The same JSON-RPC message on each of `connections` WebSockets, one at a time on each (the next
 * as soon as the answer is read), until `durationMs` has passed: the WebSocket side of
 * loadClient's runLoad. Every answer must carry a "result".
 */
export async function runWebSocketLoad(options: { url: string; body: string; connections: number; durationMs: number }): Promise<LoadResult> {
  const message = textFrame(options.body);
  let latencies = new Float64Array(1 << 16);
  let completed = 0;
  let errors = 0;
  let firstError: string | undefined;
  const record = (latency: number) => {
    if (completed === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[completed++] = latency;
  };
  const sockets = await Promise.all(
    Array.from({ length: options.connections }, () => {
      let sentAt = 0;
      let socket: RawWebSocket | undefined;
      const opened = openRawWebSocket(options.url, (payload, atMs) => {
        if (payload.indexOf(resultMember) < 0 && errors++ === 0) firstError = payload.toString("utf8");
        record(atMs - sentAt);
        if (performance.now() < deadline) {
          sentAt = performance.now();
          socket!.send(message);
        } else socket!.close();
      });
      return opened.then((opened) => {
        socket = opened;
        return { start: () => ((sentAt = performance.now()), opened.send(message)), opened };
      });
    }),
  );
  const started = performance.now();
  const deadline = started + options.durationMs;
  for (const { start } of sockets) start();
  await Promise.all(sockets.map(({ opened }) => opened.closed));
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.slice(0, completed).sort();
  return { requests: completed, seconds, perSecond: completed / seconds, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), errors, firstError };
}
