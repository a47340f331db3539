// The plain POST path: keep-alive connections whose requests are all ordinary JSON-RPC POSTs are
// read and answered here, on the socket, without node:http's request and response objects. That
// machinery costs as much as the rest of a small call's pipeline: on this 2-core machine node:http
// answering a constant reached 16,600-17,700 req/s where the same constant answered from the socket
// reached 32,300-34,900 (see docs/design.md, "The POST path").
//
// Only a narrow, strictly checked form of request is taken: "POST <target> HTTP/1.1", header lines
// that are plain tokens and visible characters, one Host that the node answers, exactly one decimal
// Content-Length within the body limit, an accepted content type or none, and no Transfer-Encoding,
// Expect, Upgrade, Origin or "Connection: close". At the first request that is anything else (a
// browser's CORS request, a chunked body, an oversized one, a refused Host, HTTP/1.0, a malformed
// line), the connection with every byte not yet answered goes to node:http, which serves it from
// there on exactly as it serves a connection from the start. Every request this path answers is
// one node:http would parse the same way, so no request can be read two ways (no smuggling between
// the two parsers). node:http's time limits apply here as well (PlainPostTimeouts).
import type { Socket } from "node:net";
import type { Logger } from "../common/logger.js";
import type { Dispatcher } from "./dispatch.js";
import { drainedOrClosed, PartedAnswer, writeInTurns } from "./partedAnswer.js";

export interface PlainPostOptions {
  dispatcher: Dispatcher;
  log: Logger;
  bodyLimitBytes: number;
  /** The media type of a Content-Type value the node refuses, or undefined when it answers it (the same check as node:http's path). */
  refusedContentType(headerValue: string): string | undefined;
  /** Whether a Host header value is one the node answers (node:http's path refuses the others). */
  hostAllowed(headerValue: string): boolean;
  /** Takes over a connection from its next unanswered request on; `unread` are its bytes already read. */
  handOff(socket: Socket, unread: Buffer | undefined): void;
  /** The body of the 500 answer to a dispatcher failure (a bug past its own error handling). */
  internalErrorBody: string;
  reportConnectionError(error: NodeJS.ErrnoException): void;
  /** node:http's own limits, applied the same way here (see createRpcServer). */
  timeouts: PlainPostTimeouts;
}

export interface PlainPostTimeouts {
  /** Between an answer and the next request. */
  keepAliveMs: number;
  /** From a request's first byte to the end of its header block. */
  headersMs: number;
  /** From a request's first byte to its last. */
  requestMs: number;
  /** No traffic either way while an answer is awaited or still being written. */
  idleMs: number;
}

/** node:http's default, which connections handed to it get as well. */
const maxHeaderBytes = 16 * 1024;

const headerBlockEnd = Buffer.from("\r\n\r\n");
/**
 * A request line and header lines this path takes: a path of URI characters (RFC 3986), tokens for
 * names (RFC 9110), values of visible characters, spaces, tabs and obs-text. No line folding, no
 * bare CR or LF.
 */
const plainHeaderBlock = /^POST \/[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]* HTTP\/1\.1(?:\r\n[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t\x20-\x7e\x80-\xff]*)+$/;
/** A Content-Length as llhttp takes it: whitespace before the digits, spaces only after them. */
const contentLengthValue = /^[\t ]*([0-9]{1,10}) *$/;

let cachedDateSecond = -1;
let cachedDate = "";
/** The Date header's value, made once a second as node:http does. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== cachedDateSecond) {
    cachedDateSecond = second;
    cachedDate = new Date(now).toUTCString();
  }
  return cachedDate;
}

/**
 * The bytes node:http writes for the same answer, header for header: a JSON body with its type
 * and length, or none; the date; the connection headers of `keepAlive` (keepAliveHeaders).
 */
function httpAnswer(status: string, body: string | undefined, keepAlive: string): string {
  return `${httpHead(status, body, keepAlive)}${body ?? ""}`;
}

/** The status line and headers of `httpAnswer`, without the body. */
function httpHead(status: string, body: string | undefined, keepAlive: string): string {
  return httpHeadOfLength(status, body === undefined ? undefined : Buffer.byteLength(body), keepAlive);
}

/** The same for a JSON body of `bodyBytes` bytes (undefined: no body). */
function httpHeadOfLength(status: string, bodyBytes: number | undefined, keepAlive: string): string {
  const content = bodyBytes === undefined ? "" : `content-type: application/json\r\ncontent-length: ${bodyBytes}\r\n`;
  return `HTTP/1.1 ${status}\r\n${content}Date: ${httpDate()}\r\n${keepAlive}\r\n\r\n`;
}

