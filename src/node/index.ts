// node: the composition root. Only cli/ and tests import it.
export { NodeConfigurationError, startNode, type DevelopmentAccountState, type RunningNode } from "./node.js";
export { defaultCoinbase, defaultNodeOptions, type ChainOptions, type NodeOptions, type StorageOptions } from "./options.js";
export { defaultDataDirectory, openChainServices, type ChainServices } from "./chainServices.js";
export { verifyDataDirectory, type VerifyProgress, type VerifyReport } from "./verifyDataDirectory.js";
export { findNetworkProfile, networkProfiles, type NetworkProfile } from "../chain/networks.js";
export type { MiningMode } from "../mining/miner.js";
export { defaultP2pLimits, type P2pOptions } from "../p2p/index.js";
export { ChainTransferError, exportChain, importChain, type ExportProgress, type ExportReport, type ImportProgress, type ImportReport, type ImportStop } from "./chainTransfer.js";
