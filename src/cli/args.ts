// Command-line flags -> NodeOptions. The only place that reads argv.
import { parseArgs } from "node:util";
import { isLogLevel, logFormats, logLevels, type LogFormat } from "../common/logger.js";
import { defaultCoinbase, defaultDataDirectory, defaultNodeOptions, defaultP2pLimits, findNetworkProfile, networkProfiles, type MiningMode, type NetworkProfile, type NodeOptions, type P2pOptions } from "../node/index.js";

export class UsageError extends Error {}

export interface TransferCommandOptions {
  /** The file of blocks written (export) or read (import). */
  readonly file: string;
  readonly dataDir: string;
  readonly network: NetworkProfile;
  readonly genesisFile: string | undefined;
}

export type CliCommand =
  | { kind: "run"; options: NodeOptions; logFormat: LogFormat | undefined }
  | { kind: "verify"; dataDir: string }
  | ({ kind: "export"; from: bigint | undefined; to: bigint | undefined; force: boolean } & TransferCommandOptions)
  | ({ kind: "import"; typedTransactions: boolean; verifyWithReferenceEngine: boolean } & TransferCommandOptions)
  | { kind: "help"; text: string }
  | { kind: "version" };

interface FlagSpec {
  flag: string;
  value?: string;
  help: string;
}

