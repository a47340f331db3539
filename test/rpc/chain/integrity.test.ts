// The chain read back at every start: a damaged block near the head (missing receipts, a header
// that does not hash to its key, a hole in the canonical index) is refused, naming the block; a
// damaged block further back, which the start does not read, is refused when a request reads it,
// with a clear error naming it (never -32603), and the node goes on serving the rest.
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { RLP } from "@ethereumjs/rlp";
import { keccak256 } from "../../../src/common/crypto.js";
import { NodeConfigurationError, verifyDataDirectory } from "../../../src/node/index.js";
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

  it("chain-node verify checks every block's contents and the head's state, listing each problem", async () => {
    const node = await startTestNode({ dataDir: directory });
    const blockHashes: string[] = [];
    try {
      for (let index = 0; index < 4; index++) {
        const hash = await node.client.eth_sendTransaction({ from: "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826", to: "0x00000000000000000000000000000000000000bb", value: "0x1" });
        blockHashes.push((await node.client.eth_getTransactionReceipt(hash))!.blockHash);
      }
    } finally {
      await node.stop();
    }
    const whole = await verifyDataDirectory(directory);
    expect(whole.problems).to.deep.equal([]);
    expect(whole.blocksChecked).to.equal(5n);
    expect(whole.accounts).to.be.above(10);

    const [first, second, third] = blockHashes.map(hashBytes) as [Uint8Array, Uint8Array, Uint8Array];
    await damage(directory, async (db) => {
      // Block 2's receipt says its transfer failed (the same count: a start does not see it), block
      // 3's transaction loses its location, and block 1's stored sender is another account.
      const [[, ...rest]] = RLP.decode((await db.get(storeKeys.receipts(second)))!) as [Uint8Array[]];
      await db.put(storeKeys.receipts(second), RLP.encode([[new Uint8Array(0), ...rest]]));
      const [raws] = RLP.decode((await db.get(storeKeys.body(third)))!) as [Uint8Array[]];
      await db.del(storeKeys.transactionLocation(keccak256(raws[0]!)));
      const [firstRaws, , uncles] = RLP.decode((await db.get(storeKeys.body(first)))!) as [Uint8Array[], Uint8Array[], Uint8Array[]];
      await db.put(storeKeys.body(first), RLP.encode([firstRaws, [new Uint8Array(20).fill(7)], uncles]));
    });
    const damaged = await verifyDataDirectory(directory);
    expect(damaged.problems, damaged.problems.join("\n")).to.have.length(3);
    expect(damaged.problems[0]).to.match(/^canonical block 3: the location of its transaction 0 \(0x[0-9a-f]{64}\) is missing$/);
    expect(damaged.problems[1]).to.equal("canonical block 2: its receipts do not match the header's receipts root");
    expect(damaged.problems[2]).to.equal("canonical block 1: the stored sender of its transaction 0 is not the one its signature gives");

    // A node of the head's state trie goes missing: the first child of the root branch.
    await damage(directory, async (db) => {
      const head = (await db.get(storeKeys.header(hashBytes(blockHashes[3]!))))!;
      const stateRoot = (RLP.decode(head) as Uint8Array[])[3]!;
      const children = RLP.decode((await db.get(storeKeys.trieNode(stateRoot)))!) as Uint8Array[];
      await db.del(storeKeys.trieNode(children.find((child) => child.length === 32)!));
    });
    const stateDamage = (await verifyDataDirectory(directory)).problems.filter((problem) => problem.startsWith("the state of head block 4"));
    expect(stateDamage).to.have.length(1);
    expect(stateDamage[0]).to.match(/^the state of head block 4 \(root 0x[0-9a-f]{64}\): trie node 0x[0-9a-f]{64} \(referred to by 0x[0-9a-f]{64}\) is missing$/);
  });

  it("chain-node verify takes a transaction sent from an impersonated account as signed by it (its stand-in signature names it)", async () => {
    const impersonated = "0x00000000000000000000000000000000000000aa";
    const node = await startTestNode({ dataDir: directory });
    try {
      await node.client.anvil_setBalance(impersonated, "0xde0b6b3a7640000");
      await node.client.anvil_impersonateAccount(impersonated);
      const hash = await node.client.eth_sendTransaction({ from: impersonated, to: "0x00000000000000000000000000000000000000bb", value: "0x1" });
      expect((await node.client.eth_getTransactionReceipt(hash))!.from).to.equal(impersonated);
    } finally {
      await node.stop();
    }
    expect((await verifyDataDirectory(directory)).problems).to.deep.equal([]);
  });
});
