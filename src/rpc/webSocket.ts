// JSON-RPC over WebSocket on the HTTP port (an upgrade; server.ts checks Host and Origin first):
// every message goes to the same dispatcher as an HTTP body, with the connection's subscriptions
// (subscriptions.ts). Bounded: connections, a message's size (the body limit; ws closes with 1009
// past it), and what waits to be sent to a client that does not read (past the limit the
// connection is closed, with the reason logged). The ws package (and the node:https, node:tls and
// node:zlib it loads) is imported on the first upgrade, not at start (issue 39).
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { RawData, WebSocket, WebSocketServer } from "ws";
import type { Logger } from "../common/logger.js";
import type { Answer, Dispatcher } from "./dispatch.js";
import { RpcErrorCode } from "./errors.js";
import { PartedAnswer } from "./partedAnswer.js";
import type { SubscriberConnection, SubscriptionHub } from "./subscriptions.js";

export interface WebSocketEndpointOptions {
  dispatcher: Dispatcher;
  /** Where eth_subscribe's subscriptions live; without it eth_subscribe answers "notifications not supported". */
  subscriptions: SubscriptionHub | undefined;
  log: Logger;
  maxConnections: number;
  /** Largest incoming message (the HTTP body limit). */
  maxMessageBytes: number;
  /** Most bytes waiting to be sent to one client; past it the connection is closed. */
  sendBufferLimitBytes: number;
}

/** Between pings, and the time a client has to answer one. */
const pingIntervalMs = 30_000;

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data).toString("utf8");
}

export class WebSocketEndpoint {
  private server: WebSocketServer | undefined;
  private serverLoading: Promise<WebSocketServer> | undefined;
  /** Upgrades waiting for the first load of ws: they count against the connection limit. */
  private waiting = 0;
  private readonly open = new Set<WebSocket>();

  constructor(private readonly options: WebSocketEndpointOptions) {}

  private loadServer(): Promise<WebSocketServer> {
    this.serverLoading ??= import("ws").then(({ WebSocketServer }) => {
      this.server = new WebSocketServer({ noServer: true, maxPayload: this.options.maxMessageBytes, perMessageDeflate: false, clientTracking: false });
      return this.server;
    });
    return this.serverLoading;
  }

  /** Connections open now. */
  get connections(): number {
    return this.open.size;
  }

  /** Whether one more connection is allowed. */
  get full(): boolean {
    return this.open.size + this.waiting >= this.options.maxConnections;
  }

  /** Completes the upgrade of a request already checked (Host, Origin, the connection limit). */
  upgrade(request: IncomingMessage, socket: Socket, head: Buffer): void {
    // node:http's idle timeout does not apply: a subscriber may wait long for its next block.
    socket.setTimeout(0);
    if (this.server !== undefined) {
      this.server.handleUpgrade(request, socket, head, (ws) => this.serve(ws, request));
      return;
    }
    this.waiting += 1;
    this.loadServer().then(
      (server) => {
        this.waiting -= 1;
        if (!socket.destroyed) server.handleUpgrade(request, socket, head, (ws) => this.serve(ws, request));
      },
      (error: unknown) => {
        this.waiting -= 1;
        this.options.log.error({ err: error }, "the WebSocket server could not be loaded");
        socket.destroy();
      },
    );
  }

  /** Asks every connection to close (1001); `terminate` drops them at once. */
  closeAll(terminate: boolean): void {
    for (const ws of this.open) {
      if (terminate) ws.terminate();
      else ws.close(1001, "server stopping");
    }
  }

  private serve(ws: WebSocket, request: IncomingMessage): void {
    const { dispatcher, log, sendBufferLimitBytes } = this.options;
    this.open.add(ws);
    const remote = `${request.socket.remoteAddress ?? "?"}:${request.socket.remotePort ?? "?"}`;
    let closedForSlowReading = false;
    const closeForSlowReading = (buffered: number) => {
      if (closedForSlowReading) return;
      closedForSlowReading = true;
      log.warn({ remote, buffered, limit: sendBufferLimitBytes }, "WebSocket client does not read what it is sent: more than the send buffer limit waits for it; connection closed");
      subscriber?.close();
      ws.terminate();
    };
    const send = (text: string) => {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(text);
      if (ws.bufferedAmount > sendBufferLimitBytes) closeForSlowReading(ws.bufferedAmount);
    };
    const subscriber: SubscriberConnection | undefined = this.options.subscriptions?.openConnection({
      send,
      // Characters, not bytes: notifications are ASCII but for a log's data, which is hex.
      heldLimitChars: sendBufferLimitBytes,
      overflow: closeForSlowReading,
    });
    // As geth: a ping every 30 s; a client that has not answered the previous one by then is gone.
    let answeredPing = true;
    ws.on("pong", () => (answeredPing = true));
    const pinger = setInterval(() => {
      if (!answeredPing) {
        log.debug({ remote }, "WebSocket client did not answer a ping within 30 s: connection closed");
        ws.terminate();
        return;
      }
      answeredPing = false;
      ws.ping();
    }, pingIntervalMs);
    pinger.unref();
    ws.on("message", (data, isBinary) => {
      const scope = subscriber?.messageScope();
      const write = (answer: Answer | undefined) => {
        if (answer !== undefined) send(typeof answer === "string" ? answer : answer.text());
        scope?.answered();
      };
      const fail = (error: unknown) => {
        log.error({ err: error }, "answer failed");
        send(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: RpcErrorCode.InternalError, message: "Internal error" } }));
      };
      void isBinary; // binary frames are read as UTF-8 text, as geth does
      try {
        // Answers go out as whole messages here: each is held to the response limit.
        const answer = dispatcher.handle(rawText(data), scope, true);
        if (answer === undefined || typeof answer === "string" || answer instanceof PartedAnswer) write(answer);
        else answer.then(write, fail);
      } catch (error) {
        fail(error);
      }
    });
    ws.on("error", (error: Error & { code?: string }) => {
      // ws closes the connection itself (1009 for a message past the limit, 1002 for a bad frame).
      log.debug({ remote, err: error, code: error.code }, "WebSocket connection error");
    });
    ws.on("close", (code) => {
      clearInterval(pinger);
      this.open.delete(ws);
      subscriber?.close();
      log.debug({ remote, code }, "WebSocket connection closed");
    });
  }
}