/** The flag table: the source of --help; a test checks the README's flag table names each flag. */
export const flagTable: readonly FlagSpec[] = [
  { flag: "--host", value: "ADDRESS", help: `Address the JSON-RPC server binds to (default ${defaultNodeOptions.rpc.host}). On a non-loopback address the personal, evm, debug, trace, txpool and sco modules are off unless named in --rpc-modules, and no account is unlocked (see --allow-insecure-unlock).` },
  { flag: "--port", value: "PORT", help: `TCP port of the JSON-RPC server (default ${defaultNodeOptions.rpc.port}; 0 picks a free port).` },
  { flag: "--network", value: "ID", help: `Network profile: ${networkProfiles.map((profile) => `${profile.networkId} (${[profile.name, ...profile.aliases].join("/")})`).join(", ")}; default ${defaultNodeOptions.networkId}. Private networks with these ids; the node does not join the public networks.` },
  { flag: "--data-dir", value: "DIR", help: "Where the chain is stored, in an embedded LevelDB (default ./.chain-node/<network name>)." },
  { flag: "--in-memory", help: "Keep the chain in memory only (a throwaway chain); excludes --data-dir." },
  { flag: "--genesis", value: "FILE", help: "JSON file with a custom genesis: alloc (address -> balance, nonce, code, storage) and optional gasLimit, timestamp, difficulty, minimumGasPrice, extraData, coinbase." },
  { flag: "--block-time", value: "SECONDS", help: "Interval mining: pending transactions go into one block every SECONDS (default: automine, one block per transaction)." },
  { flag: "--no-mining", help: "Mine no blocks on its own (blocks come from the dev methods); excludes --block-time." },
  {
    flag: "--miner",
    value: "KIND",
    help: "Who proves the blocks: builtin (default; the node mines its own, by automine or --block-time) or external (only merged miners' submissions through mnr_submitParentBlock* or eth_submitWork make blocks; the dev methods that mine refuse); external excludes --block-time and --no-mining.",
  },
  { flag: "--update-work-on-new-transaction", help: "Give merged miners new work (mnr_getWork) whenever a transaction becomes pending, not only on a new best block and every 60 seconds." },
  { flag: "--work-submission-rate-limit-ms", value: "MS", help: "Refuse a merged-mining submission sooner than MS milliseconds after the previous one (default 0: no limit)." },
  { flag: "--metrics-port", value: "PORT", help: "Serve Prometheus metrics at http://HOST:PORT/metrics (head, peers, sync, pool, imported and invalid blocks, JSON-RPC latency per method); off by default; 0 picks a free port." },
  { flag: "--metrics-host", value: "ADDRESS", help: "Address the metrics endpoint binds to (default 127.0.0.1); needs --metrics-port." },
  { flag: "--coinbase", value: "ADDRESS", help: `Address paid the fees of the blocks this node mines (default 0x${defaultCoinbase}).` },
  { flag: "--rpc-modules", value: "LIST", help: "Comma-separated modules to enable (e.g. eth,net,web3); all = every module the bind allows without naming; entries with + or - change the default set instead (e.g. -debug,+sco)." },
  { flag: "--rpc-batch-limit", value: "N", help: `Most requests in one batch (default ${defaultNodeOptions.rpc.batchLimit}).` },
  { flag: "--rpc-body-limit", value: "BYTES", help: `Largest request body (default ${defaultNodeOptions.rpc.bodyLimitBytes}, 5 MiB).` },
  { flag: "--rpc-response-limit", value: "BYTES", help: `Largest answer, a whole batch included (default ${defaultNodeOptions.rpc.responseLimitBytes}, 10 MiB); calls past it answer -32011.` },
  {
    flag: "--trace-answer-limit",
    value: "BYTES",
    help: `Largest struct-log trace (debug_trace*) answered alone over HTTP, written as the client reads it and not held to --rpc-response-limit (default ${defaultNodeOptions.rpc.traceAnswerLimitBytes}, 1 GiB); past it -32011.`,
  },
  { flag: "--rpc-json-depth-limit", value: "N", help: `Deepest nesting of arrays and objects in a request body (default ${defaultNodeOptions.rpc.jsonDepthLimit}); deeper answers -32600 unparsed.` },
  { flag: "--rpc-json-value-limit", value: "N", help: `Most array elements and object members in a request body, all levels together (default ${defaultNodeOptions.rpc.jsonValueLimit}); more answers -32600 unparsed.` },
  { flag: "--ws-max-connections", value: "N", help: `Most WebSocket connections open at once (default ${defaultNodeOptions.rpc.wsMaxConnections}); more get HTTP 503.` },
  { flag: "--ws-max-subscriptions", value: "N", help: `Most eth_subscribe subscriptions one WebSocket connection may hold (default ${defaultNodeOptions.rpc.wsMaxSubscriptions}); more answer -32000.` },
  {
    flag: "--ws-send-buffer-limit",
    value: "BYTES",
    help: `Most bytes waiting to be sent to one WebSocket client (default ${defaultNodeOptions.rpc.wsSendBufferLimitBytes}, 16 MiB); a client that stops reading past it is disconnected, with a logged warning.`,
  },
  { flag: "--proof-keys-limit", value: "N", help: `Most storage keys one eth_getProof may ask for (default ${defaultNodeOptions.rpc.proofKeysLimit}, as geth's eth_getStorageValues); more answers -32602.` },
  { flag: "--override-accounts-limit", value: "N", help: `Most accounts an eth_call state override may name (default ${defaultNodeOptions.rpc.overrideAccountsLimit}); more answers -32602.` },
  { flag: "--override-slots-limit", value: "N", help: `Most storage slots an eth_call state override may set, all accounts together (default ${defaultNodeOptions.rpc.overrideSlotsLimit}); more answers -32602.` },
  { flag: "--call-gas-cap", value: "GAS", help: `Most gas an eth_call or eth_estimateGas may use (default ${defaultNodeOptions.chain.calls.gasCap}); an eth_call naming more is refused, one naming none gets this much; eth_estimateGas searches up to it.` },
  { flag: "--call-timeout", value: "MS", help: `Longest an eth_call, a whole eth_estimateGas, a trace request or a whole batch may run, in milliseconds (default ${defaultNodeOptions.chain.calls.timeLimitMs}).` },
  { flag: "--traces-at-once", value: "N", help: `Most trace requests (debug_trace*, trace_*) replaying at once (default ${defaultNodeOptions.chain.tracesAtOnce}); the others wait their turn within --call-timeout, then answer -32011.` },
  { flag: "--no-call-worker", help: "Run eth_call, eth_estimateGas and trace replays (debug_trace*, trace_*) on the main thread only (by default, on a chain on disk, those on stored blocks run on a second thread)." },
  { flag: "--verify-imports-with-reference-engine", help: "Execute every imported block a second time with the untuned @ethereumjs/vm (no fast paths) and refuse a block where the two disagree: a guard while the fast execution paths are young. Imports take about twice as long." },
  { flag: "--no-recovery-worker", help: "Recover the senders of received transactions, and check a long sync's senders and proofs of work, on the main thread only (by default, on a machine with two cores or more, sends that arrive together, or further down a batch, have their senders recovered on a second thread, and a long sync's checks run in batches on another)." },
  { flag: "--logs-block-range-limit", value: "N", help: `Most blocks one eth_getLogs or eth_getFilterLogs query may cover (default ${defaultNodeOptions.chain.logs.blockRangeLimit}); past it -32012.` },
  { flag: "--logs-result-limit", value: "N", help: `Most logs one eth_getLogs or eth_getFilterLogs query may answer (default ${defaultNodeOptions.chain.logs.resultLimit}); past it -32012.` },
  { flag: "--filter-timeout", value: "SECONDS", help: `A filter not polled with eth_getFilterChanges for SECONDS is removed (default ${defaultNodeOptions.chain.logs.filterTimeoutMs / 1000}).` },
  {
    flag: "--typed-transactions",
    help: "Also take EIP-2930 and EIP-1559 (type 1 and 2) transactions, so that tools' default sends work; blocks then show baseFeePerGas (their minimum gas price). Off by default: the reference network is legacy-only.",
  },
  { flag: "--keystore-kdf", value: "COST", help: `scrypt cost of the key files this node writes: light (n=2^14, about 0.1 s per unlock) or standard (geth's n=2^18, about 2 s); default ${defaultNodeOptions.chain.keyStoreKdf}. Files of any cost are read.` },
  { flag: "--p2p", help: "Join a peer-to-peer network (libp2p over TCP): peers exchange their status and must share the network, chain id and genesis block. Off by default: the node runs alone and does not listen for peers." },
  { flag: "--p2p-host", value: "ADDRESS", help: "Address the peer-to-peer listener binds to (default 127.0.0.1; 0.0.0.0 for other machines). On a loopback address the node also dials from it." },
  {
    flag: "--p2p-port",
    value: "PORT",
    help: `TCP port of the peer-to-peer listener (default the reference's port of the network: ${networkProfiles.map((profile) => `${profile.p2pPort} ${profile.name}`).join(", ")}; 0 picks a free port). The start log line "p2p listening" gives the multiaddrs other nodes dial.`,
  },
  { flag: "--bootnodes", value: "LIST", help: "Comma-separated multiaddrs of nodes to connect to, each ending with /p2p/<peer id> (e.g. /ip4/127.0.0.1/tcp/50501/p2p/16Uiu2HAm...); dialled until connected, and again after a disconnection. Implies --p2p." },
  { flag: "--max-peers", value: "N", help: `Most peers at once (default ${defaultP2pLimits.maxPeers}); further connections are refused.` },
  { flag: "--min-peers", value: "N", help: `Below this many peers the bootnodes are dialled again at each status round, every 10 seconds (default ${defaultP2pLimits.minPeers}).` },
  { flag: "--p2p-key", value: "HEX", help: "The node key, a 32-byte secp256k1 private key in hex: the peer id derives from it. Default: the key kept in the data directory, made at the first start with --p2p (a chain in memory gets a new one each start)." },
  { flag: "--cors", value: "ORIGINS", help: "Comma-separated origins allowed to call from a browser, or * for any (default: none)." },
  {
    flag: "--vhosts",
    value: "HOSTS",
    help: `Comma-separated host names the node answers in the Host header, or * for any (default: ${defaultNodeOptions.rpc.allowedHosts.join(",")}); IP addresses always pass; others get HTTP 403 (a defence against DNS rebinding).`,
  },
  {
    flag: "--allow-insecure-unlock",
    help: "On a non-loopback --host, hold keys unlocked as on loopback (the development accounts, new and imported accounts, personal_unlockAccount). Without it nothing is unlocked there and eth_sendTransaction and eth_sign refuse every account: an unlocked key would serve anyone who reaches the port. personal_dumpRawKey is refused on such a bind either way.",
  },
  { flag: "--log-level", value: "LEVEL", help: `One of ${logLevels.join(", ")} (default ${defaultNodeOptions.logLevel}); debug logs one line per JSON-RPC call.` },
  {
    flag: "--log-format",
    value: "FORMAT",
    help: "json (JSON lines, pino) or pretty (a greeting with the URLs and the development accounts, then readable lines); default pretty on a terminal, json otherwise.",
  },
  { flag: "--help", help: "Print this help and exit." },
  { flag: "--version", help: "Print the version and exit." },
];

