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
};
