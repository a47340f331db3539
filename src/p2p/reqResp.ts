// Request/response over libp2p streams (design brief 1.3 and 4), knowing nothing of the chain: a
// protocol is a name and its limits; sync/ says what a request means and serves it. One stream per
// request: the asking side writes one length-prefixed frame, the serving side answers one frame
//   [result byte][payload]   result 0 ok (payload: the answer), 1 invalid request, 2 server error,
//                            3 unavailable (payload: a short UTF-8 reason)
// then both close. Every frame is bounded by the protocol's size limits (a longer announced length
// fails before anything is buffered), every step by its time limit; a peer that breaks either gets
// an error naming it, never a hang.
import type { Connection, PeerId, Stream } from "@libp2p/interface";
import { lpStream } from "@libp2p/utils";
import { plainBytes } from "../common/plainBytes.js";
import type { Host } from "./libp2p.js";
import { maxStreamsPerProtocolPerPeer, type PeerRequestFailure, type RequestProtocol } from "./interface.js";

export const resultOk = 0;
export const resultInvalidRequest = 1;
export const resultServerError = 2;
export const resultUnavailable = 3;

/** The longest reason text sent back with a refusal. */
const maxReasonBytes = 256;
const maxOutboundStreamsPerProtocol = 32;

/** What a serving handler throws for a request it will not answer: the asking peer gets code 1 and the message. */
export class InvalidRequestError extends Error {}

/** What a serving handler throws for a request it cannot answer now (a peer not past the status handshake): code 3, no blame. */
export class RequestUnavailableError extends Error {}

/** What the asking side gets when a request fails: why, in the terms the sync scores peers by. */
export class PeerRequestError extends Error {
  constructor(
    readonly failure: PeerRequestFailure,
    message: string,
  ) {
    super(message);
  }
}

export function protocolIdOf(protocol: RequestProtocol, networkId: number): string {
  return `/chain-node/${networkId}/${protocol.name}/1`;
}

function frame(result: number, payload: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(1 + payload.length);
  bytes[0] = result;
  bytes.set(payload, 1);
  return bytes;
}

function reasonBytes(message: string): Uint8Array {
  const bytes = Buffer.from(message, "utf8");
  return bytes.length <= maxReasonBytes ? bytes : bytes.subarray(0, maxReasonBytes);
}

function isLengthError(error: unknown): boolean {
  const name = (error as Error).name;
  return name === "InvalidDataLengthError" || name === "InvalidDataLengthLengthError" || name === "InvalidMessageLengthError";
}

export interface ServeHooks {
  /** Before a request is read (debug_wireProtocolQueueSize counts requests taken and not yet answered). */
  started(): void;
  finished(): void;
  /** A request that did not arrive in time or in its size: the peer's fault. */
  badRequest(peerId: PeerId, protocol: RequestProtocol, reason: string): void;
}

/** Serves `protocol` on `host`: `serve` answers a request's bytes or throws InvalidRequestError. */
export async function handleRequests(host: Host, networkId: number, protocol: RequestProtocol, serve: (peerId: string, request: Uint8Array) => Promise<Uint8Array>, hooks: ServeHooks): Promise<void> {
  await host.handle(
    protocolIdOf(protocol, networkId),
    async (stream: Stream, connection: Connection) => {
      hooks.started();
      try {
        await answerOne(stream, connection, protocol, serve, hooks);
      } finally {
        hooks.finished();
      }
    },
    { maxInboundStreams: maxStreamsPerProtocolPerPeer, maxOutboundStreams: maxOutboundStreamsPerProtocol },
  );
}

