// The README's worked pool example (docs/examples/minimal-pool.mjs), run as its own process against
// the command started with --miner external: each block it submits becomes the head.
import { expect } from "chai";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { postJson } from "../helpers/http.js";
import { startNodeProcess } from "../helpers/nodeProcess.js";

const examplePath = fileURLToPath(new URL("../../../docs/examples/minimal-pool.mjs", import.meta.url));

describe("e2e: the minimal pool example against --miner external", function () {
  this.timeout(60_000);

  it("mines three blocks, each the new head", async () => {
    const node = await startNodeProcess(["--port", "0", "--in-memory", "--miner", "external"]);
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [examplePath, node.url, "3"], { timeout: 30_000 });
      const lines = stdout.trim().split("\n");
      expect(lines).to.have.length(3);
      lines.forEach((line, index) => expect(line).to.match(new RegExp(`^block ${index + 1} 0x[0-9a-f]{64}: IMPORTED_BEST after \\d+ header hashes$`)));
      const head = ((await postJson(node.url, { jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["latest", false] })).json as { result: { number: string; hash: string } }).result;
      expect(head.number).to.equal("0x3");
      expect(lines[2]).to.include(head.hash);
    } finally {
      await node.stop();
    }
  });
});