function flagLines(flags: readonly FlagSpec[]): string {
  const lefts = flags.map(({ flag, value }) => `  ${flag}${value === undefined ? "" : ` ${value}`}`);
  const width = Math.max(...lefts.map((left) => left.length)) + 2;
  return flags.map(({ help }, index) => `${lefts[index]!.padEnd(width)}${help}`).join("\n");
}

/** The flags of `chain-node verify`. */
export const verifyFlagTable: readonly FlagSpec[] = [
  { flag: "--data-dir", value: "DIR", help: "The data directory to check (default ./.chain-node/<network name>); no node may be running on it." },
  { flag: "--network", value: "ID", help: `The network whose default data directory to check when --data-dir is not given (default ${defaultNodeOptions.networkId}).` },
  { flag: "--help", help: "Print this help and exit." },
];

/** The flags `chain-node export` and `chain-node import` share. */
const transferFlagTable: readonly FlagSpec[] = [
  { flag: "--data-dir", value: "DIR", help: "The data directory (default ./.chain-node/<network name>); no node may be running on it." },
  { flag: "--network", value: "ID", help: `The chain's network profile (default ${defaultNodeOptions.networkId}).` },
  { flag: "--genesis", value: "FILE", help: "The --genesis file the chain was started with, if it was." },
];

