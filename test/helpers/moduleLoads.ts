// Records the URL of every ES module the process loads from when this module is imported (give
// it to node with --import): a child process's probe reads `loadedModules` to see what a step
// loaded. The hooks run on node's loader thread and post each URL here.
import { register } from "node:module";
import { MessageChannel } from "node:worker_threads";

export const loadedModules: string[] = [];

const { port1, port2 } = new MessageChannel();
port1.on("message", (url: string) => loadedModules.push(url));
port1.unref();
register("./moduleLoadHooks.js", import.meta.url, { data: { port: port2 }, transferList: [port2] });

/** The modules loaded so far, once the loader thread's messages have arrived. */
export async function modulesLoadedSoFar(): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  return [...loadedModules];
}
