#!/usr/bin/env -S node --v8-pool-size=0
// The chain-node command as built (make build): loads the bundled CLI (cli/main.ts and every
// pure-JavaScript dependency, one CommonJS file beside this one) through V8's code cache
// (cli/cachedBundle.ts), so a start does not parse and compile 2.5 MB of JavaScript (issue 39).
// Measured, 13 alternating fresh starts on this 2-core machine: CPU to listening 201 ms with a
// cache made before running (1.06 MB), 168 ms with one made after a start (1.65 MB). The CLI sets
// one V8 flag as it runs (cli/heapGrowth.ts), put back before the cache is made.
// The first line gives node its runtime flags: the same as cli/main.ts's first line, which says
// which and why (make build writes the cache through it, so the cache is made under those flags).
// The peer-to-peer network's bundle (../p2p/network.js, which the CLI's requires only with --p2p)
// is compiled through a cache of its own: its 1 MB took 55-110 ms to compile at each start of a
// node with --p2p, and libp2p's functions more as the first connection ran them. The CLI requires
// it after setting its heap growth, so its cache is made with that flag set (make build writes it
// by a start of two nodes, one syncing from the other: cli/codeCacheWarmUp.ts).
import { fileURLToPath } from "node:url";
import { compileCachedBundle } from "./cachedBundle.js";
import { restoreDefaultHeapGrowth, setHeapGrowth } from "./heapGrowth.js";

/** The p2p bundle's path as the CLI's bundle requires it, relative to this folder. */
const p2pSpecifier = "../p2p/network.js";
const p2pBundle = { file: fileURLToPath(new URL(p2pSpecifier, import.meta.url)), options: { beforeWrite: setHeapGrowth, name: "p2p" as const } };
compileCachedBundle(fileURLToPath(new URL("./chain-node.main.cjs", import.meta.url)), { beforeWrite: restoreDefaultHeapGrowth, bundles: { [p2pSpecifier]: p2pBundle } }).run();