/** The flags of `chain-node export`. */
export const exportFlagTable: readonly FlagSpec[] = [
  { flag: "--from", value: "N", help: "First block written (default 1: every node has the genesis block)." },
  { flag: "--to", value: "M", help: "Last block written (default the head)." },
  { flag: "--force", help: "Replace FILE when it exists (without it an existing FILE is refused)." },
  ...transferFlagTable,
  { flag: "--help", help: "Print this help and exit." },
];

/** The flags of `chain-node import`. */
export const importFlagTable: readonly FlagSpec[] = [
  ...transferFlagTable,
  { flag: "--typed-transactions", help: "Take blocks holding EIP-2930 and EIP-1559 transactions (a chain made by a node started with --typed-transactions)." },
  { flag: "--verify-imports-with-reference-engine", help: "Execute every block a second time with the untuned @ethereumjs/vm and stop at a block where the two disagree (about twice as long)." },
  { flag: "--help", help: "Print this help and exit." },
];

export function helpText(): string {
  return (
    `Usage: chain-node [options]\n       chain-node verify [--data-dir DIR]\n       chain-node export FILE [--from N] [--to M] [--data-dir DIR]\n       chain-node import FILE [--data-dir DIR]\n\n` +
    `A blockchain node served over JSON-RPC 2.0.\n\nOptions:\n${flagLines(flagTable)}\n\n` +
    `Commands (each has its --help):\n  verify  Check a stopped node's data directory (LevelDB's files, every canonical block, the head's state) and list every problem; exit code 1 when there is any.\n` +
    `  export  Write the canonical blocks of a stopped node's data directory to FILE, as concatenated block RLP.\n` +
    `  import  Read the blocks of FILE into a data directory (a new one is created), proving and executing each; stops at the first invalid block.\n`
  );
}

export function exportHelpText(): string {
  return (
    `Usage: chain-node export FILE [options]\n\nWrites canonical blocks of a stopped node's data directory to FILE, one after another in the wire form, RLP([header, [transaction...], [uncle header...]]), ` +
    `as chain-node import reads them. The blocks go to a temporary file beside FILE, renamed to FILE once all are written and synced: an export cut short leaves no FILE. ` +
    `Progress on standard error.\n\nOptions:\n${flagLines(exportFlagTable)}\n`
  );
}

export function importHelpText(): string {
  return (
    `Usage: chain-node import FILE [options]\n\nReads the blocks of FILE (as chain-node export writes them) into a data directory that no node is running on, a new one if it does not exist. ` +
    `Each block is proven and executed as a block from a peer is; blocks already present are skipped, and a branch heavier than the data directory's own becomes canonical. ` +
    `Stops at the first malformed or invalid block, or one whose parent is unknown, naming it and its offset in FILE (exit code 1); the blocks before it stay imported. ` +
    `Progress on standard error (blocks, blocks/s, Mgas/s, time left), a summary on standard output.\n\nOptions:\n${flagLines(importFlagTable)}\n`
  );
}

