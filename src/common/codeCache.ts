// How V8's code cache served the bundle this thread runs (cli/cachedBundle.ts), for the logs: the
// launcher and the bundle it compiles are built apart, so the launcher leaves it under a global
// symbol. Undefined when the code was not loaded through a cache launcher (the unbundled build).
export type CodeCacheUse = "none" | "stale" | "accepted" | "rejected";

const key = Symbol.for("chain-node.codeCacheUse");

export function recordCodeCacheUse(use: CodeCacheUse): void {
  (globalThis as Record<symbol, unknown>)[key] = use;
}

export function codeCacheUse(): CodeCacheUse | undefined {
  return (globalThis as Record<symbol, unknown>)[key] as CodeCacheUse | undefined;
}
