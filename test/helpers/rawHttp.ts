// Raw HTTP/1.1 over one socket, for tests of the transport: exact bytes in, exact answers out.
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export interface RawAnswer {
  statusLine: string;
  headers: [string, string][];
  body: string;
}

/** Splits a byte stream into HTTP/1.1 answers (bodies with a Content-Length, chunked, or none). */
export function parseAnswers(bytes: Buffer): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const headerEnd = bytes.indexOf("\r\n\r\n", offset);
    if (headerEnd < 0) throw new Error(`an answer cut short: ${JSON.stringify(bytes.subarray(offset).toString("latin1"))}`);
    const [statusLine, ...lines] = bytes.subarray(offset, headerEnd).toString("latin1").split("\r\n");
    const headers = lines.map((line): [string, string] => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]);
    const header = (wanted: string) => headers.find(([name]) => name.toLowerCase() === wanted)?.[1];
    offset = headerEnd + 4;
    if (header("transfer-encoding") === "chunked") {
      const chunks: Buffer[] = [];
      for (;;) {
        const sizeEnd = bytes.indexOf("\r\n", offset);
        if (sizeEnd < 0) throw new Error("a chunked answer cut short");
        const size = Number.parseInt(bytes.subarray(offset, sizeEnd).toString("latin1"), 16);
        chunks.push(bytes.subarray(sizeEnd + 2, sizeEnd + 2 + size));
        offset = sizeEnd + 2 + size + 2;
        if (size === 0) break;
      }
      answers.push({ statusLine: statusLine!, headers, body: Buffer.concat(chunks).toString("utf8") });
      continue;
    }
    const length = Number(header("content-length") ?? 0);
    answers.push({ statusLine: statusLine!, headers, body: bytes.subarray(offset, offset + length).toString("utf8") });
    offset += length;
  }
  return answers;
}

/**
 * Writes `pieces` on one connection (with a pause between them), then reads until `until` answers
 * arrived or the server closed the connection (`closed` tells which); with `until` "close", only
 * the close ends the wait, within `timeoutMs` (10 s). `endAfterLast` ends the client's side with the
 * last piece; `readAfterMs` holds the client's reading back for that long after connecting.
 */
export async function exchange(
  url: string,
  pieces: readonly (string | Buffer)[],
  until: number | "close",
  options: { endAfterLast?: boolean; readAfterMs?: number; timeoutMs?: number } = {},
): Promise<{ answers: RawAnswer[]; closed: boolean }> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), noDelay: true });
  const received: Buffer[] = [];
  let closed = false;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(until === "close" ? "the connection stayed open" : `no ${until} answers in time: ${Buffer.concat(received).toString("latin1")}`)), options.timeoutMs ?? 10_000);
    const check = () => {
      try {
        if (closed || (until !== "close" && parseAnswers(Buffer.concat(received)).length >= until)) {
          clearTimeout(timer);
          resolve();
        }
      } catch {
        // An answer still arriving.
      }
    };
    socket.on("data", (chunk: Buffer) => {
      received.push(chunk);
      check();
    });
    socket.on("close", () => {
      closed = true;
      check();
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  if (options.readAfterMs !== undefined) {
    socket.pause();
    setTimeout(() => socket.resume(), options.readAfterMs);
  }
  for (const [index, piece] of pieces.entries()) {
    if (index > 0) await sleep(30);
    if (options.endAfterLast === true && index === pieces.length - 1) socket.end(piece);
    else socket.write(piece);
  }
  await done;
  socket.destroy();
  return { answers: parseAnswers(Buffer.concat(received)), closed };
}
