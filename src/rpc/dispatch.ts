// JSON-RPC 2.0 semantics, independent of HTTP: parse, envelope checks, batches, notifications,
// method lookup, module gate, parameter validation, the handler call and error shaping.
import { rpcMethodTable, unsupportedMethods, type RpcMethodEntry } from "../../generated/methodTable.js";
import type { RpcHandlers } from "../../generated/methods.js";
import { StoredDataDamagedError } from "../chain/chain.js";
import type { Logger } from "../common/logger.js";
import {
  RpcError,
  RpcErrorCode,
  executionTimeoutError,
  internalError,
  invalidParamsError,
  invalidRequestError,
  methodNotAvailableError,
  methodNotImplementedError,
  methodNotSupportedError,
  responseTooLargeError,
  storedDataDamagedError,
} from "./errors.js";
import { jsonShapeExcess, type JsonShapeLimits } from "./jsonShape.js";
import { PartedAnswer } from "./partedAnswer.js";
import { describeParamError } from "./paramErrors.js";
import type { SubscriptionScope } from "./subscriptions.js";

/** What a handler learns about the call it serves. */
export interface RpcCallContext {
  readonly method: string;
  readonly log: Logger;
  /** Subscriptions of the request's connection: only on a connection that carries notifications (WebSocket). */
  readonly subscriptions?: SubscriptionScope;
  /**
   * The answer must fit the response limit: the request is part of a batch, or came over a
   * transport that writes answers whole (WebSocket). Otherwise a result made as an unbounded
   * EncodedJson may be longer (its maker bounds it).
   */
  readonly boundedAnswer?: boolean;
}

export type RpcHandlerSet = RpcHandlers<RpcCallContext>;

/**
 * A result already encoded as JSON text: spliced into the response, never re-serialised. Given in
 * parts (texts, or bytes of ASCII text), they are joined once, with the response around them, or
 * written out one after another (PartedAnswer). An `unbounded` result, answered alone over HTTP,
 * is not held to the response limit: its maker bounded it by a limit of its own (a struct-log
 * trace: the trace answer limit), and it is written in parts, never joined.
 */
export class EncodedJson {
  readonly parts: readonly (string | Uint8Array)[];

  constructor(
    json: string | readonly (string | Uint8Array)[],
    readonly unbounded = false,
  ) {
    this.parts = typeof json === "string" ? [json] : json;
  }
}

export interface DispatcherOptions {
  handlers: RpcHandlerSet;
  /** Modules whose methods may be called; rpc.discover is always available. */
  enabledModules: ReadonlySet<string>;
  /** Most requests in one batch. */
  batchLimit: number;
  /** Largest answer in bytes, a whole batch included; calls past it answer -32011 and do not run. */
  responseLimitBytes: number;
  /** Nesting and size a body may have before JSON.parse is given it (past them: -32600, nothing runs). */
  jsonShapeLimits: JsonShapeLimits;
  /** The OpenRPC document served by rpc.discover, as JSON text. */
  discoverDocumentJson: string;
  /**
   * Longest a batch may run, as the reference's request time limit: once passed, its remaining
   * requests answer -32011 and do not run. Undefined: no limit.
   */
  batchTimeLimitMs?: number;
  /** Told of a batch's requests before it runs them (see BatchPreparation). */
  prepareBatch?: BatchPreparation;
  /**
   * Told of every answered call (operators' metrics): the method (methods this node does not
   * document count as "other", so a client cannot make up new names), its seconds, and its error
   * code when it failed.
   */
  observeCall?: CallObserver;
  log: Logger;
}

export type CallObserver = (method: string, seconds: number, errorCode: number | undefined) => void;

/** A request of a batch, well-formed and of an enabled module, as prepareBatch sees it. */
export interface BatchRequest {
  readonly method: string;
  readonly params: readonly unknown[];
}

/**
 * A batch runs one request at a time, so its later requests wait for the earlier ones: this starts
 * work they will need meanwhile. It answers what to call once the batch is done (to let go of work
 * for requests that did not run), or undefined. Their parameters are not checked yet.
 */
export type BatchPreparation = (requests: readonly BatchRequest[]) => (() => void) | undefined;

/** An answer's text, or its parts when it is long (see PartedAnswer). */
export type Answer = string | PartedAnswer;

export interface Dispatcher {
  /**
   * Answers a request body; undefined when nothing is to be sent back (notifications only).
   * Synchronous when every handler involved is: the common case pays for no promise.
   */
  handle(body: string, subscriptions?: SubscriptionScope, boundedAnswers?: boolean): MaybePromise<Answer | undefined>;
}

