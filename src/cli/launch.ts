#!/usr/bin/env -S node --v8-pool-size=0
// The chain-node command as built (make build): loads the bundled CLI (cli/main.ts and every
// pure-JavaScript dependency, one CommonJS file beside this one) through V8's code cache, so a start
// does not parse and compile 2.5 MB of JavaScript (issue 39). An ES module cannot take a code cache
// on Node 20 (node:module's compile cache comes with Node 22), a vm.Script can.
//   - The cache is made at the end of a run (the process's exit), so it holds the functions a start
//     ran, not only what V8 compiles eagerly (the top level and the functions it calls at once):
//     those compiled lazily, one at a time as the start first called them, were a good part of a
//     start. Measured, 13 alternating fresh starts on this 2-core machine: CPU to listening 201 ms
//     with a cache made before running (1.06 MB), 168 ms with one made after a start (1.65 MB).
//     make build writes it by one start to a first answer and a stop (cli/codeCacheWarmUp.ts).
//   - A start that finds none writes one at its exit, through a file renamed into place so a
//     parallel start never reads half of it. V8 refuses a cache made by another V8 or under other
//     flags: the source is then compiled as before, and nothing is written. The CLI sets one flag as
//     it runs (cli/heapGrowth.ts), put back before the cache is made.
// The first line gives node its runtime flags: the same as cli/main.ts's first line, which says
// which and why (make build writes the cache through it, so the cache is made under those flags).
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { restoreDefaultHeapGrowth } from "./heapGrowth.js";

const bundleFile = fileURLToPath(new URL("./chain-node.main.cjs", import.meta.url));
const cacheFile = `${bundleFile}.cache`;

function readCache(): Buffer | undefined {
  try {
    return readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

function writeCache(script: Script): void {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  try {
    restoreDefaultHeapGrowth();
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, cacheFile);
  } catch {
    // A read-only install: starts compile as before.
  }
}

const cachedData = readCache();
// The bundle's own first line is a shebang: commented out, so lines keep their numbers. esbuild
// writes ASCII only (non-ASCII characters escaped; make build checks it), which read as latin1 is
// the same text without UTF-8 decoding: 0.6 ms for the 2.4 MB instead of about 6.
const body = readFileSync(bundleFile, "latin1").replace(/^#!/, "//");
// Strict like the ES module it replaces. import.meta.url in the sources is this parameter (make build).
const script = new Script(`(function (exports, require, module, __filename, __dirname, __importMetaUrl) {"use strict";${body}\n})`, {
  filename: bundleFile,
  cachedData,
});
if (cachedData === undefined) process.once("exit", () => writeCache(script));
const run = script.runInThisContext() as (...args: unknown[]) => void;
const module = { exports: {} };
run(module.exports, createRequire(bundleFile), module, bundleFile, dirname(bundleFile), pathToFileURL(bundleFile).href);
