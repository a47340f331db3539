// Damage to a stopped data dir, one kind at a time, each on its own copy of a chain the real
// command made (two runs: a clean stop, then kill -9, so the dir holds LevelDB tables, LevelDB's
// log, the node's write-ahead log and a key file). For each kind the node either refuses to start,
// with a message naming the damage and the dir byte for byte as it was, or starts and serves
// exactly the acknowledged chain; `chain-node verify` finds every kind on another copy. The
// counts are printed: kinds tried, refused, started intact, silent loss (which fails the test).
// Then single bytes flipped at random places of the node's and LevelDB's files (seeded; 8 here,
// 60 with CHAIN_NODE_LONG_TESTS=1), held to the same rule.
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcClient } from "../../generated/client.js";
import { writeAheadLogFileName } from "../../src/storage/levelStore.js";
import { decodeLogRecords } from "../../src/storage/writeAheadLog.js";
import { cliPath, commandRuntimeFlags, startNodeProcess } from "../helpers/nodeProcess.js";
import { seededRandom } from "../helpers/seededRandom.js";

const randomFlips = process.env.CHAIN_NODE_LONG_TESTS === "1" ? 60 : 8;

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const recipient = "0x00000000000000000000000000000000000000bb";

/** What the node answered before it stopped: each block's hash by number, and each transaction's block. */
interface Acknowledged {
  readonly blockHashes: string[];
  readonly transactions: Map<string, string>;
}

interface DamageKind {
  readonly name: string;
  readonly damage: (dir: string) => void;
  /** What the node must do: refuse, naming `message`; or start (and serve every acknowledged block), logging `warning` if given. */
  readonly outcome: { refuse: RegExp } | { start: true; warning?: string };
  /** What `chain-node verify` must say. */
  readonly verify: RegExp;
}

function flipByte(path: string, offset: number, mask = 0x40): void {
  const bytes = readFileSync(path);
  bytes[offset]! ^= mask;
  writeFileSync(path, bytes);
}

/** The LevelDB file of `dir` whose name matches `pattern`, of the highest number (the live log, the newest table, the manifest). */
function levelFile(dir: string, pattern: RegExp): string {
  const names = readdirSync(dir).filter((name) => pattern.test(name)).sort();
  return join(dir, names.at(-1)!);
}