async function answerOne(stream: Stream, connection: Connection, protocol: RequestProtocol, serve: (peerId: string, request: Uint8Array) => Promise<Uint8Array>, hooks: ServeHooks): Promise<void> {
  const frames = lpStream(stream, { maxDataLength: protocol.maxRequestBytes });
  const signal = AbortSignal.timeout(protocol.timeoutMs);
  let request: Uint8Array;
  try {
    request = plainBytes((await frames.read({ signal })).subarray());
  } catch (error) {
    hooks.badRequest(connection.remotePeer, protocol, isLengthError(error) ? `request over ${protocol.maxRequestBytes} bytes` : (error as Error).message);
    stream.abort(error as Error);
    return;
  }
  let answer: Uint8Array;
  try {
    const payload = await withinTime(serve(connection.remotePeer.toString(), request), signal);
    answer = payload.length <= protocol.maxResponseBytes ? frame(resultOk, payload) : frame(resultServerError, reasonBytes(`answer of ${payload.length} bytes over the ${protocol.maxResponseBytes}-byte limit`));
  } catch (error) {
    if (signal.aborted) {
      // The asking side has stopped waiting (the same time limit): nothing to answer.
      stream.abort(new Error(`${protocol.name}: no answer within ${protocol.timeoutMs} ms`));
      return;
    }
    if (error instanceof InvalidRequestError) {
      hooks.badRequest(connection.remotePeer, protocol, error.message);
      answer = frame(resultInvalidRequest, reasonBytes(error.message));
    } else if (error instanceof RequestUnavailableError) {
      answer = frame(resultUnavailable, reasonBytes(error.message));
    } else {
      answer = frame(resultServerError, reasonBytes("the node could not answer"));
    }
  }
  try {
    await frames.write(answer, { signal });
    await stream.close({ signal });
  } catch (error) {
    stream.abort(error as Error);
  }
}

/** `work`, or the signal's reason once it aborts first; the work itself runs on (a handler cannot be cancelled), its outcome unheard. */
function withinTime<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const aborted = () => reject(signal.reason as Error);
    signal.addEventListener("abort", aborted, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", aborted);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", aborted);
        reject(error as Error);
      },
    );
  });
}

/**
 * A new stream to `peerId` for `protocolId`: on its open connection when it has one (libp2p's
 * dialProtocol goes through the dial queue and the peer store each time, a cost per request that
 * showed in block propagation), else by dialling.
 */
export function openStream(host: Host, peerId: PeerId, protocolId: string, signal: AbortSignal): Promise<Stream> {
  const connection = host.getConnections(peerId).find((candidate) => candidate.status === "open");
  return connection !== undefined ? connection.newStream(protocolId, { signal }) : host.dialProtocol(peerId, protocolId, { signal });
}

/** Asks `peerId` one request of `protocol`; answers the payload, or throws PeerRequestError. */
export async function sendRequest(host: Host, networkId: number, peerId: PeerId, protocol: RequestProtocol, request: Uint8Array): Promise<Uint8Array> {
  if (request.length > protocol.maxRequestBytes) throw new RangeError(`a ${protocol.name} request of ${request.length} bytes is over its ${protocol.maxRequestBytes}-byte limit`);
  const signal = AbortSignal.timeout(protocol.timeoutMs);
  let stream: Stream;
  try {
    stream = await openStream(host, peerId, protocolIdOf(protocol, networkId), signal);
  } catch (error) {
    throw new PeerRequestError(signal.aborted ? "timeout" : "unavailable", `${protocol.name}: ${(error as Error).message}`);
  }
  try {
    // One byte more than the payload for the result byte.
    const frames = lpStream(stream, { maxDataLength: protocol.maxResponseBytes + 1 });
    await frames.write(request, { signal });
    let response: Uint8Array;
    try {
      response = plainBytes((await frames.read({ signal })).subarray());
    } catch (error) {
      if (isLengthError(error)) throw new PeerRequestError("badAnswer", `${protocol.name}: an answer over ${protocol.maxResponseBytes} bytes`);
      throw new PeerRequestError(signal.aborted ? "timeout" : "unavailable", `${protocol.name}: ${signal.aborted ? `no answer within ${protocol.timeoutMs} ms` : (error as Error).message}`);
    }
    await stream.close({ signal }).catch(() => undefined);
    if (response.length === 0) throw new PeerRequestError("badAnswer", `${protocol.name}: an empty answer`);
    const result = response[0]!;
    const payload = response.subarray(1);
    if (result === resultOk) return payload;
    const reason = Buffer.from(payload.subarray(0, maxReasonBytes)).toString("utf8");
    if (result === resultInvalidRequest) throw new PeerRequestError("refused", `${protocol.name}: the peer refused the request: ${reason}`);
    if (result === resultServerError || result === resultUnavailable) throw new PeerRequestError("unavailable", `${protocol.name}: the peer could not answer: ${reason}`);
    throw new PeerRequestError("badAnswer", `${protocol.name}: an answer with result byte ${result}`);
  } catch (error) {
    stream.abort(error as Error);
    throw error;
  }
}
