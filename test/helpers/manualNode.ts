// A node without automatic mining whose test mines blocks itself, with the transactions it chooses,
// through the node's own miner (not over evm_mine: a test picks which pool transactions go in).
import { RpcClient } from "../../generated/client.js";
import { rpcNamespaces } from "../../generated/methods.js";
import { openRpcDocumentJson } from "../../generated/discover.js";
import type { Block } from "../../src/chain/block.js";
import { createLogger } from "../../src/common/logger.js";
import { defaultNodeOptions, findNetworkProfile, openChainServices, type ChainServices } from "../../src/node/index.js";
import { createStandaloneNetwork } from "../../src/p2p/index.js";
import { createDispatcher, createHandlers, createRpcServer } from "../../src/rpc/index.js";
import { createLogCapture } from "./testNode.js";

export interface ManualNode {
  readonly url: string;
  readonly client: RpcClient;
  readonly services: ChainServices;
  /** Mines one block with every pending (executable) pool transaction; answers once it is on disk. */
  mine(): Promise<Block>;
  stop(): Promise<void>;
}

export async function startManualNode(): Promise<ManualNode> {
  const network = findNetworkProfile(33)!;
  const capture = createLogCapture();
  const log = createLogger("info", capture.stream);
  const services = await openChainServices(network, { dataDir: undefined, inMemory: true }, { ...defaultNodeOptions.chain, mining: { kind: "off" } }, log);
  const rpc = { ...defaultNodeOptions.rpc, port: 0 };
  const dispatcher = createDispatcher({
    handlers: createHandlers({ clientVersion: "test", network, peers: createStandaloneNetwork(), ...services }),
    enabledModules: new Set(rpcNamespaces),
    batchLimit: rpc.batchLimit,
    responseLimitBytes: rpc.responseLimitBytes,
    discoverDocumentJson: openRpcDocumentJson,
    log,
  });
  const server = createRpcServer(rpc, dispatcher, log);
  const address = await server.start();
  const url = `http://127.0.0.1:${address.port}`;
  return {
    url,
    client: new RpcClient(url, { timeoutMs: 10_000 }),
    services,
    mine: () => services.miner.mineBlock(services.pool.pending()),
    async stop() {
      await server.stop();
      await services.close();
    },
  };
}
