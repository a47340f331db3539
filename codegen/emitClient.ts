// generated/client.ts: a typed JSON-RPC client over HTTP, one function per method, with batching.
import type { LoadedDocument } from "./document.js";
import { generatedBanner, paramsTypeName, resultTypeName } from "./naming.js";

export function emitClient(document: LoadedDocument): string {
  const imports = document.methods.flatMap((method) => [paramsTypeName(method), resultTypeName(method)]);
  const methods = document.methods.map((method) => {
    const doc = `  /** ${method.summary.replaceAll("*/", "*\\/")} */\n`;
    return `${doc}  ${method.name}(...params: ${paramsTypeName(method)}): Promise<${resultTypeName(method)}> {\n    return this.call(${JSON.stringify(method.name)}, ...params);\n  }\n`;
  });
  return `${generatedBanner}
import type {
  RpcMethodName,
  RpcMethods,
${imports.map((name) => `  ${name},`).join("\n")}
} from "./methods.js";

/** The error member of a JSON-RPC response. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Thrown by a client call whose response carries an error. */
export class RpcResponseError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(readonly method: string, error: RpcErrorObject) {
    super(error.message);
    this.name = "RpcResponseError";
    this.code = error.code;
    this.data = error.data;
  }
}

/** Thrown when the server's answer is not a JSON-RPC response at all. */
export class RpcTransportError extends Error {
  constructor(message: string, readonly status?: number, readonly body?: string) {
    super(message);
    this.name = "RpcTransportError";
  }
}

export interface RpcClientOptions {
  /** Extra HTTP headers, e.g. Origin. */
  headers?: Record<string, string>;
  /** Per-request time limit in milliseconds (default 30,000). */
  timeoutMs?: number;
}

/** One call of a batch, built with \`batchCall\`. */
export type RpcBatchCall = { [M in RpcMethodName]: { method: M; params: RpcMethods[M]["params"] } }[RpcMethodName];

/** The outcome of one call of a batch, in the order of the calls. */
export type RpcBatchOutcome = { ok: true; result: unknown } | { ok: false; error: RpcErrorObject };

/** Builds a typed batch entry. */
export function batchCall<M extends RpcMethodName>(method: M, ...params: RpcMethods[M]["params"]): RpcBatchCall {
  return { method, params } as RpcBatchCall;
}

interface JsonRpcResponse {
  jsonrpc?: unknown;
  id?: unknown;
  result?: unknown;
  error?: RpcErrorObject;
}

/** Drops trailing omitted optional parameters so they are not sent as null. */
function trimOmitted(params: readonly unknown[]): unknown[] {
  let end = params.length;
  while (end > 0 && params[end - 1] === undefined) end--;
  return params.slice(0, end);
}

/** Typed client of the chain-node JSON-RPC interface. */
export class RpcClient {
  #nextId = 1;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;

  constructor(readonly url: string, options: RpcClientOptions = {}) {
    this.#headers = { "content-type": "application/json", ...options.headers };
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Calls any documented method; throws RpcResponseError when the node answers an error. */
  async call<M extends RpcMethodName>(method: M, ...params: RpcMethods[M]["params"]): Promise<RpcMethods[M]["result"]> {
    const id = this.#nextId++;
    const response = await this.#post({ jsonrpc: "2.0", id, method, params: trimOmitted(params) });
    if (Array.isArray(response) || response === null || typeof response !== "object") {
      throw new RpcTransportError(\`\${method}: the response is not a JSON-RPC response object\`);
    }
    const message = response as JsonRpcResponse;
    if (message.error !== undefined) throw new RpcResponseError(method, message.error);
    if (!("result" in message)) throw new RpcTransportError(\`\${method}: the response has neither result nor error\`);
    return message.result as RpcMethods[M]["result"];
  }

  /** Sends several calls in one HTTP request; outcomes come back in the order of the calls. */
  async batch(calls: readonly RpcBatchCall[]): Promise<RpcBatchOutcome[]> {
    const firstId = this.#nextId;
    this.#nextId += calls.length;
    const body = calls.map((call, index) => ({ jsonrpc: "2.0", id: firstId + index, method: call.method, params: trimOmitted(call.params) }));
    const response = await this.#post(body);
    if (!Array.isArray(response)) {
      const error = (response as JsonRpcResponse | null)?.error;
      if (error !== undefined) throw new RpcResponseError("batch", error);
      throw new RpcTransportError("batch: the response is not an array");
    }
    const byId = new Map<unknown, JsonRpcResponse>();
    for (const item of response as JsonRpcResponse[]) byId.set(item?.id, item);
    return calls.map((call, index): RpcBatchOutcome => {
      const item = byId.get(firstId + index);
      if (item === undefined) return { ok: false, error: { code: -32603, message: \`no response for \${call.method} in the batch\` } };
      return item.error !== undefined ? { ok: false, error: item.error } : { ok: true, result: item.result };
    });
  }

  /** The OpenRPC document the node serves. */
  async rpcDiscover(): Promise<Record<string, unknown>> {
    const response = await this.#post({ jsonrpc: "2.0", id: this.#nextId++, method: "rpc.discover", params: [] });
    const message = response as JsonRpcResponse;
    if (message.error !== undefined) throw new RpcResponseError("rpc.discover", message.error);
    return message.result as Record<string, unknown>;
  }

  async #post(body: unknown): Promise<unknown> {
    const response = await fetch(this.url, {
      method: "POST",
      headers: this.#headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    const text = await response.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new RpcTransportError(\`HTTP \${response.status}: the body is not JSON\`, response.status, text);
    }
  }

${methods.join("\n")}}
`;
}
