// The command with --metrics-port: the bundle loads prom-client from outside itself only then, and
// the endpoint its log line names answers.
import { expect } from "chai";
import { startNodeProcess } from "../helpers/nodeProcess.js";

describe("e2e: the metrics endpoint of the command", function () {
  this.timeout(30_000);

  it("logs the endpoint's URL and serves the metrics there", async () => {
    const node = await startNodeProcess(["--port", "0", "--in-memory", "--metrics-port", "0"]);
    try {
      const logged = node.lines.map((line) => JSON.parse(line) as { msg?: string; url?: string }).find((record) => record.msg === "metrics endpoint listening");
      expect(logged?.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const response = await fetch(logged!.url!);
      expect(response.status).to.equal(200);
      expect(await response.text()).to.match(/\nchain_node_head_number 0\n/);
    } finally {
      await node.stop();
    }
  });
});