type MaybePromise<T> = T | Promise<T>;
type RequestId = string | number | null;
type AnyHandler = (params: unknown[], context: RpcCallContext) => unknown;

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as Promise<unknown> | null)?.then === "function";
}

// Shared by every call without parameters: frozen so no handler can change it for the next.
const noParams = Object.freeze([]) as unknown as unknown[];

const discoverMethod = "rpc.discover";

/** Longest method name accepted (as geth). */
const maxMethodNameLength = 2048;

function isValidId(id: unknown): id is RequestId {
  return id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
}

/** JSON.parse rounds integers past 2^53: such an id could not be echoed as sent. */
function isExactId(id: RequestId): boolean {
  return typeof id !== "number" || !Number.isInteger(id) || Number.isSafeInteger(id);
}

/** The id an answer to this batch item carries; undefined for a notification. */
function answerableId(item: unknown): RequestId | undefined {
  if (item === null || typeof item !== "object" || Array.isArray(item)) return null;
  if (!("id" in item)) return undefined;
  const id = (item as { id: unknown }).id;
  return isValidId(id) && isExactId(id) ? id : null;
}

/**
 * Whether a JSON text takes more than `limit` bytes in UTF-8. A UTF-16 code unit takes one to three
 * bytes, so only a text within a factor of three of the limit is measured.
 */
function longerThan(text: string, limit: number): boolean {
  if (text.length > limit) return true;
  if (text.length * 3 <= limit) return false;
  return Buffer.byteLength(text) > limit;
}

function errorResponse(id: RequestId, error: RpcError): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: error.toErrorObject() });
}

/** Results encoded in parts longer than this are answered in parts (PartedAnswer), unless in a batch. */
const partedAnswerMinChars = 512 * 1024;

/** The UTF-8 length of the parts together. */
function utf8Length(parts: readonly (string | Uint8Array)[]): number {
  let bytes = 0;
  for (const part of parts) bytes += typeof part === "string" ? Buffer.byteLength(part) : part.byteLength;
  return bytes;
}

/** The parts as one text (parts in bytes are ASCII text). */
function joinParts(parts: readonly (string | Uint8Array)[]): string {
  return parts.map((part) => (typeof part === "string" ? part : Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString("latin1"))).join("");
}

/**
 * Answers `result` with `id`. Alone, a long encoded result is answered in parts, and an unbounded
 * one always when `streamable` (see EncodedJson).
 */
