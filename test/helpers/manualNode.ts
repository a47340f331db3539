// A node without automatic mining whose test mines blocks itself, with the transactions it chooses,
// through the node's own miner (not over evm_mine: a test picks which pool transactions go in).
import { RpcClient } from "../../generated/client.js";
import type { Block } from "../../src/chain/block.js";
import type { ChainServices } from "../../src/node/index.js";
import { startServerWithHandlers } from "./testNode.js";

export interface ManualNode {
  readonly url: string;
  readonly client: RpcClient;
  readonly services: ChainServices;
  /** Mines one block with every pending (executable) pool transaction; answers once it is on disk. */
  mine(): Promise<Block>;
  stop(): Promise<void>;
}

export async function startManualNode(): Promise<ManualNode> {
  const server = await startServerWithHandlers({}, { chain: { mining: { kind: "off" } } });
  const { services } = server;
  return {
    url: server.url,
    client: new RpcClient(server.url, { timeoutMs: 10_000 }),
    services,
    mine: () => services.miner.mineBlock(services.pool.pending()),
    stop: () => server.stop(),
  };
}