/** Every file under `dir` with a digest of its bytes. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    const path = join(dir, name);
    if (statSync(path).isFile()) files[name] = createHash("sha256").update(readFileSync(path)).digest("hex");
  }
  return files;
}

const walRecords = (dir: string) => {
  const log = readFileSync(join(dir, writeAheadLogFileName));
  const decoded = decodeLogRecords(log);
  expect(decoded.records.length, "the write-ahead log holds batches").to.be.above(3);
  return { log, decoded, lastRecordStart: decodeLogRecords(log.subarray(0, log.length - 1)).validBytes };
};

const kinds: DamageKind[] = [
  { name: "write-ahead log: a byte of its mark", damage: (dir) => flipByte(join(dir, writeAheadLogFileName), 2), outcome: { refuse: /CHAIN-NODE-WAL is damaged: its first 8 bytes are not the mark/ }, verify: /CHAIN-NODE-WAL: its first 8 bytes/ },
  { name: "write-ahead log: the high byte of a record's length", damage: (dir) => flipByte(join(dir, writeAheadLogFileName), 8 + 3), outcome: { refuse: /CHAIN-NODE-WAL is damaged: the header of the record at byte 8 does not match its checksum/ }, verify: /CHAIN-NODE-WAL: the header of the record at byte 8/ },
  { name: "write-ahead log: a byte of a record's payload", damage: (dir) => flipByte(join(dir, writeAheadLogFileName), 8 + 20 + 30), outcome: { refuse: /CHAIN-NODE-WAL is damaged: batch \d+ \(the record at byte 8\) does not match its checksum/ }, verify: /CHAIN-NODE-WAL: batch \d+ \(the record at byte 8\)/ },
  {
    name: "write-ahead log: the last byte of the last record",
    damage: (dir) => flipByte(join(dir, writeAheadLogFileName), walRecords(dir).log.length - 1),
    outcome: { refuse: /CHAIN-NODE-WAL is damaged: batch \d+ \(the record at byte \d+\) does not match its checksum/ },
    verify: /CHAIN-NODE-WAL: batch \d+ \(the record at byte \d+\) does not match/,
  },
  {
    name: "write-ahead log: cut inside its last record",
    damage: (dir) => {
      const { log, lastRecordStart } = walRecords(dir);
      writeFileSync(join(dir, writeAheadLogFileName), log.subarray(0, lastRecordStart + 30));
    },
    // The batch was in LevelDB already (the kill came well after it): the chain is whole.
    outcome: { start: true, warning: "a write the last stop cut short was dropped from the end of the write-ahead log (it had not been acknowledged)" },
    verify: /CHAIN-NODE-WAL ends with the write of batch \d+ cut short \(30 bytes\)/,
  },
  { name: "LevelDB log: a byte of a record", damage: (dir) => flipByte(levelFile(dir, /\.log$/), 100), outcome: { refuse: /LevelDB's files in .* are damaged: \d+\.log: the record at byte 0 does not match its checksum/ }, verify: /\d+\.log: the record at byte 0 does not match its checksum/ },
  {
    name: "LevelDB log: cut inside its last record",
    damage: (dir) => {
      const path = levelFile(dir, /\.log$/);
      const bytes = readFileSync(path);
      writeFileSync(path, bytes.subarray(0, bytes.length - 20));
    },
    outcome: { start: true },
    verify: /\d+\.log: its last record, at byte \d+, runs past the end of the file: a write a crash interrupted/,
  },
  { name: "table file: a byte", damage: (dir) => flipByte(levelFile(dir, /\.ldb$/), 1000), outcome: { refuse: /\d+\.ldb: the block at byte 0 does not match its checksum/ }, verify: /\d+\.ldb: the block at byte 0 does not match its checksum/ },
  { name: "table file: missing", damage: (dir) => unlinkSync(levelFile(dir, /\.ldb$/)), outcome: { refuse: /table \d+\.ldb is missing/ }, verify: /table \d+\.ldb is missing/ },
  { name: "MANIFEST: a byte", damage: (dir) => flipByte(levelFile(dir, /^MANIFEST-/), 20), outcome: { refuse: /MANIFEST-\d+: the record at byte 0 does not match its checksum/ }, verify: /MANIFEST-\d+: the record at byte 0/ },
  { name: "CURRENT: names another manifest", damage: (dir) => writeFileSync(join(dir, "CURRENT"), "MANIFEST-000001\n"), outcome: { refuse: /CURRENT names MANIFEST-000001, which is missing/ }, verify: /CURRENT names MANIFEST-000001/ },
  {
    name: "key file: a byte of its JSON",
    damage: (dir) => {
      const keyFile = join(dir, "keystore", readdirSync(join(dir, "keystore")).find((name) => name.startsWith("UTC--"))!);
      flipByte(keyFile, 0);
    },
    outcome: { start: true, warning: "key file ignored" },
    verify: /key file keystore\/UTC--.* cannot be read as a key file: it is not JSON/,
  },
];

/** Starts the node on `dir`: its refusal message, or the running node. */
async function startOrRefusal(dir: string) {
  try {
    return { node: await startNodeProcess(["--port", "0", "--data-dir", dir, "--no-recovery-worker"]) };
  } catch (error) {
    return { refusal: (error as Error).message };
  }
}

