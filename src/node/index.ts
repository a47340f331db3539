// node: the composition root. Only cli/ and tests import it.
export { NodeConfigurationError, startNode, type RunningNode } from "./node.js";
export { defaultNodeOptions, type NodeOptions, type StorageOptions } from "./options.js";
export { findNetworkProfile, networkProfiles, type NetworkProfile } from "../chain/networks.js";
