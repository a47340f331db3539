// Issue 39: a node answers its first request without loading the EVM's packages (they build
// elliptic curves as they load), and loads them with the first call. In a child process whose
// module loads are recorded (test/helpers/moduleLoads.ts), unbundled: a static import of them
// anywhere on the way to the first answer shows here.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const helpers = new URL("../../helpers/", import.meta.url);

describe("node start: the EVM on first use", function () {
  this.timeout(60_000);

  it("answers eth_blockNumber without loading @ethereumjs/evm or @ethereumjs/vm, and loads them for eth_call", async () => {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ["--import", fileURLToPath(new URL("moduleLoads.js", helpers)), fileURLToPath(new URL("lazyEngineProbe.js", helpers))],
        { timeout: 50_000, killSignal: "SIGKILL" },
        (error, out, err) => (error === null ? resolve(out) : reject(new Error(`probe failed: ${error.message}; stderr: ${err}`))),
      ),
    );
    const report = JSON.parse(stdout.trim().split("\n").at(-1)!) as { blockNumber: string; afterFirstAnswer: string[]; callResult: string; afterCall: string[] };
    expect(report.blockNumber).to.equal("0x0");
    expect(report.afterFirstAnswer).to.deep.equal([]);
    // The identity precompile (0x04) answers its input: the call ran on the EVM.
    expect(report.callResult).to.equal("0x1234");
    expect(report.afterCall.some((url) => url.includes("/@ethereumjs/evm/"))).to.equal(true);
    expect(report.afterCall.some((url) => url.includes("/@ethereumjs/vm/"))).to.equal(true);
  });
});
