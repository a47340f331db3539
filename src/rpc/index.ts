// rpc: the JSON-RPC 2.0 interface. Owns transport, dispatch, error codes and the mapping of
// methods onto domain modules; does not own chain, state or keys, and never touches storage.
export { createDispatcher, EncodedJson, type CallObserver, type Dispatcher, type RpcCallContext, type RpcHandlerSet } from "./dispatch.js";
export { RpcError, RpcErrorCode } from "./errors.js";
export { createRpcMethods, type HandlerDependencies } from "./methods/index.js";
export { isLoopbackHost, loopbackOnlyModules, ModuleSelectionError, resolveEnabledModules } from "./modules.js";
export { defaultRpcOptions, type RpcOptions } from "./options.js";
export { createRpcServer, type RpcServer } from "./server.js";
export { SubscriptionHub, type SubscriptionHubOptions } from "./subscriptions.js";
