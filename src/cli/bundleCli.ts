// make build: bundles the CLI (cli/main.ts and every pure-JavaScript dependency) into the one
// CommonJS file the command (cli/launch.ts) compiles, through esbuild's API rather than its command
// line for the one thing the command line cannot do: rewrite a dependency's start-up code as it is
// read. Each rewrite names the text it replaces and fails the build when that text is not there (a
// new version of the package), so it never silently stops applying.
//   node dist/src/cli/bundleCli.js <entry> <outfile> [<external> ...]
import { readFile } from "node:fs/promises";
import { build, type Plugin } from "esbuild";

interface Rewrite {
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
    file: "/@ethereumjs/util/dist/esm/bytes.js",
    why: "the BigInt cache of bytesToBigInt, filled on first use instead of at start",
    replacements: [
      // The loop's lines stay, empty, so the source map's lines after it hold.
      ["for (let i = 0; i <= 256 * 256 - 1; i++) {\n    BIGINT_CACHE[i] = BigInt(i);\n}\n", "\n\n\n"],
      ["return BIGINT_CACHE[bytes[0]];", "return (BIGINT_CACHE[bytes[0]] ??= BigInt(bytes[0]));"],
      ["return BIGINT_CACHE[bytes[0] * 256 + bytes[1]];", "return (BIGINT_CACHE[bytes[0] * 256 + bytes[1]] ??= BigInt(bytes[0] * 256 + bytes[1]));"],
    ],
  },
];

const rewriting: Plugin = {
  name: "start-up rewrites",
  setup(bundle) {
    const applied = new Set<Rewrite>();
    bundle.onLoad({ filter: /node_modules[\\/].*\.js$/ }, async ({ path }) => {
      const rewrite = rewrites.find(({ file }) => path.replaceAll("\\", "/").endsWith(file));
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
      const missing = rewrites.filter((rewrite) => !applied.has(rewrite));
      if (missing.length > 0) throw new Error(`not in the bundle, so not rewritten: ${missing.map(({ file }) => file).join(", ")}`);
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
