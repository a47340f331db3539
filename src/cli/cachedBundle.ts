// A CommonJS bundle of the build (make build) compiled through V8's code cache, so that a start
// does not parse and compile it (issue 39): the command's (cli/launch.ts), the call worker's
// thread's (cli/callWorkerLaunch.ts), and the peer-to-peer network's, which the command's bundle
// requires only with --p2p (through the `require` it is given: see CachedBundleOptions.bundles).
// An ES module cannot take a code cache on Node 20 (node:module's compile cache comes with Node
// 22), a vm.Script can.
//   - The cache is made at the end of a run (the process's or the thread's exit), so it holds the
//     functions the run compiled, not only what V8 compiles eagerly (the top level and the
//     functions it calls at once): those compiled lazily, one at a time as they were first called,
//     were a good part of a start. make build writes the caches by starts of the command
//     (cli/codeCacheWarmUp.ts).
//   - A run that finds no cache, or one made for another build of the bundle, writes one at its
//     exit, through a file renamed into place so a parallel start never reads half of it. The cache
//     file starts with the bundle's size and modification time when the cache was made: V8 itself
//     checks only the source's length, and would take a cache of another bundle of the same length
//     (its functions' bytecode for other text). V8 refuses a cache made by another V8 or under
//     other flags: the source is then compiled as before, and nothing is written.
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { threadId } from "node:worker_threads";
import { recordCodeCacheUse, type CachedBundleName, type CodeCacheUse } from "../common/codeCache.js";

/** The cache file's header: the bundle's size and modification time (ms), two doubles. */
const headerBytes = 16;

export interface CachedBundle {
  /** How the cache served this run: none found, one of another build, taken by V8, refused by V8. */
  readonly cache: CodeCacheUse;
  /** Runs the bundle's top level (once); answers its exports. */
  run(): unknown;
}

export interface CachedBundleOptions {
  /**
   * Called just before the cache is made at exit, to set V8's flags as they are when the bundle is
   * compiled (cli/heapGrowth.ts): V8 refuses a cache made under other flags.
   */
  beforeWrite?: () => void;
  /**
   * Bundles that the bundle's require() of a specifier (as the bundle writes it) loads through their
   * own cache, each compiled and run once, with these options (a name of their own for the logs):
   * file and options by specifier.
   */
  bundles?: Readonly<Record<string, { readonly file: string; readonly options?: CachedBundleOptions }>>;
  /** The name its cache use is recorded under for the logs (common/codeCache.ts); default "main". */
  name?: CachedBundleName;
}

function bundleStamp(bundleFile: string): Buffer {
  const { size, mtimeMs } = statSync(bundleFile);
  const stamp = Buffer.alloc(headerBytes);
  stamp.writeDoubleLE(size, 0);
  stamp.writeDoubleLE(mtimeMs, 8);
  return stamp;
}

/** The cache made for this bundle, without its header; "stale" when made for another build. */
function readCache(cacheFile: string, stamp: Buffer): Buffer | "stale" | undefined {
  let file: Buffer;
  try {
    file = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  if (file.length <= headerBytes || !file.subarray(0, headerBytes).equals(stamp)) return "stale";
  return file.subarray(headerBytes);
}

function writeCache(script: Script, cacheFile: string, stamp: Buffer, options: CachedBundleOptions): void {
  const temporary = `${cacheFile}.${process.pid}.${threadId}.tmp`;
  try {
    options.beforeWrite?.();
    writeFileSync(temporary, Buffer.concat([stamp, script.createCachedData()]));
    renameSync(temporary, cacheFile);
  } catch {
    // A read-only install: runs compile as before.
  }
}

/**
 * Compiles `bundleFile` (CommonJS, ASCII only: make build checks it) with its cache
 * (`<bundleFile>.cache`). Its top level sees CommonJS's parameters and `__importMetaUrl`, the
 * bundle's file URL (make build has import.meta.url in the sources become it).
 */
export function compileCachedBundle(bundleFile: string, options: CachedBundleOptions = {}): CachedBundle {
  const cacheFile = `${bundleFile}.cache`;
  const stamp = bundleStamp(bundleFile);
  const cached = readCache(cacheFile, stamp);
  const cachedData = cached instanceof Buffer ? cached : undefined;
  // A shebang on the first line is commented out, so lines keep their numbers. ASCII read as
  // latin1 is the same text without UTF-8 decoding: 0.6 ms for 2.4 MB instead of about 6.
  const body = readFileSync(bundleFile, "latin1").replace(/^#!/, "//");
  // Strict like the ES modules it is made of.
  const script = new Script(`(function (exports, require, module, __filename, __dirname, __importMetaUrl) {"use strict";${body}\n})`, {
    filename: bundleFile,
    cachedData,
  });
  const cache: CodeCacheUse = cached === undefined ? "none" : cached === "stale" ? "stale" : script.cachedDataRejected === true ? "rejected" : "accepted";
  recordCodeCacheUse(cache, options.name);
  if (cache === "none" || cache === "stale") process.once("exit", () => writeCache(script, cacheFile, stamp, options));
  return {
    cache,
    run() {
      const run = script.runInThisContext() as (...args: unknown[]) => void;
      const module = { exports: {} as unknown };
      run(module.exports, requireFor(bundleFile, options.bundles), module, bundleFile, dirname(bundleFile), pathToFileURL(bundleFile).href);
      return module.exports;
    },
  };
}

/** The bundle's require: node's, from the bundle's folder, but for the specifiers of `bundles`. */
function requireFor(bundleFile: string, bundles: CachedBundleOptions["bundles"]): NodeJS.Require {
  const base = createRequire(bundleFile);
  if (bundles === undefined) return base;
  const loaded = new Map<string, unknown>();
  const cachedRequire = (specifier: string): unknown => {
    const bundle = bundles[specifier];
    if (bundle === undefined) return base(specifier);
    if (!loaded.has(specifier)) loaded.set(specifier, compileCachedBundle(bundle.file, bundle.options).run());
    return loaded.get(specifier);
  };
  // require.resolve, require.cache and the rest as node's.
  return Object.assign(cachedRequire, base);
}
