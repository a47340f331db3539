// make build: bundles the CLI (cli/main.ts and every pure-JavaScript dependency) into the one
// CommonJS file the command (cli/launch.ts) compiles, through esbuild's API rather than its command
// line for the one thing the command line cannot do: rewrite a dependency's start-up code as it is
// read. Each rewrite names the text it replaces and fails the build when that text is not there,
// or when its package is in the bundle and its file is not (a new version of the package), so it
// never silently stops applying.
//   node dist/src/cli/bundleCli.js <entry> <outfile> [<external> ...]
import { readFile } from "node:fs/promises";
import { build, type Plugin } from "esbuild";

interface Rewrite {
  /** The package, as named under node_modules: a bundle that holds any of its files must hold `file`. */
  readonly package: string;
  /** The file, by its path's end under node_modules. */
  readonly file: string;
  readonly why: string;
  readonly replacements: readonly (readonly [from: string, to: string])[];
}

const rewrites: readonly Rewrite[] = [
  {
    // @ethereumjs/util 10.1.3 makes the BigInts 0 to 65,535 when it loads, for bytesToBigInt of one
    // and two bytes: 65,536 allocations (some 7 ms, and the garbage collections they bring) at
    // every start. Here each is made on first use and kept: the same values (BigInts are
    // primitives, compared by value).
    package: "@ethereumjs/util",
    file: "/@ethereumjs/util/dist/esm/bytes.js",
    why: "the BigInt cache of bytesToBigInt, filled on first use instead of at start",
    replacements: [
      // The loop's lines stay, empty, so the source map's lines after it hold.
      ["for (let i = 0; i <= 256 * 256 - 1; i++) {\n    BIGINT_CACHE[i] = BigInt(i);\n}\n", "\n\n\n"],
      ["return BIGINT_CACHE[bytes[0]];", "return (BIGINT_CACHE[bytes[0]] ??= BigInt(bytes[0]));"],
      ["return BIGINT_CACHE[bytes[0] * 256 + bytes[1]];", "return (BIGINT_CACHE[bytes[0] * 256 + bytes[1]] ??= BigInt(bytes[0] * 256 + bytes[1]));"],
    ],
  },
  // sonic-boom and thread-stream (pino's) load node:assert when they load, for one check each:
  // five of node's built-in modules at every start (node:assert, its error class and helpers, and
  // the terminal colours that class reads through process.stderr), none needed by then. Here
  // node:assert loads when a check first runs, and checks the same way.
  ...["sonic-boom", "thread-stream"].map((name) => ({
    package: name,
    file: `/${name}/index.js`,
    why: "node:assert loaded when a check first runs instead of at start",
    replacements: [["const assert = require('assert')\n", "const assert = (...checked) => require('assert')(...checked)\n"]] as const,
  })),
];

const rewriting: Plugin = {
  name: "start-up rewrites",
  setup(bundle) {
    const applied = new Set<Rewrite>();
    const bundled = new Set<Rewrite>();
    bundle.onLoad({ filter: /node_modules[\\/].*\.js$/ }, async ({ path }) => {
      const slashed = path.replaceAll("\\", "/");
      for (const rewrite of rewrites) if (slashed.includes(`/node_modules/${rewrite.package}/`)) bundled.add(rewrite);
      const rewrite = rewrites.find(({ file }) => slashed.endsWith(file));
      if (rewrite === undefined) return undefined;
      let source = await readFile(path, "utf8");
      for (const [from, to] of rewrite.replacements) {
        if (source.split(from).length !== 2) throw new Error(`${path}: the text to rewrite (${rewrite.why}) is not there once: ${JSON.stringify(from)}`);
        source = source.replace(from, () => to);
      }
      applied.add(rewrite);
      return { contents: source, loader: "js" };
    });
    bundle.onEnd((result) => {
      if (result.errors.length > 0) return;
      // A package in the bundle whose file to rewrite was not: it moved (a new version of the package).
      const missing = rewrites.filter((rewrite) => bundled.has(rewrite) && !applied.has(rewrite));
      if (missing.length > 0) throw new Error(`bundled, but their files to rewrite were not: ${missing.map(({ file }) => file).join(", ")}`);
    });
  },
};

const [entry, outfile, ...external] = process.argv.slice(2);
if (entry === undefined || outfile === undefined) {
  process.stderr.write("usage: bundleCli <entry> <outfile> [<external> ...]\n");
  process.exit(2);
}
// The options of the Makefile's ESBUILD_COMMON, and the CLI's own (its comments say why).
await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: "node",
  target: "node20",
  logLevel: "warning",
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: true,
  external,
  format: "cjs",
  define: { "import.meta.url": "__importMetaUrl" },
  supported: { "dynamic-import": false },
  plugins: [rewriting],
});