function successResponse(id: RequestId, result: unknown, alone: boolean, streamable: boolean): Answer {
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
  if (result instanceof EncodedJson) {
    const parts = [head, ...result.parts, "}"];
    const unbounded = result.unbounded && streamable;
    if (unbounded || (alone && parts.reduce((chars, part) => chars + (typeof part === "string" ? part.length : part.byteLength), 0) > partedAnswerMinChars)) {
      return new PartedAnswer(parts, utf8Length(parts), unbounded);
    }
    // One flat text, built once: a text made by joining strings with + is a tree of them, copied
    // whole when measured (Buffer.byteLength) and again when joined to the next piece.
    return joinParts(parts);
  }
  return `${head}${result === undefined ? "null" : JSON.stringify(result)}}`;
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { enabledModules, batchLimit, responseLimitBytes, batchTimeLimitMs, jsonShapeLimits, log, observeCall } = options;
  const debugEnabled = log.isLevelEnabled("debug");
  const discoverResult = new EncodedJson(options.discoverDocumentJson);

  const handlers = new Map<string, AnyHandler>();
  const contexts = new Map<string, RpcCallContext>();
  for (const entry of rpcMethodTable.values()) {
    if (!entry.implemented) continue;
    const handler = (options.handlers as unknown as Record<string, AnyHandler | undefined>)[entry.name];
    if (handler === undefined) throw new Error(`no handler for the implemented method ${entry.name}`);
    handlers.set(entry.name, handler);
    contexts.set(entry.name, { method: entry.name, log });
  }

  function checkParams(entry: RpcMethodEntry, params: unknown[]): unknown[] {
    const { paramNames, requiredParamCount, paramValidators } = entry;
    if (params.length > paramNames.length) {
      throw invalidParamsError(`too many arguments, want at most ${paramNames.length}`);
    }
    if (params.length < requiredParamCount) {
      throw invalidParamsError(`missing value for required argument ${params.length} (${paramNames[params.length]})`);
    }
    const checked = new Array<unknown>(params.length);
    for (let index = 0; index < params.length; index++) {
      const value = params[index];
      if (value === null || value === undefined) {
        // null in an optional position means "omitted", as in the reference clients.
        if (index < requiredParamCount) throw invalidParamsError(`missing value for required argument ${index} (${paramNames[index]})`);
        checked[index] = undefined;
        continue;
      }
      const validate = paramValidators[index]!;
      if (!validate(value)) throw invalidParamsError(describeParamError(index, value, validate.errors ?? []));
      checked[index] = value;
    }
    while (checked.length > 0 && checked[checked.length - 1] === undefined) checked.pop();
    return checked;
  }

  /** Runs one call: a value, a promise of one, or a thrown error. */
  function call(method: string, params: unknown[], subscriptions: SubscriptionScope | undefined, streamable: boolean): unknown {
    if (method === discoverMethod) {
      if (params.length > 0) throw invalidParamsError("too many arguments, want at most 0");
      return discoverResult;
    }
    const entry = rpcMethodTable.get(method);
    if (entry === undefined) {
      const reason = unsupportedMethods.get(method);
      throw reason === undefined ? methodNotAvailableError(method) : methodNotSupportedError(method, reason);
    }
    if (!enabledModules.has(entry.namespace)) throw methodNotAvailableError(method);
    // Malformed input is reported as such even before a method's implementation lands.
    const checked = params.length === 0 && entry.requiredParamCount === 0 ? noParams : checkParams(entry, params);
    const handler = handlers.get(method);
    if (handler === undefined) throw methodNotImplementedError(method);
    const context = contexts.get(method)!;
    if (subscriptions === undefined && streamable) return handler(checked, context);
    return handler(checked, { ...context, ...(subscriptions === undefined ? {} : { subscriptions }), ...(streamable ? {} : { boundedAnswer: true }) });
  }

  /**
   * Answers one request object; undefined for a notification. Only a request that came `alone`
   * (not in a batch) may be answered in parts, and only a `streamable` one (alone, on a transport
   * that writes parts as they come) past the response limit.
   */
  function handleMessage(message: unknown, alone: boolean, subscriptions: SubscriptionScope | undefined, streamable = false): MaybePromise<Answer | undefined> {
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      return errorResponse(null, invalidRequestError("expected a JSON object"));
    }
    const request = message as Record<string, unknown>;
    const isNotification = !("id" in request);
    if (!isNotification && !isValidId(request.id)) {
      return errorResponse(null, invalidRequestError('"id" must be a string, a number or null'));
    }
    const id = isNotification ? null : (request.id as RequestId);
    if (!isExactId(id)) {
      return errorResponse(null, invalidRequestError('a numeric "id" beyond 2^53 cannot be echoed exactly: use a string id'));
    }
    if (request.jsonrpc !== "2.0") return errorResponse(id, invalidRequestError('"jsonrpc" must be exactly "2.0"'));
    if (typeof request.method !== "string") return errorResponse(id, invalidRequestError('"method" must be a string'));
    if (request.method.length > maxMethodNameLength) {
      return errorResponse(id, invalidRequestError(`method name longer than ${maxMethodNameLength} characters`));
    }
    const params = request.params ?? undefined;
    if (params !== undefined && typeof params !== "object") {
      return errorResponse(id, invalidRequestError('"params" must be an array'));
    }
    const method = request.method;
    const started = debugEnabled || observeCall !== undefined ? performance.now() : 0;

    const succeed = (result: unknown): Answer | undefined => {
      if (isNotification) return logged(undefined, undefined);
      let response: Answer;
      try {
        response = successResponse(id, result, alone, streamable);
      } catch (error) {
        return fail(error); // a result that cannot be encoded (a BigInt, a cycle)
      }
      const tooLong = response instanceof PartedAnswer ? !response.unbounded && response.byteLength > responseLimitBytes : longerThan(response, responseLimitBytes);
      if (tooLong) return fail(responseTooLargeError(responseLimitBytes));
      return logged(response, undefined);
    };
    const fail = (error: unknown): string | undefined => {
      const rpcError = toRpcError(error, method);
      return logged(isNotification ? undefined : errorResponse(id, rpcError), rpcError.code);
    };
    const logged = <T extends Answer | undefined>(response: T, errorCode: number | undefined): T => {
      if (observeCall !== undefined) observeCall(rpcMethodTable.has(method) || method === discoverMethod ? method : "other", (performance.now() - started) / 1000, errorCode);
      if (debugEnabled) {
        log.debug({ method: method.slice(0, 64), id, ms: +(performance.now() - started).toFixed(3), errorCode }, "rpc call");
      }
      return response;
    };

    let outcome: unknown;
    try {
      if (params !== undefined && !Array.isArray(params)) {
        throw invalidParamsError("named parameters are not supported: send params as an array");
      }
      outcome = call(method, (params as unknown[] | undefined) ?? noParams, subscriptions, streamable);
    } catch (error) {
      return fail(error);
    }
    return isPromise(outcome) ? outcome.then(succeed, fail) : succeed(outcome);
  }

  /**
   * Runs a batch in order; once the answer passes the size limit, or the batch its time limit,
   * the rest do not run.
   */
  async function handleBatch(messages: unknown[], subscriptions: SubscriptionScope | undefined): Promise<string | undefined> {
    let finishPreparation: (() => void) | undefined;
    try {
      finishPreparation = options.prepareBatch?.(preparableRequests(messages));
    } catch (error) {
      // Only a head start is lost: the requests run as they would without it.
      log.error({ err: error }, "preparing a batch failed");
    }
    try {
      return await runBatch(messages, subscriptions);
    } finally {
      finishPreparation?.();
    }
  }

  /** The batch's requests prepareBatch is told of: objects with a method of an enabled module and params in an array. */
  function preparableRequests(messages: unknown[]): BatchRequest[] {
    const requests: BatchRequest[] = [];
    for (const message of messages) {
      if (message === null || typeof message !== "object") continue;
      const { method, params } = message as Record<string, unknown>;
      if (typeof method !== "string" || (params !== undefined && !Array.isArray(params))) continue;
      const entry = rpcMethodTable.get(method);
      if (entry === undefined || !enabledModules.has(entry.namespace)) continue;
      requests.push({ method, params: (params as unknown[] | undefined) ?? noParams });
    }
    return requests;
  }

  async function runBatch(messages: unknown[], subscriptions: SubscriptionScope | undefined): Promise<string | undefined> {
    const responses: string[] = [];
    let size = 2; // the brackets
    let overLimit = false;
    const deadline = batchTimeLimitMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + batchTimeLimitMs;
    for (const item of messages) {
      if (overLimit) {
        const id = answerableId(item);
        if (id !== undefined) responses.push(errorResponse(id, responseTooLargeError(responseLimitBytes)));
        continue;
      }
      if (performance.now() > deadline) {
        const id = answerableId(item);
        if (id !== undefined) responses.push(errorResponse(id, executionTimeoutError));
        continue;
      }
      const answer = await handleMessage(item, false, subscriptions);
      if (answer === undefined) continue;
      // Not alone: never in parts (see handleMessage).
      const response = answer instanceof PartedAnswer ? answer.text() : answer;
      size += Buffer.byteLength(response) + 1;
      if (size > responseLimitBytes) {
        overLimit = true;
        responses.push(errorResponse(answerableId(item) ?? null, responseTooLargeError(responseLimitBytes)));
      } else {
        responses.push(response);
      }
    }
    return responses.length > 0 ? `[${responses.join(",")}]` : undefined;
  }

  function toRpcError(error: unknown, method: string): RpcError {
    if (error instanceof RpcError) return error;
    if (error instanceof StoredDataDamagedError) {
      log.error({ method, reason: error.message }, "a read met damaged data in the store");
      return storedDataDamagedError(error);
    }
    log.error({ err: error, method }, "method handler failed");
    return internalError;
  }

  return {
    handle(body: string, subscriptions?: SubscriptionScope, boundedAnswers = false): MaybePromise<Answer | undefined> {
      // Before JSON.parse, whose time grows with nesting and members, not only with bytes (jsonShape.ts).
      const excess = jsonShapeExcess(body, jsonShapeLimits);
      if (excess === "depth") return errorResponse(null, invalidRequestError(`JSON nested deeper than ${jsonShapeLimits.maxDepth} levels`));
      if (excess === "values") return errorResponse(null, invalidRequestError(`more than ${jsonShapeLimits.maxValues} array elements and object members`));
      let message: unknown;
      try {
        message = JSON.parse(body);
      } catch (error) {
        const reason = error instanceof SyntaxError ? error.message : "invalid JSON";
        return errorResponse(null, new RpcError(RpcErrorCode.ParseError, `parse error: ${reason}`));
      }
      if (!Array.isArray(message)) return handleMessage(message, true, subscriptions, !boundedAnswers);
      if (message.length === 0) return errorResponse(null, invalidRequestError("empty batch"));
      if (message.length > batchLimit) {
        // One error, in an array, under the first request's id: batch clients can match it.
        const first = message[0] as Record<string, unknown> | null;
        const firstId = first !== null && typeof first === "object" && isValidId(first.id) ? first.id : null;
        const error = invalidRequestError(`batch of ${message.length} requests exceeds the limit of ${batchLimit}`);
        return `[${errorResponse(firstId, error)}]`;
      }
      return handleBatch(message, subscriptions);
    },
  };
}