/**
 * Bodies longer than this go to the socket apart from their head: joined to it, a body of
 * megabytes (a struct-log trace) would be copied whole once more.
 */
const bodyWrittenApartChars = 64 * 1024;

/** The connection headers of a keep-alive answer, as node:http words them for its limit. */
function keepAliveHeaders(keepAliveMs: number): string {
  return `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}`;
}

/** node:http's answers to a request that took too long to arrive, and to one cut short by the client's end. */
const requestTimeoutAnswer = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n";
const badRequestAnswer = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n";

/** A request this path answers: where its body starts and how long it is. */
interface PlainRequest {
  bodyStart: number;
  bodyLength: number;
}

/**
 * Reads a complete header block (`headerEnd` is the index of its closing CRLF CRLF). Undefined when
 * the request is not one this path takes.
 */
function plainRequest(buffer: Buffer, headerEnd: number, options: PlainPostOptions): PlainRequest | undefined {
  const head = buffer.toString("latin1", 0, headerEnd);
  if (!plainHeaderBlock.test(head)) return undefined;
  let bodyLength: number | undefined;
  let hostSeen = false;
  let lineStart = head.indexOf("\r\n") + 2;
  while (lineStart > 1) {
    const lineEnd = head.indexOf("\r\n", lineStart);
    const line = lineEnd < 0 ? head.slice(lineStart) : head.slice(lineStart, lineEnd);
    lineStart = lineEnd + 2;
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1);
    switch (name) {
      case "content-length": {
        const digits = contentLengthValue.exec(value);
        if (bodyLength !== undefined || digits === null) return undefined;
        bodyLength = Number(digits[1]);
        if (bodyLength > options.bodyLimitBytes) return undefined;
        break;
      }
      case "host":
        if (hostSeen || !options.hostAllowed(value)) return undefined;
        hostSeen = true;
        break;
      case "content-type":
        if (options.refusedContentType(value) !== undefined) return undefined;
        break;
      // llhttp reads Proxy-Connection as Connection.
      case "connection":
      case "proxy-connection": {
        const tokens = value.toLowerCase();
        if (tokens.includes("close") || tokens.includes("upgrade")) return undefined;
        break;
      }
      case "transfer-encoding":
      case "expect":
      case "upgrade":
      case "origin":
        return undefined;
    }
  }
  if (bodyLength === undefined || !hostSeen) return undefined;
  return { bodyStart: headerEnd + headerBlockEnd.length, bodyLength };
}

/** One connection on the plain path. */
class PlainPostConnection {
  /** Bytes read and not yet answered, in arrival order. */
  private unread: Buffer[] = [];
  private unreadBytes = 0;
  /** Bytes the request being read needs before it can be answered (its header block and body). */
  private bytesNeeded = 0;
  /** When the first byte of the request being read arrived (performance.now()). */
  private requestStartedAt = 0;
  private answering = false;
  private closeAfterAnswer = false;
  private peerEnded = false;
  private detached = false;
  /** What this connection listens to on its socket while it is on the plain path (set after the handlers exist). */
  private readonly listeners: readonly [event: string, listener: Parameters<Socket["off"]>[1]][];

  constructor(
    readonly socket: Socket,
    private readonly options: PlainPostOptions,
    /** keepAliveHeaders of the options' limit. */
    private readonly keepAlive: string,
    private readonly onDetached: (connection: PlainPostConnection) => void,
  ) {
    this.listeners = [
      ["data", this.onData],
      ["end", this.onEnd],
      ["error", this.onError],
      ["close", this.onClose],
      ["timeout", this.onTimeout],
      ["drain", this.onDrain],
    ];
    for (const [event, listener] of this.listeners) socket.on(event, listener);
    socket.setTimeout(options.timeouts.headersMs);
  }

  /** Nothing read, nothing being answered: the connection can be closed without losing anything. */
  get idle(): boolean {
    return !this.answering && this.unreadBytes === 0;
  }