export function verifyHelpText(): string {
  return `Usage: chain-node verify [options]\n\nChecks a stopped node's data directory: LevelDB's files (every table's checksums), the write-ahead log, every canonical block from the head to genesis and every node of the head's state. Lists every problem; exits 1 when there is any, 0 when there is none.\n\nOptions:\n${flagLines(verifyFlagTable)}\n`;
}

function networkFlag(value: string | undefined) {
  const network = value === undefined ? findNetworkProfile(defaultNodeOptions.networkId) : findNetworkProfile(value);
  if (network === undefined) {
    throw new UsageError(`unknown --network "${value}" (one of ${networkProfiles.map((profile) => `${profile.networkId}/${profile.name}`).join(", ")})`);
  }
  return network;
}

function parseVerifyCommand(argv: readonly string[]): CliCommand {
  let flags;
  try {
    flags = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: { "data-dir": { type: "string" }, network: { type: "string" }, help: { type: "boolean", short: "h" } } }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (flags.help) return { kind: "help", text: verifyHelpText() };
  if (flags["data-dir"]?.trim() === "") throw new UsageError("--data-dir must not be empty");
  return { kind: "verify", dataDir: flags["data-dir"] ?? defaultDataDirectory(networkFlag(flags.network)) };
}

function blockNumberFlag(flag: string, text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} takes a block number (a non-negative integer), got "${text}"`);
  return BigInt(text);
}

function parseTransferCommand(kind: "export" | "import", argv: readonly string[]): CliCommand {
  const exporting = kind === "export";
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        "data-dir": { type: "string" },
        network: { type: "string" },
        genesis: { type: "string" },
        help: { type: "boolean", short: "h" },
        ...(exporting
          ? { from: { type: "string" }, to: { type: "string" }, force: { type: "boolean" } }
          : { "typed-transactions": { type: "boolean" }, "verify-imports-with-reference-engine": { type: "boolean" } }),
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const flags = parsed.values as Record<string, string | boolean | undefined>;
  if (flags.help) return { kind: "help", text: exporting ? exportHelpText() : importHelpText() };
  if (parsed.positionals.length !== 1) throw new UsageError(`chain-node ${kind} takes one FILE, got ${parsed.positionals.length === 0 ? "none" : parsed.positionals.map((name) => `"${name}"`).join(" ")}`);
  const file = parsed.positionals[0]!;
  if (file.trim() === "") throw new UsageError("FILE must not be empty");
  const dataDirFlag = flags["data-dir"] as string | undefined;
  if (dataDirFlag?.trim() === "") throw new UsageError("--data-dir must not be empty");
  const network = networkFlag(flags.network as string | undefined);
  const common = { file, dataDir: dataDirFlag ?? defaultDataDirectory(network), network, genesisFile: flags.genesis as string | undefined };
  if (!exporting) {
    return { kind, ...common, typedTransactions: flags["typed-transactions"] === true, verifyWithReferenceEngine: flags["verify-imports-with-reference-engine"] === true };
  }
  const from = blockNumberFlag("--from", flags.from as string | undefined);
  const to = blockNumberFlag("--to", flags.to as string | undefined);
  if (from !== undefined && to !== undefined && from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
  return { kind, ...common, from, to, force: (flags.force as boolean | undefined) ?? false };
}

/** The entries of a comma-separated list, trimmed, without empty ones. */
function commaSeparated(text: string): string[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

function parsePositiveInteger(flag: string, text: string, { allowZero = false } = {}): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || (!allowZero && value === 0)) {
    throw new UsageError(`${flag} takes a ${allowZero ? "non-negative" : "positive"} integer, got "${text}"`);
  }
  return value;
}

/** A TCP port: 0 (a free one) to 65535. */
function parsePort(flag: string, text: string): number {
  const port = parsePositiveInteger(flag, text, { allowZero: true });
  if (port > 65535) throw new UsageError(`${flag} must be at most 65535, got ${port}`);
  return port;
}

/** A positive integer flag's value, or `fallback` when the flag is not given. */
function positiveIntegerFlag(flags: Record<string, string | boolean | undefined>, name: string, fallback: number): number {
  const text = flags[name] as string | undefined;
  return text === undefined ? fallback : parsePositiveInteger(`--${name}`, text);
}

function logOptionsFrom(flags: Record<string, string | boolean | undefined>, defaults: NodeOptions["chain"]["logs"]): NodeOptions["chain"]["logs"] {
  const flag = (name: string) => flags[name] as string | undefined;
  const blockRange = flag("logs-block-range-limit");
  const results = flag("logs-result-limit");
  const timeout = flag("filter-timeout");
  return {
    blockRangeLimit: blockRange === undefined ? defaults.blockRangeLimit : parsePositiveInteger("--logs-block-range-limit", blockRange),
    resultLimit: results === undefined ? defaults.resultLimit : parsePositiveInteger("--logs-result-limit", results),
    filterTimeoutMs: timeout === undefined ? defaults.filterTimeoutMs : parsePositiveInteger("--filter-timeout", timeout) * 1000,
  };
}

const p2pFlags = ["p2p-host", "p2p-port", "max-peers", "min-peers", "p2p-key"] as const;

/** The peer-to-peer options: undefined unless --p2p or --bootnodes; its other flags without one of those are refused (they would do nothing). */
function p2pOptionsFrom(flags: Record<string, string | boolean | undefined>, network: NetworkProfile): P2pOptions | undefined {
  const bootnodes = flags.bootnodes === undefined ? [] : commaSeparated(flags.bootnodes as string);
  if (flags.bootnodes !== undefined && bootnodes.length === 0) throw new UsageError("--bootnodes must name at least one multiaddr");
  for (const entry of bootnodes) {
    if (!entry.startsWith("/") || !/\/p2p\/[^/]+$/.test(entry)) throw new UsageError(`--bootnodes takes multiaddrs ending with /p2p/<peer id>, got "${entry}"`);
  }
  if (flags.p2p !== true && flags.bootnodes === undefined) {
    const stray = p2pFlags.find((name) => flags[name] !== undefined);
    if (stray !== undefined) throw new UsageError(`--${stray} needs --p2p (or --bootnodes)`);
    return undefined;
  }
  const host = (flags["p2p-host"] as string | undefined) ?? "127.0.0.1";
  if (host.trim() === "") throw new UsageError("--p2p-host must not be empty");
  const portText = flags["p2p-port"] as string | undefined;
  const port = portText === undefined ? network.p2pPort : parsePort("--p2p-port", portText);
  const maxPeers = positiveIntegerFlag(flags, "max-peers", defaultP2pLimits.maxPeers);
  const minPeersText = flags["min-peers"] as string | undefined;
  const minPeers = minPeersText === undefined ? Math.min(defaultP2pLimits.minPeers, maxPeers) : parsePositiveInteger("--min-peers", minPeersText, { allowZero: true });
  if (minPeers > maxPeers) throw new UsageError(`--min-peers ${minPeers} is more than --max-peers ${maxPeers}`);
  const keyText = flags["p2p-key"] as string | undefined;
  if (keyText !== undefined && !/^(0x)?[0-9a-fA-F]{64}$/.test(keyText)) throw new UsageError(`--p2p-key takes a 32-byte private key in hex (64 hex digits), got "${keyText}"`);
  const nodeKey = keyText === undefined ? undefined : new Uint8Array(Buffer.from(keyText.replace(/^0x/, ""), "hex"));
  if (nodeKey !== undefined && (nodeKey.every((byte) => byte === 0) || Buffer.from(nodeKey).toString("hex") >= "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")) {
    throw new UsageError("--p2p-key is not a valid secp256k1 private key (zero, or not below the group order)");
  }
  return { host, port, bootnodes, maxPeers, minPeers, nodeKey };
}

export function parseCommandLine(argv: readonly string[]): CliCommand {
  if (argv[0] === "verify") return parseVerifyCommand(argv.slice(1));
  if (argv[0] === "export" || argv[0] === "import") return parseTransferCommand(argv[0], argv.slice(1));
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        host: { type: "string" },
        port: { type: "string" },
        network: { type: "string" },
        "data-dir": { type: "string" },
        "in-memory": { type: "boolean" },
        genesis: { type: "string" },
        "block-time": { type: "string" },
        "no-mining": { type: "boolean" },
        miner: { type: "string" },
        "metrics-port": { type: "string" },
        "metrics-host": { type: "string" },
        "update-work-on-new-transaction": { type: "boolean" },
        "work-submission-rate-limit-ms": { type: "string" },
        coinbase: { type: "string" },
        "rpc-modules": { type: "string" },
        "rpc-batch-limit": { type: "string" },
        "rpc-body-limit": { type: "string" },
        "rpc-response-limit": { type: "string" },
        "trace-answer-limit": { type: "string" },
        "rpc-json-depth-limit": { type: "string" },
        "rpc-json-value-limit": { type: "string" },
        "ws-max-connections": { type: "string" },
        "ws-max-subscriptions": { type: "string" },
        "ws-send-buffer-limit": { type: "string" },
        "proof-keys-limit": { type: "string" },
        "override-accounts-limit": { type: "string" },
        "override-slots-limit": { type: "string" },
        "call-gas-cap": { type: "string" },
        "call-timeout": { type: "string" },
        "traces-at-once": { type: "string" },
        "no-call-worker": { type: "boolean" },
        "no-recovery-worker": { type: "boolean" },
        "verify-imports-with-reference-engine": { type: "boolean" },
        "logs-block-range-limit": { type: "string" },
        "logs-result-limit": { type: "string" },
        "filter-timeout": { type: "string" },
        "keystore-kdf": { type: "string" },
        "typed-transactions": { type: "boolean" },
        p2p: { type: "boolean" },
        "p2p-host": { type: "string" },
        "p2p-port": { type: "string" },
        bootnodes: { type: "string" },
        "max-peers": { type: "string" },
        "min-peers": { type: "string" },
        "p2p-key": { type: "string" },
        cors: { type: "string" },
        vhosts: { type: "string" },
        "allow-insecure-unlock": { type: "boolean" },
        "log-level": { type: "string" },
        "log-format": { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const flags = parsed.values;
  if (flags.help) return { kind: "help", text: helpText() };
  if (flags.version) return { kind: "version" };

  const defaults = defaultNodeOptions;
  const network = networkFlag(flags.network);
  if (flags["in-memory"] && flags["data-dir"] !== undefined) throw new UsageError("--in-memory and --data-dir exclude each other");
  if (flags["data-dir"]?.trim() === "") throw new UsageError("--data-dir must not be empty");
  const logLevel = flags["log-level"] ?? defaults.logLevel;
  if (!isLogLevel(logLevel)) throw new UsageError(`--log-level must be one of ${logLevels.join(", ")}, got "${logLevel}"`);
  const logFormat = flags["log-format"];
  if (logFormat !== undefined && !(logFormats as readonly string[]).includes(logFormat)) throw new UsageError(`--log-format must be one of ${logFormats.join(", ")}, got "${logFormat}"`);
  const port = flags.port === undefined ? defaults.rpc.port : parsePort("--port", flags.port);
  const host = flags.host ?? defaults.rpc.host;
  if (host.trim() === "") throw new UsageError("--host must not be empty");

  if (flags["no-mining"] && flags["block-time"] !== undefined) throw new UsageError("--no-mining and --block-time exclude each other");
  const mining: MiningMode = flags["no-mining"]
    ? { kind: "off" }
    : flags["block-time"] === undefined
      ? { kind: "auto" }
      : { kind: "interval", blockTimeSeconds: parsePositiveInteger("--block-time", flags["block-time"]) };
  const miner = flags.miner ?? defaults.chain.miner;
  if (miner !== "builtin" && miner !== "external") throw new UsageError(`--miner must be builtin or external, got "${miner}"`);
  if (miner === "external" && (flags["no-mining"] || flags["block-time"] !== undefined)) throw new UsageError("--miner external excludes --block-time and --no-mining: its blocks come only from merged miners");
  if (flags["metrics-host"] !== undefined && flags["metrics-port"] === undefined) throw new UsageError("--metrics-host needs --metrics-port");
  const metricsPort = flags["metrics-port"] === undefined ? undefined : parsePort("--metrics-port", flags["metrics-port"]);
  const keyStoreKdf = flags["keystore-kdf"] ?? defaults.chain.keyStoreKdf;
  if (keyStoreKdf !== "light" && keyStoreKdf !== "standard") throw new UsageError(`--keystore-kdf must be light or standard, got "${keyStoreKdf}"`);
  if (flags.coinbase !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(flags.coinbase)) {
    throw new UsageError(`--coinbase takes a 20-byte hex address (0x followed by 40 hex digits), got "${flags.coinbase}"`);
  }

  return {
    kind: "run",
    logFormat: logFormat as LogFormat | undefined,
    options: {
      networkId: network.networkId,
      chain: {
        ...defaults.chain,
        genesisFile: flags.genesis,
        mining: miner === "external" ? { kind: "off" } : mining,
        miner,
        mergedMining: {
          updateWorkOnNewTransaction: flags["update-work-on-new-transaction"] ?? false,
          submissionRateLimitMs:
            flags["work-submission-rate-limit-ms"] === undefined ? defaults.chain.mergedMining.submissionRateLimitMs : parsePositiveInteger("--work-submission-rate-limit-ms", flags["work-submission-rate-limit-ms"], { allowZero: true }),
        },
        coinbase: flags.coinbase === undefined ? defaults.chain.coinbase : new Uint8Array(Buffer.from(flags.coinbase.slice(2), "hex")),
        calls: {
          gasCap: flags["call-gas-cap"] === undefined ? defaults.chain.calls.gasCap : BigInt(parsePositiveInteger("--call-gas-cap", flags["call-gas-cap"])),
          timeLimitMs: flags["call-timeout"] === undefined ? defaults.chain.calls.timeLimitMs : parsePositiveInteger("--call-timeout", flags["call-timeout"]),
        },
        callWorker: !(flags["no-call-worker"] ?? false),
        recoveryWorker: !(flags["no-recovery-worker"] ?? false),
        verifyImportsWithReferenceEngine: flags["verify-imports-with-reference-engine"] ?? false,
        logs: logOptionsFrom(flags, defaults.chain.logs),
        tracesAtOnce: positiveIntegerFlag(flags, "traces-at-once", defaults.chain.tracesAtOnce),
        keyStoreKdf,
        typedTransactions: flags["typed-transactions"] ?? false,
      },
      p2p: p2pOptionsFrom(flags, network),
      logLevel,
      metrics: metricsPort === undefined ? undefined : { host: flags["metrics-host"] ?? "127.0.0.1", port: metricsPort },
      storage: { dataDir: flags["data-dir"], inMemory: flags["in-memory"] ?? false },
      rpc: {
        host,
        port,
        modules: flags["rpc-modules"],
        corsOrigins: commaSeparated(flags.cors ?? ""),
        allowedHosts: flags.vhosts === undefined ? defaults.rpc.allowedHosts : commaSeparated(flags.vhosts),
        allowInsecureUnlock: flags["allow-insecure-unlock"] ?? false,
        batchLimit: flags["rpc-batch-limit"] === undefined ? defaults.rpc.batchLimit : parsePositiveInteger("--rpc-batch-limit", flags["rpc-batch-limit"]),
        bodyLimitBytes: flags["rpc-body-limit"] === undefined ? defaults.rpc.bodyLimitBytes : parsePositiveInteger("--rpc-body-limit", flags["rpc-body-limit"]),
        responseLimitBytes:
          flags["rpc-response-limit"] === undefined ? defaults.rpc.responseLimitBytes : parsePositiveInteger("--rpc-response-limit", flags["rpc-response-limit"]),
        traceAnswerLimitBytes: positiveIntegerFlag(flags, "trace-answer-limit", defaults.rpc.traceAnswerLimitBytes),
        jsonDepthLimit: positiveIntegerFlag(flags, "rpc-json-depth-limit", defaults.rpc.jsonDepthLimit),
        jsonValueLimit: positiveIntegerFlag(flags, "rpc-json-value-limit", defaults.rpc.jsonValueLimit),
        proofKeysLimit: positiveIntegerFlag(flags, "proof-keys-limit", defaults.rpc.proofKeysLimit),
        overrideAccountsLimit: positiveIntegerFlag(flags, "override-accounts-limit", defaults.rpc.overrideAccountsLimit),
        overrideSlotsLimit: positiveIntegerFlag(flags, "override-slots-limit", defaults.rpc.overrideSlotsLimit),
        wsMaxConnections: positiveIntegerFlag(flags, "ws-max-connections", defaults.rpc.wsMaxConnections),
        wsMaxSubscriptions: positiveIntegerFlag(flags, "ws-max-subscriptions", defaults.rpc.wsMaxSubscriptions),
        wsSendBufferLimitBytes: positiveIntegerFlag(flags, "ws-send-buffer-limit", defaults.rpc.wsSendBufferLimitBytes),
      },
    },
  };
}
