// cli/cachedBundle.ts, as the command's and the call worker's launchers use it: each run is a
// process of its own (the cache is written at its exit), on a small CommonJS bundle in a temporary
// directory. A run with no cache, with one of another build of the bundle, or with one V8 refuses
// still runs the bundle as it is; only the first two write a cache, which the next run takes.
import { expect } from "chai";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

const cachedBundleModule = fileURLToPath(new URL("../../../src/cli/cachedBundle.js", import.meta.url));
const codeCacheModule = fileURLToPath(new URL("../../../src/common/codeCache.js", import.meta.url));

/** A bundle whose functions say `word`: the same length whatever the (four-letter) word. */
function bundleSaying(word: string): string {
  if (word.length !== 4) throw new Error("four letters, so that every bundle has the same length");
  return `#!/usr/bin/env node\nfunction say() { return ${JSON.stringify(word)}; }\nfunction twice() { return say() + say(); }\nmodule.exports.said = twice() + " " + typeof __importMetaUrl;\nglobalThis.said = module.exports.said;\n`;
}

/** Runs the bundle through compileCachedBundle in a process of its own: what it said and how the cache served it. */
async function runBundle(bundleFile: string): Promise<{ said: string; cache: string }> {
  const script = `import { compileCachedBundle } from ${JSON.stringify(cachedBundleModule)};
const bundle = compileCachedBundle(${JSON.stringify(bundleFile)});
bundle.run();
process.stdout.write(JSON.stringify({ said: globalThis.said, cache: bundle.cache }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { timeout: 20_000 });
  return JSON.parse(stdout) as { said: string; cache: string };
}

/**
 * Runs `bundleFile`, whose require("./network.js") is `otherFile` through a cache of its own (as the
 * command's launcher loads the peer-to-peer bundle): what it said, and how each cache served.
 */
async function runBundles(bundleFile: string, otherFile: string): Promise<{ said: string; cache: string; logged: { main?: string; p2p?: string } }> {
  const script = `import { compileCachedBundle } from ${JSON.stringify(cachedBundleModule)};
import { codeCacheUse } from ${JSON.stringify(codeCacheModule)};
const bundle = compileCachedBundle(${JSON.stringify(bundleFile)}, { bundles: { "./network.js": { file: ${JSON.stringify(otherFile)}, options: { name: "p2p" } } } });
const exported = bundle.run();
process.stdout.write(JSON.stringify({ said: exported.said, cache: bundle.cache, logged: { main: codeCacheUse(), p2p: codeCacheUse("p2p") } }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { timeout: 20_000 });
  return JSON.parse(stdout) as { said: string; cache: string; logged: { main?: string; p2p?: string } };
}

describe("cli/cachedBundle: a bundle compiled through V8's code cache", function () {
  this.timeout(60_000);
  let directory: string;
  let bundleFile: string;
  let cacheFile: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "chain-node-cached-bundle-"));
    bundleFile = join(directory, "bundle.main.cjs");
    cacheFile = `${bundleFile}.cache`;
    writeFileSync(bundleFile, bundleSaying("blue"));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it("writes a cache at the end of a run that found none, and the next run takes it", async () => {
    expect(await runBundle(bundleFile)).to.deep.equal({ said: "blueblue string", cache: "none" });
    expect(statSync(cacheFile).size, "the cache file").to.be.greaterThan(16);
    expect(await runBundle(bundleFile)).to.deep.equal({ said: "blueblue string", cache: "accepted" });
  });

  it("runs a new build of the bundle as it is, not from the cache of the old one, and replaces that cache", async () => {
    await runBundle(bundleFile);
    const old = readFileSync(cacheFile);
    // The same length: V8 itself checks only the source's length, and would take the old cache.
    writeFileSync(bundleFile, bundleSaying("gold"));
    const later = new Date(statSync(bundleFile).mtimeMs + 5_000);
    utimesSync(bundleFile, later, later);
    expect(await runBundle(bundleFile)).to.deep.equal({ said: "goldgold string", cache: "stale" });
    expect(readFileSync(cacheFile).equals(old), "the cache was replaced").to.equal(false);
    expect(await runBundle(bundleFile)).to.deep.equal({ said: "goldgold string", cache: "accepted" });
  });

  it("runs the bundle when V8 refuses the cache (another V8, other flags), and leaves that cache as it is", async () => {
    await runBundle(bundleFile);
    const refused = readFileSync(cacheFile);
    // The header (the bundle's size and time) still matches; V8's own data is garbage.
    refused.fill(0x5a, 16);
    writeFileSync(cacheFile, refused);
    expect(await runBundle(bundleFile)).to.deep.equal({ said: "blueblue string", cache: "rejected" });
    expect(readFileSync(cacheFile).equals(refused), "not rewritten").to.equal(true);
  });

  it("loads a bundle the bundle requires through that bundle's own cache, once, its use recorded under its own name; other requires are node's", async () => {
    const mainFile = join(directory, "cli.main.cjs");
    writeFileSync(mainFile, `const first = require("./network.js");\nconst again = require("./network.js");\nmodule.exports.said = first.said + (first === again ? " once " : " twice ") + require("node:path").sep;\n`);
    const otherFile = join(directory, "network.js");
    writeFileSync(otherFile, `globalThis.loads = (globalThis.loads ?? 0) + 1;\nfunction say() { return "gold"; }\nmodule.exports.said = say() + say() + globalThis.loads + " " + typeof __importMetaUrl;\n`);
    expect(await runBundles(mainFile, otherFile)).to.deep.equal({ said: "goldgold1 string once /", cache: "none", logged: { main: "none", p2p: "none" } });
    expect(statSync(`${otherFile}.cache`).size, "the required bundle's cache").to.be.greaterThan(16);
    expect(await runBundles(mainFile, otherFile)).to.deep.equal({ said: "goldgold1 string once /", cache: "accepted", logged: { main: "accepted", p2p: "accepted" } });
  });

  it("runs the bundle when the cache file is cut short", async () => {
    await runBundle(bundleFile);
    writeFileSync(cacheFile, readFileSync(cacheFile).subarray(0, 10));
    expect(await runBundle(bundleFile)).to.deep.equal({ said: "blueblue string", cache: "stale" });
    expect(await runBundle(bundleFile)).to.deep.equal({ said: "blueblue string", cache: "accepted" });
  });
});
