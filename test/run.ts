// Runs every compiled test file with mocha and ends with the line CI reads: "N passed, N failed".
// Usage: node dist/test/run.js [folder under test/ ...]
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Mocha from "mocha";

const testRoot = dirname(fileURLToPath(import.meta.url));

function testFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".test.js"))
    .map((file) => join(folder, file))
    .sort();
}

const folders = process.argv.slice(2);
const files = (folders.length > 0 ? folders.map((folder) => join(testRoot, folder)) : [testRoot]).flatMap(testFiles);

const mocha = new Mocha({ reporter: "spec", timeout: 30_000, checkLeaks: true });
for (const file of files) mocha.addFile(file);
await mocha.loadFilesAsync();
mocha.run().on("end", function (this: Mocha.Runner) {
  const { passes = 0, failures = 0, pending = 0 } = this.stats ?? {};
  if (pending > 0) console.log(`${pending} pending`);
  console.log(`${passes} passed, ${failures} failed`);
  // Servers are stopped by the suites; exit anyway so a leaked handle cannot hang CI.
  process.exit(failures > 0 || files.length === 0 ? 1 : 0);
});
