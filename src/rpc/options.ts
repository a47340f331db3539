// Options of the RPC server.

export interface RpcOptions {
  /** Address to bind; loopback unless the operator says otherwise. */
  host: string;
  port: number;
  /** --rpc-modules as given; undefined means the default set (see resolveEnabledModules). */
  modules: string | undefined;
  /** Origins allowed to call from a browser; "*" allows any. Empty: none. */
  corsOrigins: string[];
  /** Host header names answered besides IP literals (DNS rebinding defence); "*" allows any. */
  allowedHosts: string[];
  /** Whether personal_unlockAccount works on a non-loopback bind (on loopback it always does). */
  allowInsecureUnlock: boolean;
  /** Largest request body in bytes. */
  bodyLimitBytes: number;
  /** Most requests in one batch. */
  batchLimit: number;
  /** Largest answer in bytes, a whole batch included. */
  responseLimitBytes: number;
  /**
   * Largest struct-log trace answered alone over HTTP (written in parts as the client reads, not
   * held to responseLimitBytes): the memory one trace answer may take.
   */
  traceAnswerLimitBytes: number;
  /** Deepest nesting of arrays and objects in a request body. */
  jsonDepthLimit: number;
  /** Most array elements and object members in a request body, all levels together. */
  jsonValueLimit: number;
  /** Most storage keys one eth_getProof may ask for. */
  proofKeysLimit: number;
  /** Most accounts one state override set (eth_call) may name. */
  overrideAccountsLimit: number;
  /** Most storage slots one state override set may write, over all its accounts. */
  overrideSlotsLimit: number;
  /** Most WebSocket connections open at once. */
  wsMaxConnections: number;
  /** Most eth_subscribe subscriptions one WebSocket connection may hold. */
  wsMaxSubscriptions: number;
  /** Most bytes waiting to be sent to one WebSocket client; past it the connection is closed. */
  wsSendBufferLimitBytes: number;
}

export const defaultRpcOptions: RpcOptions = {
  host: "127.0.0.1",
  port: 4444,
  modules: undefined,
  corsOrigins: [],
  allowedHosts: ["localhost"],
  allowInsecureUnlock: false,
  bodyLimitBytes: 5 * 1024 * 1024,
  batchLimit: 100,
  responseLimitBytes: 10 * 1024 * 1024,
  // A trace is held whole while it is written (a failure found late can still be answered as an
  // error): 1 GiB, which a development machine has to spare; geth and Anvil set no bound.
  traceAnswerLimitBytes: 1024 * 1024 * 1024,
  // The reliability note's suggestion (64-128): requests nest 6 levels at most (a batch of
  // eth_call with state overrides); geth's decoder stops at 10,000, which JSON.parse would take
  // seconds to reach.
  jsonDepthLimit: 128,
  // JSON.parse takes up to ~1.7 µs a member with a new key name: 20,000 keep it near 35 ms. The
  // largest request the other limits allow (an override of 10,000 slots) needs some 12,000.
  jsonValueLimit: 20_000,
  // geth, Erigon, Nethermind and Besu cap eth_getStorageValues at 1,024 slots a call; a proof is
  // that read and its trie path.
  proofKeysLimit: 1_024,
  overrideAccountsLimit: 1_000,
  overrideSlotsLimit: 10_000,
  // Each connection costs a socket and its buffers. geth sets no cap; Besu allows 80 WebSocket
  // connections (shared/reference/reliability.md): a development node serves more test clients.
  wsMaxConnections: 1_000,
  // Each subscription is matched against every block; Besu's uncapped ones were an advisory.
  wsMaxSubscriptions: 1_000,
  // A client that stops reading holds at most this much of the node's memory (reliability note,
  // rows 81: bounded, then close).
  wsSendBufferLimitBytes: 16 * 1024 * 1024,
};

/**
 * The limits handlers apply to the work one request asks for (eth_getProof, state overrides, and
 * the JSON shape of typed data sent as a string, which the body's check could not see into).
 */
export type RequestWorkLimits = Pick<RpcOptions, "proofKeysLimit" | "overrideAccountsLimit" | "overrideSlotsLimit" | "jsonDepthLimit" | "jsonValueLimit">;
