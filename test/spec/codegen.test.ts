// codegen --check: CI relies on it to fail when generated/ or the README table is stale.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const projectRoot = fileURLToPath(new URL("../../../", import.meta.url));
const codegen = join(projectRoot, "dist/codegen/main.js");

function check(root: string) {
  return spawnSync(process.execPath, [codegen, "--check", "--root", root], { encoding: "utf8", timeout: 60_000 });
}

describe("codegen --check", function () {
  this.timeout(120_000);
  let scratch: string;
  beforeEach(() => {
    scratch = mkdtempSync(join(tmpdir(), "chain-node-codegen-"));
    for (const entry of ["openrpc.json", "README.md", "generated"]) cpSync(join(projectRoot, entry), join(scratch, entry), { recursive: true });
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it("passes on the committed tree", () => {
    const result = check(scratch);
    expect(result.status, result.stderr).to.equal(0);
  });

  it("fails when openrpc.json changed but generated/ did not", () => {
    const path = join(scratch, "openrpc.json");
    writeFileSync(path, readFileSync(path, "utf8").replace('"Returns the client version."', '"Returns the version of the client."'));
    const result = check(scratch);
    expect(result.status).to.equal(1);
    expect(result.stderr).to.include("generated/discover.ts");
    expect(result.stderr).to.include("README.md");
  });

  it("fails on a stray file in generated/", () => {
    writeFileSync(join(scratch, "generated", "old.ts"), "export {};\n");
    const result = check(scratch);
    expect(result.status).to.equal(1);
    expect(result.stderr).to.include("generated/old.ts (not written by codegen)");
  });

  it("refuses a document that breaks the project's rules, naming each problem", () => {
    const path = join(scratch, "openrpc.json");
    const document = JSON.parse(readFileSync(path, "utf8"));
    document.components.errors.InvalidParams.code = -32500;
    delete document.components.schemas.SyncStatus.additionalProperties;
    document.methods[1].params[0].name = "Data bytes";
    writeFileSync(path, JSON.stringify(document));
    const result = check(scratch);
    expect(result.status).to.equal(2);
    expect(result.stderr).to.include("error InvalidParams: code -32500 lies in the range JSON-RPC reserves");
    expect(result.stderr).to.include("#/components/schemas/SyncStatus: an object schema with properties must state additionalProperties");
    expect(result.stderr).to.include('web3_sha3: parameter 0 name "Data bytes" is not a camelCase identifier');
  });
});