/** Whether the node serves exactly the acknowledged chain (and nothing is -32603). */
async function servesAcknowledged(url: string, acknowledged: Acknowledged): Promise<string | undefined> {
  const client = new RpcClient(url, { timeoutMs: 10_000 });
  const head = Number(BigInt(await client.eth_blockNumber()));
  if (head !== acknowledged.blockHashes.length - 1) return `head ${head}, acknowledged ${acknowledged.blockHashes.length - 1}`;
  for (const [number, hash] of acknowledged.blockHashes.entries()) {
    const block = await client.eth_getBlockByNumber(`0x${number.toString(16)}`, false);
    if (block?.hash !== hash) return `block ${number} is ${block?.hash ?? "missing"}, acknowledged ${hash}`;
  }
  for (const [transaction, blockHash] of acknowledged.transactions) {
    const receipt = await client.eth_getTransactionReceipt(transaction);
    if (receipt?.blockHash !== blockHash) return `transaction ${transaction}: receipt ${receipt === null ? "missing" : `in ${receipt.blockHash}`}`;
  }
  await client.eth_getLogs({ fromBlock: "0x0", toBlock: "latest" });
  const balance = BigInt(await client.eth_getBalance(recipient, "latest"));
  if (balance !== BigInt(acknowledged.transactions.size)) return `balance ${balance}`;
  return undefined;
}

