// All handlers, one factory per module; each gets only the dependencies it uses. One transaction-
// sending path, over the node's transaction intake, serves eth_ and personal_, and the batch
// preparation the dispatcher calls.
import type { BatchPreparation, RpcHandlerSet } from "../dispatch.js";
import { createDebugHandlers, type DebugDependencies } from "./debug.js";
import { createAnvilHandlers, createHardhatHandlers, type DevHelperDependencies } from "./devHelpers.js";
import { createEthHandlers, type EthDependencies } from "./eth.js";
import { createEvmHandlers, type EvmDependencies } from "./evm.js";
import { createExtHandlers, type ExtDependencies } from "./ext.js";
import { createMnrHandlers, type MnrDependencies } from "./mnr.js";
import { createNetHandlers, type NetDependencies } from "./net.js";
import { createPersonalHandlers, type PersonalDependencies } from "./personal.js";
import { createTraceHandlers, type TraceDependencies } from "./trace.js";
import { createTransactionSending, type TransactionSendingDependencies } from "./transactionSending.js";
import type { TransactionIntake } from "../../txpool/transactionIntake.js";
import { createTxpoolHandlers, type TxpoolDependencies } from "./txpool.js";
import { createWeb3Handlers, type Web3Dependencies } from "./web3.js";

export type HandlerDependencies = Web3Dependencies &
  NetDependencies &
  Omit<EthDependencies, "sending"> &
  ExtDependencies &
  MnrDependencies &
  TxpoolDependencies &
  EvmDependencies &
  DevHelperDependencies &
  Omit<PersonalDependencies, "sending"> &
  DebugDependencies &
  TraceDependencies &
  TransactionSendingDependencies & {
    /** The node's way in to the pool (ChainServices.intake), shared with transactions from elsewhere. */
    intake: TransactionIntake;
  };

export interface RpcMethods {
  readonly handlers: RpcHandlerSet;
  /** For the dispatcher (DispatcherOptions.prepareBatch): starts the recovery of a batch's later raw sends. */
  readonly prepareBatch: BatchPreparation;
}

export function createRpcMethods(deps: HandlerDependencies): RpcMethods {
  const sending = createTransactionSending(deps, deps.intake);
  const withSending = { ...deps, sending };
  return {
    handlers: {
      ...createWeb3Handlers(deps),
      ...createNetHandlers(deps),
      ...createEthHandlers(withSending),
      ...createExtHandlers(deps),
      ...createMnrHandlers(deps),
      ...createTxpoolHandlers(deps),
      ...createEvmHandlers(deps),
      ...createAnvilHandlers(deps),
      ...createHardhatHandlers(deps),
      ...createPersonalHandlers(withSending),
      ...createDebugHandlers(deps),
      ...createTraceHandlers(deps),
    },
    prepareBatch(requests) {
      const rawSends: string[] = [];
      for (const { method, params } of requests) {
        if (method === "eth_sendRawTransaction" && typeof params[0] === "string") rawSends.push(params[0]);
      }
      // The first runs at once: handing its recovery over would only make it wait.
      return rawSends.length < 2 ? undefined : sending.recoverAhead(rawSends.slice(1));
    },
  };
}
