// Everything a node is built from; the CLI maps flags onto it, tests build it directly.
import { defaultNetworkId } from "../chain/networks.js";
import type { LogLevel } from "../common/logger.js";
import { defaultRpcOptions, type RpcOptions } from "../rpc/options.js";

export interface StorageOptions {
  /** Where the chain is kept; undefined means ./.chain-node/<network name>. */
  dataDir: string | undefined;
  /** Keep the chain in memory only (throwaway chains, tests). */
  inMemory: boolean;
}

export interface NodeOptions {
  /** Network id of the spec: 30, 31, 32 or 33. */
  networkId: number;
  rpc: RpcOptions;
  storage: StorageOptions;
  logLevel: LogLevel;
}

export const defaultNodeOptions: NodeOptions = {
  networkId: defaultNetworkId,
  rpc: defaultRpcOptions,
  storage: { dataDir: undefined, inMemory: false },
  logLevel: "info",
};
