// The HTTP transport (Koa): verbs, CORS, content type, body limit. It knows nothing of JSON-RPC
// beyond handing the body to the dispatcher and shaping its own refusals as JSON-RPC errors.
import { once } from "node:events";
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Koa from "koa";
import type { Logger } from "../common/logger.js";
import type { Dispatcher } from "./dispatch.js";
import { RpcErrorCode } from "./errors.js";
import type { RpcOptions } from "./options.js";

const acceptedContentTypes = new Set(["application/json", "application/json-rpc", "application/jsonrequest"]);

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

class BodyTooLargeError extends Error {}

/** The JSON-RPC error body of an HTTP-level refusal, so clients can read why. */
function refusalBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } });
}

function refusal(ctx: Koa.Context, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.type = "application/json";
  ctx.body = refusalBody(code, message);
}

/** Reads the whole body, refusing more than `limit` bytes. Events, not async iteration: hot path. */
function readBody(request: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks, size).toString("utf8"));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onError);
    };
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", onError);
  });
}

export function createRpcServer(options: RpcOptions, dispatcher: Dispatcher, log: Logger): RpcServer {
  const tooLargeMessage = `request body larger than the limit of ${options.bodyLimitBytes} bytes`;
  const anyOrigin = options.corsOrigins.includes("*");
  const allowedOrigins = new Set(options.corsOrigins);
  const app = new Koa();
  app.silent = true;
  app.on("error", (error: NodeJS.ErrnoException) => {
    // A client that goes away mid-request is routine; anything else is worth a warning.
    const clientGone = error.code === "ECONNRESET" || error.code === "ECONNABORTED" || error.code === "EPIPE" || error.code?.startsWith("HPE_") === true;
    if (clientGone) log.debug({ err: error }, "client connection error");
    else log.warn({ err: error }, "http error");
  });

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
        break;
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

    const contentType = (ctx.req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (contentType !== "" && !acceptedContentTypes.has(contentType)) {
      return refusal(ctx, 415, RpcErrorCode.InvalidRequest, `content type ${contentType} is not accepted: use application/json`);
    }

    const declaredLength = Number(ctx.req.headers["content-length"] ?? 0);
    let body: string;
    try {
      if (declaredLength > options.bodyLimitBytes) throw new BodyTooLargeError();
      body = await readBody(ctx.req, options.bodyLimitBytes);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      // The rest of the body is not read: answer, then close the connection.
      ctx.set("Connection", "close");
      return refusal(ctx, 413, RpcErrorCode.InvalidRequest, tooLargeMessage);
    }

    const answer = dispatcher.handle(body);
    const response = typeof answer === "string" || answer === undefined ? answer : await answer;
    if (response === undefined) {
      ctx.status = 204;
      return;
    }
    // The answer is already JSON text: write it straight out instead of through Koa's respond().
    ctx.respond = false;
    const headers: OutgoingHttpHeaders = { "content-type": "application/json", "content-length": Buffer.byteLength(response) };
    if (allowOrigin !== undefined) {
      headers["access-control-allow-origin"] = allowOrigin;
      headers.vary = "Origin";
    }
    ctx.res.writeHead(200, headers).end(response);
  });

  // After app.use: callback() composes the middleware registered so far.
  const handleRequest = app.callback();
  let server: Server | undefined;
  return {
    async start(): Promise<AddressInfo> {
      const listening = createServer(handleRequest);
      server = listening;
      listening.headersTimeout = 20_000;
      listening.requestTimeout = 60_000;
      // A connection with no traffic either way for this long is dropped: a client that stops
      // reading its answer cannot hold the answer in memory for ever.
      listening.timeout = socketIdleTimeoutMs;
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
      const closed = new Promise<void>((resolve) => current.close(() => resolve()));
      current.closeIdleConnections();
      const grace = setTimeout(() => current.closeAllConnections(), shutdownGraceMs);
      await closed;
      clearTimeout(grace);
    },
  };
}
