// The HTTP transport: plain JSON-RPC POSTs answered on the socket (plainPostConnections.ts), the
// rest through node:http and Koa (verbs, CORS, content type, body limit). It knows nothing of
// JSON-RPC beyond handing the body to the dispatcher and shaping its own refusals as JSON-RPC errors.
import { once } from "node:events";
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type Koa from "koa";
import type { Logger } from "../common/logger.js";
import type { Answer, Dispatcher } from "./dispatch.js";
import { RpcErrorCode } from "./errors.js";
import { createHostCheck, hostnameOf } from "./hostCheck.js";
import type { RpcOptions } from "./options.js";
import { drainedOrClosed, PartedAnswer, writeInTurns } from "./partedAnswer.js";
import { PlainPostConnections } from "./plainPostConnections.js";
import type { SubscriptionHub } from "./subscriptions.js";
import { WebSocketEndpoint } from "./webSocket.js";

const acceptedContentTypes = new Set(["application/json", "application/json-rpc", "application/jsonrequest"]);

/**
 * The last Content-Type value found acceptable: a client sends the same header with every request,
 * and comparing it is cheaper than splitting and lower-casing it again (a few µs a request).
 */
let lastAcceptedContentType = "application/json";

/** The media type of a Content-Type value the node does not answer; undefined for an accepted one or none. */
function refusedContentType(headerValue: string): string | undefined {
  if (headerValue === lastAcceptedContentType) return undefined;
  const type = headerValue.split(";")[0]!.trim().toLowerCase();
  if (type !== "" && !acceptedContentTypes.has(type)) return type;
  lastAcceptedContentType = headerValue;
  return undefined;
}

/** node:http's handler of a request, as Koa's callback() makes one. */
type RequestHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

/** Time a stopping server gives open requests before it closes their connections. */
const shutdownGraceMs = 5_000;

/** A connection silent in both directions for this long is closed. */
const socketIdleTimeoutMs = 120_000;

export interface RpcServer {
  /** Listens; resolves with the bound address. */
  start(): Promise<AddressInfo>;
  /** Stops accepting, lets running requests finish (bounded), closes every connection. */
  stop(): Promise<void>;
}

/** The JSON-RPC error body of an HTTP-level refusal, so clients can read why. */
function refusalBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } });
}

function refusal(ctx: Koa.Context, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.type = "application/json";
  ctx.body = refusalBody(code, message);
}

interface BodyHandlers {
  onBody(body: string): void;
  /** More than the limit arrived; the rest is not read. */
  onTooLarge(): void;
  onError(error: Error): void;
}

/**
 * Reads the whole body, refusing more than `limit` bytes. Callbacks, not a promise: the answer to
 * a small request is then written from the same event as its last byte, which on this machine
 * serves a third more requests per second than resuming a promise first (make bench-rpc).
 */
function collectBody(request: IncomingMessage, limit: number, handlers: BodyHandlers): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      cleanup();
      handlers.onTooLarge();
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => {
    cleanup();
    handlers.onBody(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks, size).toString("utf8"));
  };
  const onError = (error: Error) => {
    cleanup();
    handlers.onError(error);
  };
  const cleanup = () => {
    request.off("data", onData);
    request.off("end", onEnd);
    request.off("error", onError);
  };
  request.on("data", onData);
  request.on("end", onEnd);
  request.on("error", onError);
}

/**
 * How much of a refused body is read and dropped before the refusal is written. A client still
 * sending when the connection closes gets a reset, and node:http clients then report EPIPE or
 * ECONNRESET instead of the answer; dropped bytes cost no memory. Past this the answer goes out
 * and the connection closes at once (a client sending 32 MiB past the limit is not reading).
 */
const refusedBodyDrainBytes = 32 * 1024 * 1024;

/** Reads and drops the rest of a refused request's body (at most `limit` bytes), then calls `done`. */
function drainBody(request: IncomingMessage, limit: number, done: () => void): void {
  if (request.complete) return done();
  let drained = 0;
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > limit) finish();
  };
  const finish = () => {
    request.off("data", onData);
    request.off("end", finish);
    request.off("error", finish);
    done();
  };
  request.on("data", onData);
  request.on("end", finish);
  request.on("error", finish);
}

