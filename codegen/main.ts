// Entry of `make gen`: reads openrpc.json, checks it, and writes generated/ and the README's
// method table. With --check it writes nothing and fails when any output is stale.
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DocumentError, loadDocument } from "./document.js";
import { emitClient } from "./emitClient.js";
import { emitMethodTable, emitMethodTypes } from "./emitMethods.js";
import { updateReadme } from "./emitReadme.js";
import { emitTypes } from "./emitTypes.js";
import { emitParamValidators, emitResultValidators } from "./emitValidators.js";
import { generatedBanner } from "./naming.js";

// The project root: --root DIR, else the folder two levels above dist/codegen/main.js.
const rootFlag = process.argv.indexOf("--root");
const projectRoot = rootFlag >= 0 ? resolve(process.argv[rootFlag + 1] ?? ".") : resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch {
    return undefined;
  }
}

async function buildOutputs(): Promise<Map<string, string>> {
  const document = await loadDocument(join(projectRoot, "openrpc.json"));
  const validators = emitParamValidators(document);
  const resultValidators = emitResultValidators(document);
  const outputs = new Map<string, string>([
    ["generated/types.ts", await emitTypes(document)],
    ["generated/methods.ts", emitMethodTypes(document)],
    ["generated/validators.js", validators.js],
    ["generated/validators.d.ts", validators.dts],
    ["generated/resultValidators.js", resultValidators.js],
    ["generated/resultValidators.d.ts", resultValidators.dts],
    ["generated/methodTable.ts", emitMethodTable(document, validators.paramValidatorNames)],
    ["generated/client.ts", emitClient(document)],
    [
      "generated/discover.ts",
      `${generatedBanner}\n/** openrpc.json, minified: the result of rpc.discover. */\nexport const openRpcDocumentJson = ${JSON.stringify(JSON.stringify(document.raw))};\n`,
    ],
  ]);
  const readme = await readFile(join(projectRoot, "README.md"), "utf8");
  outputs.set("README.md", updateReadme(readme, document));
  return outputs;
}

async function main(): Promise<number> {
  const checkOnly = process.argv.includes("--check");
  const outputs = await buildOutputs();
  const stale: string[] = [];
  for (const [path, content] of outputs) {
    const absolute = join(projectRoot, path);
    if ((await readIfExists(absolute)) === content) continue;
    stale.push(path);
    if (!checkOnly) {
      await mkdir(dirname(absolute), { recursive: true });
      await writeFile(absolute, content);
    }
  }
  // A file in generated/ that codegen does not write is left over from an older layout.
  const written = new Set([...outputs.keys()].filter((path) => path.startsWith("generated/")).map((path) => path.slice("generated/".length)));
  const strays = (await readdir(join(projectRoot, "generated")).catch(() => [])).filter((file) => !written.has(file));
  for (const stray of strays) {
    stale.push(`generated/${stray} (not written by codegen)`);
    if (!checkOnly) await rm(join(projectRoot, "generated", stray), { recursive: true });
  }
  if (checkOnly && stale.length > 0) {
    console.error(`generated output is stale (run \`make gen\` and commit): ${stale.join(", ")}`);
    return 1;
  }
  const verb = checkOnly ? "up to date" : stale.length > 0 ? `wrote ${stale.length} file(s)` : "nothing to change";
  console.log(`codegen: ${verb} (${relative(process.cwd(), projectRoot) || "."})`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof DocumentError ? error.message : error);
    process.exit(2);
  },
);
