import { expect } from "chai";
import { parseCommandLine, UsageError } from "../../../src/cli/args.js";

describe("cli/args: export and import", () => {
  it("export takes FILE, a range, --force, the data dir and the network; the defaults leave the range open", () => {
    const command = parseCommandLine(["export", "chain.blocks", "--from", "3", "--to", "9", "--force", "--data-dir", "/tmp/d", "--network", "31"]);
    expect(command).to.deep.include({ kind: "export", file: "chain.blocks", from: 3n, to: 9n, force: true, dataDir: "/tmp/d", genesisFile: undefined });
    expect(command.kind === "export" && command.network.networkId).to.equal(31);
    expect(parseCommandLine(["export", "x"])).to.deep.include({ kind: "export", from: undefined, to: undefined, force: false, dataDir: ".chain-node/regtest" });
    expect(parseCommandLine(["import", "x", "--genesis", "g.json"])).to.deep.include({ kind: "import", file: "x", genesisFile: "g.json", dataDir: ".chain-node/regtest", typedTransactions: false, verifyWithReferenceEngine: false });
    expect(parseCommandLine(["import", "x", "--typed-transactions", "--verify-imports-with-reference-engine"])).to.deep.include({ typedTransactions: true, verifyWithReferenceEngine: true });
  });

  it("refuses a missing or second FILE, a range upside down, numbers that are not block numbers and the other command's flags", () => {
    for (const [argv, message] of [
      [["export"], "takes one FILE, got none"],
      [["import", "a", "b"], 'takes one FILE, got "a" "b"'],
      [["export", "x", "--from", "2", "--to", "1"], "--from 2 is after --to 1"],
      [["export", "x", "--to", "1.5"], '--to takes a block number (a non-negative integer), got "1.5"'],
      [["import", "x", "--force"], "Unknown option '--force'"],
      [["import", "x", "--network", "9"], 'unknown --network "9"'],
      [["export", "x", "--data-dir", " "], "--data-dir must not be empty"],
    ] as const) {
      expect(() => parseCommandLine([...argv]), argv.join(" ")).to.throw(UsageError, message);
    }
    expect(parseCommandLine(["import", "--help"])).to.have.property("kind", "help");
  });
});
