// All handlers, one factory per module; each gets only the dependencies it uses.
import type { RpcHandlerSet } from "../dispatch.js";
import { createDebugHandlers, type DebugDependencies } from "./debug.js";
import { createEthHandlers, type EthDependencies } from "./eth.js";
import { createEvmHandlers, type EvmDependencies } from "./evm.js";
import { createExtHandlers, type ExtDependencies } from "./ext.js";
import { createNetHandlers, type NetDependencies } from "./net.js";
import { createPersonalHandlers, type PersonalDependencies } from "./personal.js";
import { createTraceHandlers, type TraceDependencies } from "./trace.js";
import { createTxpoolHandlers, type TxpoolDependencies } from "./txpool.js";
import { createWeb3Handlers, type Web3Dependencies } from "./web3.js";

export type HandlerDependencies = Web3Dependencies &
  NetDependencies &
  EthDependencies &
  ExtDependencies &
  TxpoolDependencies &
  EvmDependencies &
  PersonalDependencies &
  DebugDependencies &
  TraceDependencies;

export function createHandlers(deps: HandlerDependencies): RpcHandlerSet {
  return {
    ...createWeb3Handlers(deps),
    ...createNetHandlers(deps),
    ...createEthHandlers(deps),
    ...createExtHandlers(deps),
    ...createTxpoolHandlers(deps),
    ...createEvmHandlers(deps),
    ...createPersonalHandlers(deps),
    ...createDebugHandlers(deps),
    ...createTraceHandlers(deps),
  };
}
