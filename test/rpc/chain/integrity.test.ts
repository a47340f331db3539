// The chain read back at every start: a damaged block near the head (missing receipts, a header
// that does not hash to its key, a hole in the canonical index) is refused, naming the block; a
// damaged block further back, which the start does not read, is refused when a request reads it,
// with a clear error naming it (never -32603), and the node goes on serving the rest.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { NodeConfigurationError } from "../../../src/node/index.js";
import { storeKeys } from "../../../src/storage/keys.js";
import { startTestNode } from "../../helpers/testNode.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";

/** Mines `count` empty blocks on `dataDir`; answers the hashes by number. */
async function chainOf(dataDir: string, count: number): Promise<string[]> {
  const node = await startTestNode({ dataDir, chain: { mining: { kind: "off" } } });
  try {
    for (let index = 0; index < count; index++) await node.client.evm_mine();
    const hashes: string[] = [];
    for (let number = 0; number <= count; number++) hashes.push((await node.client.eth_getBlockByNumber(`0x${number.toString(16)}`, false))!.hash!);
    return hashes;
  } finally {
    await node.stop();
  }
}

/** Changes the LevelDB under `dataDir` directly, as damage would. */
async function damage(dataDir: string, change: (db: ClassicLevel<Uint8Array, Uint8Array>) => Promise<void>): Promise<void> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(dataDir, { keyEncoding: "view", valueEncoding: "view" });
  await db.open();
  await change(db);
  await db.close();
}

const hashBytes = (hash: string) => new Uint8Array(Buffer.from(hash.slice(2), "hex"));

async function refusal(dataDir: string): Promise<string> {
  try {
    await (await startTestNode({ dataDir })).stop();
  } catch (error) {
    expect(error).to.be.instanceOf(NodeConfigurationError);
    return (error as Error).message;
  }
  throw new Error("the node started");
}

describe("chain: integrity of the stored chain", function () {
  this.timeout(60_000);
  let directory: string;
  beforeEach(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-integrity-"))));
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it("refuses to start on damage near the head, naming the first bad block from the head down", async () => {
    const hashes = await chainOf(directory, 12);
    await damage(directory, (db) => db.del(storeKeys.receipts(hashBytes(hashes[9]!))));
    expect(await refusal(directory)).to.match(/is damaged: canonical block 9: its receipts are missing\. .*chain-node verify --data-dir/);

    await damage(directory, async (db) => {
      await db.put(storeKeys.receipts(hashBytes(hashes[9]!)), (await db.get(storeKeys.receipts(hashBytes(hashes[8]!))))!);
      // Block 11's header stored under block 11's key, but with block 10's bytes.
      await db.put(storeKeys.header(hashBytes(hashes[11]!)), (await db.get(storeKeys.header(hashBytes(hashes[10]!))))!);
    });
    expect(await refusal(directory)).to.match(new RegExp(`canonical block 11: its header, stored under ${hashes[11]}, hashes to ${hashes[10]}`));

    await damage(directory, async (db) => {
      await db.put(storeKeys.header(hashBytes(hashes[11]!)), (await db.get(storeKeys.header(hashBytes(hashes[11]!))))!);
      await db.del(storeKeys.canonicalHash(5n));
    });
    const message = await refusal(directory);
    // Block 11's header is still block 10's bytes: that is the first problem from the head down.
    expect(message).to.match(/canonical block 11: /);
  });

  it("answers a read of a damaged block past the start's window with a clear error naming it, and serves the rest", async () => {
    const hashes = await chainOf(directory, 300);
    await damage(directory, (db) => db.put(storeKeys.header(hashBytes(hashes[10]!)), Buffer.from("c0", "hex")));
    const node = await startTestNode({ dataDir: directory });
    try {
      await expectRpcError(
        node.client.eth_getBlockByNumber("0xa", false),
        -32000,
        new RegExp(`^the stored block ${hashes[10]} is damaged: malformed block header; stop the node and run chain-node verify on its data dir$`),
      );
      expect((await node.client.eth_getBlockByNumber("0xb", false))!.hash).to.equal(hashes[11]);
      expect(node.logs.some((record) => record.msg === "a read met damaged data in the store")).to.equal(true);
    } finally {
      await node.stop();
    }
  });
});