/** Writes a refusal (an HTTP status with a JSON-RPC error body) on a bare response. */
function writeRefusal(response: ServerResponse, status: number, code: number, message: string, extraHeaders: OutgoingHttpHeaders = {}): void {
  const body = refusalBody(code, message);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...extraHeaders }).end(body);
}

/** Writes an HTTP refusal on a socket whose request asked for an upgrade (no response object exists). */
function refuseUpgrade(socket: Socket, status: number, reason: string, code: number, message: string): void {
  const body = refusalBody(code, message);
  socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/**
 * `subscriptions`: where WebSocket connections keep eth_subscribe's subscriptions; without it
 * WebSocket requests are answered but eth_subscribe answers "notifications not supported".
 */
export function createRpcServer(options: RpcOptions, dispatcher: Dispatcher, log: Logger, subscriptions?: SubscriptionHub): RpcServer {
  const tooLargeMessage = `request body larger than the limit of ${options.bodyLimitBytes} bytes`;
  const anyOrigin = options.corsOrigins.includes("*");
  const allowedOrigins = new Set(options.corsOrigins);
  const hostAllowed = createHostCheck(options.allowedHosts);

  const reportConnectionError = (error: NodeJS.ErrnoException) => {
    // A client that goes away mid-request is routine; anything else is worth a warning.
    const clientGone = error.code === "ECONNRESET" || error.code === "ECONNABORTED" || error.code === "EPIPE" || error.code?.startsWith("HPE_") === true;
    if (clientGone) log.debug({ err: error }, "client connection error");
    else log.warn({ err: error }, "http error");
  };

  /** An answer that could not be written (a bug past the dispatcher's own error handling). */
  const failAnswer = (response: ServerResponse, error: unknown) => {
    log.error({ err: error }, "answer failed");
    if (!response.headersSent) writeRefusal(response, 500, RpcErrorCode.InternalError, "Internal error");
    else response.destroy();
  };

  /**
   * A JSON-RPC POST whose origin, if any, is allowed: content type, body limit, dispatch, answer.
   * `allowOrigin` is the CORS answer header's value for a cross-origin request.
   */
  function answerRpcPost(request: IncomingMessage, response: ServerResponse, allowOrigin: string | undefined): void {
    const corsHeaders: OutgoingHttpHeaders = allowOrigin === undefined ? {} : { "access-control-allow-origin": allowOrigin, vary: "Origin" };
    const refusedType = refusedContentType(request.headers["content-type"] ?? "");
    if (refusedType !== undefined) {
      return writeRefusal(response, 415, RpcErrorCode.InvalidRequest, `content type ${refusedType} is not accepted: use application/json`, corsHeaders);
    }
    // An oversized body is read to its end and dropped (up to a bound), then answered, and the connection closed.
    const refuseTooLarge = () => writeRefusal(response, 413, RpcErrorCode.InvalidRequest, tooLargeMessage, { ...corsHeaders, connection: "close" });
    const declaredLength = Number(request.headers["content-length"] ?? 0);
    if (declaredLength > options.bodyLimitBytes + refusedBodyDrainBytes) return refuseTooLarge();
    if (declaredLength > options.bodyLimitBytes) return drainBody(request, refusedBodyDrainBytes, refuseTooLarge);
    const write = (answer: Answer | undefined) => {
      if (answer === undefined) response.writeHead(204, corsHeaders).end();
      else if (typeof answer === "string") response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer), ...corsHeaders }).end(answer);
      else {
        response.writeHead(200, { "content-type": "application/json", "content-length": answer.byteLength, ...corsHeaders });
        writeInTurns(answer, { write: (piece) => response.write(piece), onDrain: (resume) => drainedOrClosed(response, resume) }, () => response.end(), () => response.destroyed);
      }
    };
    collectBody(request, options.bodyLimitBytes, {
      onBody(body) {
        try {
          const answer = dispatcher.handle(body);
          if (typeof answer === "string" || answer === undefined || answer instanceof PartedAnswer) write(answer);
          else answer.then(write, (error: unknown) => failAnswer(response, error));
        } catch (error) {
          failAnswer(response, error);
        }
      },
      onTooLarge: () => drainBody(request, refusedBodyDrainBytes, refuseTooLarge),
      // The client went away mid-body: nobody is left to answer.
      onError: reportConnectionError,
    });
  }

  // Koa serves everything but same-origin JSON-RPC POSTs: CORS (preflight, origin checks and
  // cross-origin POSTs), the GET health check and refusals of other verbs.
  const koaHandler = (KoaApplication: typeof Koa): RequestHandler => {
    const app = new KoaApplication();
    app.silent = true;
    app.on("error", reportConnectionError);

    app.use(async (ctx) => {
      const origin = ctx.req.headers.origin;
      let allowOrigin: string | undefined;
      if (origin !== undefined) {
        if (!anyOrigin && !allowedOrigins.has(origin)) {
          return refusal(ctx, 403, RpcErrorCode.InvalidRequest, `origin ${origin} is not allowed (see --cors)`);
        }
        allowOrigin = anyOrigin ? "*" : origin;
        ctx.set("Access-Control-Allow-Origin", allowOrigin);
        ctx.vary("Origin");
      }
      switch (ctx.method) {
        case "POST":
          // Written straight out by answerRpcPost, not through Koa's respond().
          ctx.respond = false;
          answerRpcPost(ctx.req, ctx.res, allowOrigin);
          return;
        case "OPTIONS":
          ctx.set("Access-Control-Allow-Methods", "POST, GET, OPTIONS");
          ctx.set("Access-Control-Allow-Headers", "Content-Type");
          ctx.set("Access-Control-Max-Age", "600");
          ctx.status = 204;
          return;
        case "GET":
        case "HEAD":
          // Health check: the server is up. An empty body, not Koa's default "OK".
          ctx.status = 200;
          ctx.body = "";
          return;
        default:
          ctx.set("Allow", "POST, GET, OPTIONS");
          return refusal(ctx, 405, RpcErrorCode.InvalidRequest, `HTTP method ${ctx.method} is not allowed: send JSON-RPC requests with POST`);
      }
    });

    // After app.use: callback() composes the middleware registered so far.
    return app.callback();
  };
  /**
   * Koa is loaded at its first request, not at start-up: loading it and its dependencies took a
   * tenth of the start-up time, and clients that are not browsers never need it. Until it is
   * loaded, its requests wait (their bodies stay unread in the paused request).
   */
  let handleWithKoa: RequestHandler | undefined;
  let loadingKoa: Promise<RequestHandler> | undefined;
  const serveWithKoa = (request: IncomingMessage, response: ServerResponse): void => {
    if (handleWithKoa !== undefined) {
      void handleWithKoa(request, response);
      return;
    }
    loadingKoa ??= import("koa").then((loaded) => (handleWithKoa = koaHandler(loaded.default)));
    loadingKoa.then(
      (handle) => void handle(request, response),
      (error: unknown) => failAnswer(response, error),
    );
  };
  /**
   * A POST without an Origin header (every non-browser client) goes from node:http straight to
   * answerRpcPost: Koa's per-request context costs more than the rest of a small call's pipeline
   * (see docs/design.md, "The POST path").
   */
  const handleRequest = (request: IncomingMessage, response: ServerResponse): void => {
    // node:http keeps the first of several Host headers; HTTP/1.1 (RFC 9112, 3.2) wants a 400.
    if ((request.headersDistinct.host?.length ?? 0) > 1) {
      return drainBody(request, refusedBodyDrainBytes, () =>
        writeRefusal(response, 400, RpcErrorCode.InvalidRequest, "more than one Host header", { connection: "close" }),
      );
    }
    const host = request.headers.host;
    if (!hostAllowed(host)) {
      return writeRefusal(response, 403, RpcErrorCode.InvalidRequest, `invalid host specified: ${hostnameOf(host!)} (names the node answers are set with --vhosts)`);
    }
    if (request.method === "POST" && request.headers.origin === undefined) return answerRpcPost(request, response, undefined);
    serveWithKoa(request, response);
  };
  /**
   * New connections start on the plain POST path (plainPostConnections.ts), which hands a
   * connection to node:http's own connection handling at its first request that is not a plain
   * JSON-RPC POST. Without that handler to hand over to, node:http serves every connection.
   */
  function servePlainPostsFirst(listening: Server): PlainPostConnections | undefined {
    const nodeHttpConnectionListeners = listening.listeners("connection");
    if (nodeHttpConnectionListeners.length !== 1) {
      log.warn({ listeners: nodeHttpConnectionListeners.length }, "node:http's connection handling is not one listener here: every request goes through node:http (slower)");
      return undefined;
    }
    const serveWithNodeHttp = nodeHttpConnectionListeners[0] as (this: Server, socket: Socket) => void;
    const plainPosts = new PlainPostConnections({
      dispatcher,
      log,
      bodyLimitBytes: options.bodyLimitBytes,
      refusedContentType,
      hostAllowed,
      internalErrorBody: refusalBody(RpcErrorCode.InternalError, "Internal error"),
      reportConnectionError,
      timeouts: { keepAliveMs: listening.keepAliveTimeout, headersMs: listening.headersTimeout, requestMs: listening.requestTimeout, idleMs: listening.timeout },
      handOff(socket, unread) {
        if (unread !== undefined) socket.unshift(unread);
        serveWithNodeHttp.call(listening, socket);
      },
    });
    listening.removeListener("connection", serveWithNodeHttp);
    listening.on("connection", (socket: Socket) => plainPosts.accept(socket));
    return plainPosts;
  }

  const webSockets = new WebSocketEndpoint({
    dispatcher,
    subscriptions,
    log: log.child({ transport: "ws" }),
    maxConnections: options.wsMaxConnections,
    maxMessageBytes: options.bodyLimitBytes,
    sendBufferLimitBytes: options.wsSendBufferLimitBytes,
  });
  /** A WebSocket upgrade: the HTTP path's Host and Origin rules, then the connection limit. */
  const handleUpgrade = (request: IncomingMessage, socket: Socket, head: Buffer): void => {
    socket.on("error", reportConnectionError);
    if ((request.headersDistinct.host?.length ?? 0) > 1) return refuseUpgrade(socket, 400, "Bad Request", RpcErrorCode.InvalidRequest, "more than one Host header");
    const host = request.headers.host;
    if (!hostAllowed(host)) {
      return refuseUpgrade(socket, 403, "Forbidden", RpcErrorCode.InvalidRequest, `invalid host specified: ${hostnameOf(host!)} (names the node answers are set with --vhosts)`);
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !anyOrigin && !allowedOrigins.has(origin)) {
      return refuseUpgrade(socket, 403, "Forbidden", RpcErrorCode.InvalidRequest, `origin ${origin} is not allowed (see --cors)`);
    }
    if (webSockets.full) {
      log.warn({ limit: options.wsMaxConnections }, "WebSocket connection refused: the connection limit is reached");
      return refuseUpgrade(socket, 503, "Service Unavailable", RpcErrorCode.InvalidRequest, `too many WebSocket connections (limit ${options.wsMaxConnections}, see --ws-max-connections)`);
    }
    webSockets.upgrade(request, socket, head);
  };

  let server: Server | undefined;
  let plainPosts: PlainPostConnections | undefined;
  return {
    async start(): Promise<AddressInfo> {
      const listening = createServer(handleRequest);
      server = listening;
      listening.headersTimeout = 20_000;
      listening.requestTimeout = 60_000;
      // A connection with no traffic either way for this long is dropped: a client that stops
      // reading its answer cannot hold the answer in memory for ever.
      listening.timeout = socketIdleTimeoutMs;
      // After the limits above: the plain path applies the same ones.
      plainPosts = servePlainPostsFirst(listening);
      listening.on("upgrade", handleUpgrade);
      // "Expect: 100-continue": refuse an oversized body before the client sends it.
      listening.on("checkContinue", (request: IncomingMessage, response: ServerResponse) => {
        if (Number(request.headers["content-length"] ?? 0) > options.bodyLimitBytes) {
          const body = refusalBody(RpcErrorCode.InvalidRequest, tooLargeMessage);
          response.writeHead(413, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" }).end(body);
          return;
        }
        response.writeContinue();
        void handleRequest(request, response);
      });
      listening.listen({ host: options.host, port: options.port });
      // Rejects with the listen error (address in use, ...) if that comes first.
      await once(listening, "listening");
      return listening.address() as AddressInfo;
    },
    async stop(): Promise<void> {
      const current = server;
      if (current === undefined) return;
      server = undefined;
      const plain = plainPosts;
      plainPosts = undefined;
      const closed = new Promise<void>((resolve) => current.close(() => resolve()));
      current.closeIdleConnections();
      plain?.closeWhenIdle();
      webSockets.closeAll(false);
      const grace = setTimeout(() => {
        current.closeAllConnections();
        plain?.closeAll();
        webSockets.closeAll(true);
      }, shutdownGraceMs);
      await closed;
      clearTimeout(grace);
    },
  };
}
