// Module hooks for test/helpers/moduleLoads.ts: each module's URL, as it loads, to the main thread.
import type { InitializeHook, LoadHook } from "node:module";
import type { MessagePort } from "node:worker_threads";

let port: MessagePort | undefined;

export const initialize: InitializeHook<{ port: MessagePort }> = (data) => {
  port = data.port;
};

export const load: LoadHook = (url, context, nextLoad) => {
  port?.postMessage(url);
  return nextLoad(url, context);
};