describe("damage to a stopped data dir", function () {
  this.timeout(180_000);
  let directory: string;
  let base: string;
  const acknowledged: Acknowledged = { blockHashes: [], transactions: new Map() };

  before(async () => {
    directory = await mkdtemp(join(tmpdir(), "chain-node-damage-"));
    base = join(directory, "base");
    // First run, stopped cleanly: its LevelDB log becomes a table when the second run opens it.
    for (const [sends, stop] of [[120, "SIGTERM"], [40, "SIGKILL"]] as const) {
      const node = await startNodeProcess(["--port", "0", "--data-dir", base]);
      const client = new RpcClient(node.url, { timeoutMs: 10_000 });
      if (stop === "SIGTERM") await client.personal_newAccount("passphrase");
      for (let index = 0; index < sends; index++) {
        const hash = await client.eth_sendTransaction({ from: cow, to: recipient, value: "0x1" });
        acknowledged.transactions.set(hash, (await client.eth_getTransactionReceipt(hash))!.blockHash);
      }
      if (stop === "SIGKILL") {
        const head = Number(BigInt(await client.eth_blockNumber()));
        for (let number = 0; number <= head; number++) acknowledged.blockHashes.push((await client.eth_getBlockByNumber(`0x${number.toString(16)}`, false))!.hash!);
        // LevelDB takes each batch a few milliseconds after the node's log: let it have them all.
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await node.stop(stop);
    }
  });
  after(() => rm(directory, { recursive: true, force: true }));

  it("the undamaged copy starts and serves every acknowledged block, and verify finds nothing", async () => {
    const copy = join(directory, "undamaged");
    cpSync(base, copy, { recursive: true });
    const verified = spawnSync(process.execPath, [...commandRuntimeFlags(), cliPath, "verify", "--data-dir", copy], { encoding: "utf8", timeout: 60_000 });
    expect(verified.status, verified.stdout + verified.stderr).to.equal(0);
    expect(verified.stdout).to.match(new RegExp(`^${copy}: no problem found in 1 LevelDB tables, ${acknowledged.blockHashes.length} blocks, \\d+ state trie nodes \\(11 accounts\\)`));
    const { node, refusal } = await startOrRefusal(copy);
    expect(refusal).to.equal(undefined);
    try {
      expect(await servesAcknowledged(node!.url, acknowledged)).to.equal(undefined);
    } finally {
      await node!.stop();
    }
  });

  it(`each of ${kinds.length} kinds of damage is refused with the dir unchanged, or started with the acknowledged chain whole; verify finds each`, async () => {
    const counts = { tried: 0, refused: 0, startedIntact: 0, silentLoss: 0 };
    const rows: string[] = [];
    for (const [index, kind] of kinds.entries()) {
      counts.tried++;
      const forVerify = join(directory, `verify-${index}`);
      const forStart = join(directory, `start-${index}`);
      cpSync(base, forVerify, { recursive: true });
      cpSync(base, forStart, { recursive: true });
      kind.damage(forVerify);
      kind.damage(forStart);

      const verified = spawnSync(process.execPath, [...commandRuntimeFlags(), cliPath, "verify", "--data-dir", forVerify], { encoding: "utf8", timeout: 60_000 });
      expect(verified.status, `${kind.name}: verify's exit code`).to.equal(1);
      expect(verified.stdout, `${kind.name}: verify`).to.match(kind.verify);

      const before = snapshot(forStart);
      const { node, refusal } = await startOrRefusal(forStart);
      if (refusal !== undefined) {
        expect("refuse" in kind.outcome, `${kind.name}: refused: ${refusal}`).to.equal(true);
        expect(refusal, kind.name).to.match((kind.outcome as { refuse: RegExp }).refuse);
        expect(refusal, kind.name).to.not.include("    at ");
        expect(snapshot(forStart), `${kind.name}: the refused dir is left as it was`).to.deep.equal(before);
        counts.refused++;
        rows.push(`| ${kind.name} | refused |`);
      } else {
        try {
          expect("start" in kind.outcome, `${kind.name}: started`).to.equal(true);
          const loss = await servesAcknowledged(node!.url, acknowledged);
          if (loss !== undefined) counts.silentLoss++;
          expect(loss, `${kind.name}: serves the acknowledged chain`).to.equal(undefined);
          const warning = (kind.outcome as { warning?: string }).warning;
          if (warning !== undefined) expect(node!.lines.some((line) => line.includes(warning)), `${kind.name}: logs "${warning}"`).to.equal(true);
          counts.startedIntact++;
          rows.push(`| ${kind.name} | started, chain whole${warning === undefined ? "" : ", warned"} |`);
        } finally {
          await node!.stop();
        }
      }
    }
    console.log(`      damage kinds: ${JSON.stringify(counts)}\n${rows.map((row) => `      ${row}`).join("\n")}`);
    expect(counts.silentLoss).to.equal(0);
    expect(counts.refused + counts.startedIntact).to.equal(counts.tried);
  });

  it(`${randomFlips} bytes flipped at random in the write-ahead log and LevelDB's files: each refused with the dir unchanged, or started whole`, async function () {
    this.timeout(60_000 + randomFlips * 5_000);
    const next = seededRandom(3401);
    const files = readdirSync(base).filter((name) => name === writeAheadLogFileName || name === "CURRENT" || name.startsWith("MANIFEST-") || /\.(log|ldb)$/.test(name));
    const outcomes = { refused: 0, startedIntact: 0 };
    for (let round = 0; round < randomFlips; round++) {
      const name = files[(next() >>> 8) % files.length]!;
      const copy = join(directory, `flip-${round}`);
      cpSync(base, copy, { recursive: true });
      const size = statSync(join(copy, name)).size;
      const offset = (next() >>> 4) % size;
      const mask = 1 << ((next() >>> 12) % 8);
      const place = `${name} byte ${offset} of ${size} (mask ${mask})`;
      flipByte(join(copy, name), offset, mask);
      const before = snapshot(copy);
      const { node, refusal } = await startOrRefusal(copy);
      if (refusal !== undefined) {
        expect(refusal, place).to.match(/is damaged|are damaged/);
        expect(snapshot(copy), `${place}: the refused dir is left as it was`).to.deep.equal(before);
        outcomes.refused++;
        continue;
      }
      try {
        expect(await servesAcknowledged(node!.url, acknowledged), `${place}: serves the acknowledged chain`).to.equal(undefined);
        outcomes.startedIntact++;
      } finally {
        await node!.stop();
      }
    }
    console.log(`      random flips: ${JSON.stringify(outcomes)}`);
  });
});
