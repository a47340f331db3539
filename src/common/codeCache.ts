// How V8's code cache served the bundles this thread runs (cli/cachedBundle.ts), for the logs: the
// launcher and the bundles it compiles are built apart, so the launcher leaves it under a global
// symbol, by bundle: "main" for the thread's own (the command's, or the call worker's), "p2p" for
// the peer-to-peer network's. Undefined when the code was not loaded through a cache launcher (the
// unbundled build), or the bundle not loaded.
export type CodeCacheUse = "none" | "stale" | "accepted" | "rejected";
export type CachedBundleName = "main" | "p2p";

const key = Symbol.for("chain-node.codeCacheUse");

const global = globalThis as Record<symbol, Partial<Record<CachedBundleName, CodeCacheUse>> | undefined>;

export function recordCodeCacheUse(use: CodeCacheUse, bundle: CachedBundleName = "main"): void {
  (global[key] ??= {})[bundle] = use;
}

export function codeCacheUse(bundle: CachedBundleName = "main"): CodeCacheUse | undefined {
  return global[key]?.[bundle];
}
