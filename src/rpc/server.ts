// The HTTP transport (Koa): verbs, CORS, content type, body limit. It knows nothing of JSON-RPC
// beyond handing the body to the dispatcher and shaping its own refusals as JSON-RPC errors.
import { once } from "node:events";
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";
import Koa from "koa";
import type { Logger } from "../common/logger.js";
import type { Dispatcher } from "./dispatch.js";
import { RpcErrorCode } from "./errors.js";
import type { RpcOptions } from "./options.js";

const acceptedContentTypes = new Set(["application/json", "application/json-rpc", "application/jsonrequest"]);

/** Time a stopping server gives open requests before it closes their connections. */
const shutdownGraceMs = 5_000;

export interface RpcServer {
  /** Listens; resolves with the bound address. */
  start(): Promise<AddressInfo>;
  /** Stops accepting, lets running requests finish (bounded), closes every connection. */
  stop(): Promise<void>;
}

class BodyTooLargeError extends Error {}

/** An HTTP-level refusal, answered with a JSON-RPC error body so clients can read why. */
function refusal(ctx: Koa.Context, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.type = "application/json";
  ctx.body = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } });
}

async function readBody(request: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLargeError();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

export function createRpcServer(options: RpcOptions, dispatcher: Dispatcher, log: Logger): RpcServer {
  const anyOrigin = options.corsOrigins.includes("*");
  const allowedOrigins = new Set(options.corsOrigins);
  const app = new Koa();
  app.silent = true;
  app.on("error", (error: unknown) => log.warn({ err: error }, "http error"));

  app.use(async (ctx) => {
    const origin = ctx.get("origin");
    if (origin !== "") {
      if (!anyOrigin && !allowedOrigins.has(origin)) {
        return refusal(ctx, 403, RpcErrorCode.InvalidRequest, `origin ${origin} is not allowed (see --cors)`);
      }
      ctx.set("Access-Control-Allow-Origin", anyOrigin ? "*" : origin);
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

    const contentType = ctx.get("content-type").split(";")[0]!.trim().toLowerCase();
    if (contentType !== "" && !acceptedContentTypes.has(contentType)) {
      return refusal(ctx, 415, RpcErrorCode.InvalidRequest, `content type ${contentType} is not accepted: use application/json`);
    }

    const tooLarge = `request body larger than the limit of ${options.bodyLimitBytes} bytes`;
    const declaredLength = Number(ctx.get("content-length") || 0);
    let body: string;
    try {
      if (declaredLength > options.bodyLimitBytes) throw new BodyTooLargeError();
      body = await readBody(ctx.req, options.bodyLimitBytes);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      // The rest of the body is not read: answer, then close the connection.
      ctx.set("Connection", "close");
      return refusal(ctx, 413, RpcErrorCode.InvalidRequest, tooLarge);
    }

    const response = await dispatcher.handle(body);
    if (response === undefined) {
      ctx.status = 204;
      return;
    }
    ctx.status = 200;
    ctx.type = "application/json";
    ctx.body = response;
  });

  let server: Server | undefined;
  return {
    async start(): Promise<AddressInfo> {
      const listening = app.listen({ host: options.host, port: options.port });
      server = listening;
      listening.headersTimeout = 20_000;
      listening.requestTimeout = 60_000;
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