  /** Closes now if idle (after what is still being written), else after the answer in progress. */
  closeWhenIdle(): void {
    if (this.idle) this.closeWith();
    else this.closeAfterAnswer = true;
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.unreadBytes === 0) this.requestStartedAt = performance.now();
    this.unread.push(chunk);
    this.unreadBytes += chunk.length;
    if (!this.answering) this.answerWhatArrived();
  };

  private readonly onEnd = (): void => {
    // The client sends nothing more: answer every complete request it sent, then close.
    this.peerEnded = true;
    if (!this.answering) this.answerWhatArrived();
  };

  private readonly onError = (error: NodeJS.ErrnoException): void => this.options.reportConnectionError(error);

  private readonly onClose = (): void => this.detach();

  /** The socket saw no traffic for the time armWaitLimit chose. */
  private readonly onTimeout = (): void => {
    if (this.answering || this.unreadBytes === 0) {
      // Idle for idleMs with an answer awaited or still being written, or for keepAliveMs
      // between requests: node:http closes such connections too.
      this.socket.destroy();
      return;
    }
    this.waitForMore();
  };

  private readonly onDrain = (): void => {
    if (this.answering || this.detached) return;
    if (this.socket.isPaused()) {
      this.socket.resume();
      this.answerWhatArrived();
    } else if (this.unreadBytes === 0) {
      this.armWaitLimit();
    }
  };

  /** Arms the socket's inactivity timer for what the connection is waiting for now. */
  private armWaitLimit(): void {
    const { timeouts } = this.options;
    if (this.answering || this.socket.writableLength > 0) this.socket.setTimeout(timeouts.idleMs);
    else if (this.unreadBytes === 0) this.socket.setTimeout(timeouts.keepAliveMs);
    else this.socket.setTimeout(Math.max(1, Math.ceil(this.requestDeadline() - performance.now())));
  }

  /** The request being read must have arrived by then: its header block, or all of it. */
  private requestDeadline(): number {
    const { timeouts } = this.options;
    return this.requestStartedAt + (this.bytesNeeded > 0 ? timeouts.requestMs : timeouts.headersMs);
  }

  /** All unread bytes as one buffer (usually the one chunk they came in). */
  private joinedUnread(): Buffer {
    if (this.unread.length > 1) this.unread = [Buffer.concat(this.unread, this.unreadBytes)];
    return this.unread[0]!;
  }

  private consume(bytes: number): void {
    const buffer = this.joinedUnread();
    this.unreadBytes -= bytes;
    this.unread = this.unreadBytes === 0 ? [] : [buffer.subarray(bytes)];
    this.bytesNeeded = 0;
    if (this.unreadBytes > 0) this.requestStartedAt = performance.now();
  }

  /** Answers every complete request read, in order, until one must be awaited or is not plain. */
  private answerWhatArrived(): void {
    while (this.unreadBytes > 0 && !this.detached) {
      if (this.unreadBytes < this.bytesNeeded) return this.waitForMore();
      const buffer = this.joinedUnread();
      const headerEnd = buffer.indexOf(headerBlockEnd);
      if (headerEnd < 0) {
        if (this.unreadBytes > maxHeaderBytes) return this.handOff();
        return this.waitForMore();
      }
      if (headerEnd > maxHeaderBytes) return this.handOff();
      const request = plainRequest(buffer, headerEnd, this.options);
      if (request === undefined) return this.handOff();
      const requestBytes = request.bodyStart + request.bodyLength;
      if (this.unreadBytes < requestBytes) {
        this.bytesNeeded = requestBytes;
        return this.waitForMore();
      }
      const body = buffer.toString("utf8", request.bodyStart, requestBytes);
      this.consume(requestBytes);
      if (!this.answer(body)) return;
      if (this.socket.writableNeedDrain) {
        // The client is not reading its answers: read nothing more until it does.
        this.socket.pause();
        return;
      }
    }
    if (this.unreadBytes > 0 || this.detached) return;
    if (this.peerEnded || this.closeAfterAnswer) this.socket.end();
    else this.armWaitLimit();
  }

  /** The request being read is incomplete: wait for the rest, unless it can no longer come in time. */
  private waitForMore(): void {
    if (this.peerEnded) {
      // Cut short by the client's end: node:http answers 400 and closes.
      this.closeWith(badRequestAnswer);
      return;
    }
    if (performance.now() >= this.requestDeadline()) {
      this.closeWith(requestTimeoutAnswer);
      return;
    }
    this.armWaitLimit();
  }

  /** Finishes what is already written, then writes `finalAnswer` if any, and closes; nothing more is read. */
  private closeWith(finalAnswer?: string): void {
    const socket = this.socket;
    this.detachKeepingErrors();
    if (finalAnswer === undefined) socket.end();
    else socket.end(finalAnswer);
  }

  /** Detaches, still reporting the socket's errors (an unhandled 'error' event would end the process). */
  private detachKeepingErrors(): void {
    this.detach();
    this.socket.on("error", this.onError);
  }

  /** Dispatches one body. True when it was answered at once, false when the answer is awaited. */
  private answer(body: string): boolean {
    let answer: ReturnType<Dispatcher["handle"]>;
    try {
      answer = this.options.dispatcher.handle(body);
    } catch (error) {
      this.writeInternalError(error);
      return true;
    }
    if (typeof answer === "string" || answer === undefined) {
      this.write(answer);
      return true;
    }
    // Later requests on this connection wait for this answer: answers go out in request order.
    this.answering = true;
    this.socket.pause();
    this.armWaitLimit();
    if (answer instanceof PartedAnswer) {
      this.writeParted(answer);
      return false;
    }
    answer.then(
      (awaited) => (awaited instanceof PartedAnswer ? this.writeParted(awaited) : this.afterAwaitedAnswer(() => this.write(awaited))),
      (error: unknown) => this.afterAwaitedAnswer(() => this.writeInternalError(error)),
    );
    return false;
  }

  /** Writes a long answer a piece per turn of the event loop; the connection's next requests wait for its end. */
  private writeParted(answer: PartedAnswer): void {
    if (this.socket.destroyed) return this.afterAwaitedAnswer(() => {});
    this.socket.write(httpHeadOfLength("200 OK", answer.byteLength, this.keepAlive));
    writeInTurns(
      answer,
      { write: (piece) => this.socket.write(piece), onDrain: (resume) => drainedOrClosed(this.socket, resume) },
      () => this.afterAwaitedAnswer(() => {}),
      () => this.socket.destroyed || this.detached,
    );
  }

  private afterAwaitedAnswer(writeAnswer: () => void): void {
    this.answering = false;
    writeAnswer();
    if (this.detached || this.socket.destroyed) return;
    this.socket.resume();
    this.answerWhatArrived();
  }

  private write(text: string | undefined): void {
    if (this.socket.destroyed) return;
    const status = text === undefined ? "204 No Content" : "200 OK";
    if (text === undefined || text.length <= bodyWrittenApartChars) {
      this.socket.write(httpAnswer(status, text, this.keepAlive));
      return;
    }
    this.socket.cork();
    this.socket.write(httpHead(status, text, this.keepAlive));
    this.socket.write(text);
    this.socket.uncork();
  }

  private writeInternalError(error: unknown): void {
    this.options.log.error({ err: error }, "answer failed");
    if (!this.socket.destroyed) this.socket.write(httpAnswer("500 Internal Server Error", this.options.internalErrorBody, this.keepAlive));
  }

  private handOff(): void {
    const socket = this.socket;
    if (this.peerEnded || socket.readableEnded) {
      // The client has sent its last byte and the stream has ended: node:http cannot read from it
      // any more (nor does it answer after a client's end). Finish the answers written, and close.
      this.options.log.debug("a request after the client's end was not plain: closing after the answers written");
      this.closeWith();
      return;
    }
    const unread = this.unreadBytes === 0 ? undefined : this.joinedUnread();
    this.detach();
    this.options.handOff(socket, unread);
  }

  private detach(): void {
    if (this.detached) return;
    this.detached = true;
    this.unread = [];
    this.unreadBytes = 0;
    for (const [event, listener] of this.listeners) this.socket.off(event, listener);
    this.socket.setTimeout(0);
    this.onDetached(this);
  }
}

/** The connections on the plain path, for a stopping server. */
export class PlainPostConnections {
  private readonly open = new Set<PlainPostConnection>();
  private readonly keepAlive: string;

  constructor(private readonly options: PlainPostOptions) {
    this.keepAlive = keepAliveHeaders(options.timeouts.keepAliveMs);
  }

  /** Serves a new connection. */
  accept(socket: Socket): void {
    this.open.add(new PlainPostConnection(socket, this.options, this.keepAlive, (connection) => this.open.delete(connection)));
  }

  /** Closes idle connections now and the others after their answer in progress. */
  closeWhenIdle(): void {
    for (const connection of this.open) connection.closeWhenIdle();
  }

  closeAll(): void {
    for (const connection of this.open) connection.socket.destroy();
  }
}
