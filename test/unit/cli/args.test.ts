import { readFileSync } from "node:fs";
import { expect } from "chai";
import { flagTable, helpText, parseCommandLine, UsageError } from "../../../src/cli/args.js";
import { defaultNodeOptions } from "../../../src/node/index.js";

function runOptions(argv: string[]) {
  const command = parseCommandLine(argv);
  if (command.kind !== "run") throw new Error(`expected a run command, got ${command.kind}`);
  return command.options;
}

describe("cli/args", () => {
  it("defaults to the local network on 127.0.0.1:4444", () => {
    const options = runOptions([]);
    expect(options.networkId).to.equal(33);
    expect(options.rpc.host).to.equal("127.0.0.1");
    expect(options.rpc.port).to.equal(4444);
    expect(options.rpc.batchLimit).to.equal(100);
    expect(options.rpc.bodyLimitBytes).to.equal(5 * 1024 * 1024);
    expect(options.rpc.responseLimitBytes).to.equal(10 * 1024 * 1024);
    expect(options.rpc.corsOrigins).to.deep.equal([]);
    expect(options.rpc.allowedHosts).to.deep.equal(["localhost"]);
    expect(options.rpc).to.include({ wsMaxConnections: 1_000, wsMaxSubscriptions: 1_000, wsSendBufferLimitBytes: 16 * 1024 * 1024 });
    expect(options).to.deep.equal({ ...defaultNodeOptions, storage: { dataDir: undefined, inMemory: false } });
  });

  it("maps every flag onto the options", () => {
    const options = runOptions([
      "--host", "0.0.0.0", "--port", "8545", "--network", "31", "--data-dir", "/tmp/x", "--rpc-modules", "eth,net",
      "--cors", "http://a.test, http://b.test", "--vhosts", "chain.test,node.test", "--log-level", "debug", "--rpc-batch-limit", "7", "--rpc-body-limit", "2048",
      "--rpc-response-limit", "4096", "--trace-answer-limit", "8192", "--call-gas-cap", "1000000", "--call-timeout", "250", "--allow-insecure-unlock",
      "--ws-max-connections", "5", "--ws-max-subscriptions", "6", "--ws-send-buffer-limit", "65536",
    ]);
    expect(options.rpc).to.deep.equal({
      host: "0.0.0.0", port: 8545, modules: "eth,net", corsOrigins: ["http://a.test", "http://b.test"], allowedHosts: ["chain.test", "node.test"], batchLimit: 7, bodyLimitBytes: 2048, responseLimitBytes: 4096, traceAnswerLimitBytes: 8192,
      allowInsecureUnlock: true, jsonDepthLimit: 128, jsonValueLimit: 20_000, proofKeysLimit: 1_024, overrideAccountsLimit: 1_000, overrideSlotsLimit: 10_000,
      wsMaxConnections: 5, wsMaxSubscriptions: 6, wsSendBufferLimitBytes: 65_536,
    });
    expect(options.networkId).to.equal(31);
    expect(options.storage).to.deep.equal({ dataDir: "/tmp/x", inMemory: false });
    expect(options.logLevel).to.equal("debug");
    expect(options.chain.calls).to.deep.equal({ gasCap: 1_000_000n, timeLimitMs: 250 });
  });

  it("maps the request work limits onto the options, and refuses 0", () => {
    const options = runOptions([
      "--rpc-json-depth-limit", "16", "--rpc-json-value-limit", "500", "--proof-keys-limit", "8", "--override-accounts-limit", "3", "--override-slots-limit", "9", "--traces-at-once", "2",
    ]);
    expect(options.rpc).to.include({ jsonDepthLimit: 16, jsonValueLimit: 500, proofKeysLimit: 8, overrideAccountsLimit: 3, overrideSlotsLimit: 9 });
    expect(options.chain.tracesAtOnce).to.equal(2);
    expect(runOptions([]).chain.tracesAtOnce).to.equal(1);
    for (const flag of ["--trace-answer-limit", "--rpc-json-depth-limit", "--rpc-json-value-limit", "--proof-keys-limit", "--override-accounts-limit", "--override-slots-limit", "--traces-at-once", "--ws-max-connections", "--ws-max-subscriptions", "--ws-send-buffer-limit"]) {
      expect(() => parseCommandLine([flag, "0"]), flag).to.throw(UsageError, /positive integer/);
    }
  });

  it("maps the log and filter flags onto the chain options", () => {
    const options = runOptions(["--logs-block-range-limit", "10", "--logs-result-limit", "20", "--filter-timeout", "30"]);
    expect(options.chain.logs).to.deep.equal({ blockRangeLimit: 10, resultLimit: 20, filterTimeoutMs: 30_000 });
    expect(runOptions([]).chain.logs).to.deep.equal({ blockRangeLimit: 5000, resultLimit: 20_000, filterTimeoutMs: 300_000 });
  });

  it("maps --no-call-worker onto the chain options (default: the worker runs)", () => {
    expect(runOptions([]).chain.callWorker).to.equal(true);
    expect(runOptions(["--no-call-worker"]).chain.callWorker).to.equal(false);
  });

  it("maps --no-recovery-worker onto the chain options (default: the worker runs)", () => {
    expect(runOptions([]).chain.recoveryWorker).to.equal(true);
    expect(runOptions(["--no-recovery-worker"]).chain.recoveryWorker).to.equal(false);
  });

  it("maps --keystore-kdf onto the chain options (default light)", () => {
    expect(runOptions([]).chain.keyStoreKdf).to.equal("light");
    expect(runOptions(["--keystore-kdf", "standard"]).chain.keyStoreKdf).to.equal("standard");
    expect(runOptions(["--keystore-kdf", "light"]).chain.keyStoreKdf).to.equal("light");
  });

  it("maps --typed-transactions onto the chain options (default: legacy only)", () => {
    expect(runOptions([]).chain.typedTransactions).to.equal(false);
    expect(runOptions(["--typed-transactions"]).chain.typedTransactions).to.equal(true);
  });

  it("maps the merged-mining and metrics flags (defaults: the built-in miner, no limit, no endpoint)", () => {
    const defaults = runOptions([]);
    expect(defaults.chain.miner).to.equal("builtin");
    expect(defaults.chain.mergedMining).to.deep.equal({ updateWorkOnNewTransaction: false, submissionRateLimitMs: 0 });
    expect(defaults.metrics).to.equal(undefined);
    const external = runOptions(["--miner", "external", "--update-work-on-new-transaction", "--work-submission-rate-limit-ms", "250", "--metrics-port", "0", "--metrics-host", "127.0.0.5"]);
    expect(external.chain.miner).to.equal("external");
    expect(external.chain.mining).to.deep.equal({ kind: "off" });
    expect(external.chain.mergedMining).to.deep.equal({ updateWorkOnNewTransaction: true, submissionRateLimitMs: 250 });
    expect(external.metrics).to.deep.equal({ host: "127.0.0.5", port: 0 });
    expect(runOptions(["--metrics-port", "9100"]).metrics).to.deep.equal({ host: "127.0.0.1", port: 9100 });
  });

  it("accepts network names", () => {
    const cases: [string, number][] = [["mainnet", 30], ["main", 30], ["test", 31], ["dev", 32], ["regtest", 33], ["local", 33]];
    for (const [name, id] of cases) expect(runOptions(["--network", name]).networkId, name).to.equal(id);
  });

  it("answers help and version", () => {
    expect(parseCommandLine(["--help"]).kind).to.equal("help");
    expect(parseCommandLine(["--version"]).kind).to.equal("version");
    for (const flag of ["--host", "--port", "--network", "--data-dir", "--in-memory", "--rpc-modules", "--cors", "--log-level", "--help", "--version"]) {
      expect(helpText(), flag).to.include(flag);
    }
  });

  it("documents every flag in the README's flag table", () => {
    const readme = readFileSync(new URL("../../../../README.md", import.meta.url), "utf8");
    for (const { flag, value } of flagTable) {
      expect(readme, flag).to.include(`| \`${flag}${value === undefined ? "" : ` ${value}`}\` |`);
    }
  });

  it("refuses bad usage with a clear message", () => {
    const cases: [string[], RegExp][] = [
      [["--bogus"], /bogus/],
      [["--network", "99"], /unknown --network "99"/],
      [["--port", "abc"], /--port takes a non-negative integer/],
      [["--port", "70000"], /at most 65535/],
      [["--log-level", "loud"], /--log-level must be one of/],
      [["--log-format", "xml"], /--log-format must be one of json, pretty, got "xml"/],
      [["verify", "--port", "1"], /port/],
      [["verify", "--data-dir", ""], /--data-dir must not be empty/],
      [["--in-memory", "--data-dir", "x"], /exclude each other/],
      [["--data-dir", ""], /--data-dir must not be empty/],
      [["--rpc-batch-limit", "0"], /positive integer/],
      [["--filter-timeout", "0"], /--filter-timeout takes a positive integer/],
      [["--keystore-kdf", "heavy"], /--keystore-kdf must be light or standard, got "heavy"/],
      [["--logs-result-limit", "1e3"], /--logs-result-limit takes a positive integer/],
      [["stray"], /positional/i],
      [["--miner", "pool"], /--miner must be builtin or external, got "pool"/],
      [["--miner", "external", "--block-time", "1"], /--miner external excludes --block-time and --no-mining/],
      [["--miner", "external", "--no-mining"], /--miner external excludes --block-time and --no-mining/],
      [["--work-submission-rate-limit-ms", "1.5"], /--work-submission-rate-limit-ms takes a non-negative integer/],
      [["--metrics-port", "70000"], /--metrics-port must be at most 65535, got 70000/],
      [["--metrics-host", "127.0.0.1"], /--metrics-host needs --metrics-port/],
    ];
    for (const [argv, message] of cases) expect(() => parseCommandLine(argv), argv.join(" ")).to.throw(UsageError, message);
  });

  it("takes the log format, left to the terminal when not given, and the verify command with its data dir", () => {
    expect(parseCommandLine(["--log-format", "json"])).to.include({ kind: "run", logFormat: "json" });
    expect(parseCommandLine([])).to.include({ kind: "run", logFormat: undefined });
    expect(parseCommandLine(["verify", "--data-dir", "/some/dir"])).to.deep.equal({ kind: "verify", dataDir: "/some/dir" });
    expect(parseCommandLine(["verify", "--network", "31"])).to.deep.equal({ kind: "verify", dataDir: ".chain-node/testnet" });
    expect((parseCommandLine(["verify", "--help"]) as { text: string }).text).to.match(/^Usage: chain-node verify/);
  });

  describe("peer-to-peer flags", () => {
    const runOptions = (argv: string[]) => {
      const command = parseCommandLine(argv);
      if (command.kind !== "run") throw new Error("not a run command");
      return command.options;
    };
    const peerId = "16Uiu2HAmBzGyWsh8DgUnJxoGcDDsXWxNEUeiqLp9bz2AJmw2hGYW";

    it("is off by default: a lone node", () => {
      expect(runOptions([]).p2p).to.equal(undefined);
    });

    it("--p2p takes the network's port, loopback and the defaults; 0 picks a free port", () => {
      expect(runOptions(["--p2p"]).p2p).to.deep.equal({ host: "127.0.0.1", port: 50501, bootnodes: [], maxPeers: 30, minPeers: 1, nodeKey: undefined });
      expect(runOptions(["--p2p", "--network", "31"]).p2p!.port).to.equal(50505);
      expect(runOptions(["--p2p", "--network", "30"]).p2p!.port).to.equal(5050);
      expect(runOptions(["--p2p", "--network", "32"]).p2p!.port).to.equal(50505);
      expect(runOptions(["--p2p", "--p2p-port", "0", "--p2p-host", "0.0.0.0", "--max-peers", "5", "--min-peers", "2"]).p2p).to.include({ host: "0.0.0.0", port: 0, maxPeers: 5, minPeers: 2 });
    });

    it("--bootnodes implies --p2p and keeps each multiaddr; --p2p-key gives the key", () => {
      const bootnode = `/ip4/127.0.0.2/tcp/50501/p2p/${peerId}`;
      expect(runOptions(["--bootnodes", `${bootnode}, /ip4/127.0.0.3/tcp/1/p2p/${peerId}`]).p2p!.bootnodes).to.deep.equal([bootnode, `/ip4/127.0.0.3/tcp/1/p2p/${peerId}`]);
      const key = "07".repeat(32);
      expect(runOptions(["--p2p", "--p2p-key", key]).p2p!.nodeKey).to.deep.equal(new Uint8Array(32).fill(7));
      expect(runOptions(["--p2p", "--p2p-key", `0x${key}`]).p2p!.nodeKey).to.deep.equal(new Uint8Array(32).fill(7));
    });

    it("refuses bad peer-to-peer flags with a clear message", () => {
      const cases: [string[], RegExp][] = [
        [["--p2p-port", "1"], /--p2p-port needs --p2p \(or --bootnodes\)/],
        [["--max-peers", "3"], /--max-peers needs --p2p/],
        [["--p2p", "--p2p-port", "70000"], /--p2p-port must be at most 65535/],
        [["--p2p", "--p2p-port", "x"], /--p2p-port takes a non-negative integer/],
        [["--p2p", "--max-peers", "0"], /--max-peers takes a positive integer/],
        [["--p2p", "--max-peers", "2", "--min-peers", "3"], /--min-peers 3 is more than --max-peers 2/],
        [["--p2p", "--p2p-host", " "], /--p2p-host must not be empty/],
        [["--bootnodes", ","], /--bootnodes must name at least one multiaddr/],
        [["--bootnodes", "127.0.0.1:50501"], /--bootnodes takes multiaddrs ending with \/p2p\/<peer id>/],
        [["--bootnodes", "/ip4/127.0.0.1/tcp/50501"], /ending with \/p2p\/<peer id>/],
        [["--p2p", "--p2p-key", "abc"], /--p2p-key takes a 32-byte private key in hex/],
        [["--p2p", "--p2p-key", "00".repeat(32)], /not a valid secp256k1 private key/],
        [["--p2p", "--p2p-key", "ff".repeat(32)], /not a valid secp256k1 private key/],
      ];
      for (const [argv, message] of cases) expect(() => parseCommandLine(argv), argv.join(" ")).to.throw(UsageError, message);
    });
  });
});
