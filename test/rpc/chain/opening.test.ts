// Opening a chain: data directories the node refuses (and leaves as they were), --genesis files
// it cannot use, and interval mining.
import { expect } from "chai";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { NodeConfigurationError } from "../../../src/node/index.js";
import { metadataNames, storeKeys } from "../../../src/storage/keys.js";
import { startTestNode, type TestNodeOverrides } from "../../helpers/testNode.js";

const cowWallet = new Wallet(keccak256(toUtf8Bytes("cow")));

async function expectRefusal(overrides: TestNodeOverrides, message: RegExp): Promise<void> {
  try {
    const node = await startTestNode(overrides);
    await node.stop();
  } catch (error) {
    expect(error).to.be.instanceOf(NodeConfigurationError);
    expect((error as Error).message).to.match(message);
    return;
  }
  expect.fail("the node started");
}

/** Mines one block on `dataDir` and answers its hash. */
async function chainWithOneBlock(dataDir: string): Promise<string> {
  const node = await startTestNode({ dataDir });
  try {
    const hash = await node.client.eth_sendRawTransaction(
      await cowWallet.signTransaction({ type: 0, chainId: 33n, nonce: 0, gasLimit: 21_000n, gasPrice: 0n, to: "0x00000000000000000000000000000000000000cc", value: 7n }),
    );
    return (await node.client.eth_getTransactionReceipt(hash))!.blockHash;
  } finally {
    await node.stop();
  }
}

/** The chain on `dataDir` still has `blockHash` at its head. */
async function expectIntact(dataDir: string, blockHash: string): Promise<void> {
  const node = await startTestNode({ dataDir });
  try {
    expect((await node.client.eth_getBlockByNumber("latest", false))!.hash).to.equal(blockHash);
    expect(await node.client.eth_getBalance("0x00000000000000000000000000000000000000cc", "latest")).to.equal("0x7");
  } finally {
    await node.stop();
  }
}

describe("chain: opening a data directory", () => {
  let directory: string;
  beforeEach(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-open-"))));
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it("refuses a directory holding other files, and writes nothing into it", async () => {
    const foreign = join(directory, "foreign");
    await mkdir(foreign);
    await writeFile(join(foreign, "notes.txt"), "mine");
    await expectRefusal({ dataDir: foreign }, /is not a chain-node data directory \(it holds other files\)/);
    expect(await readdir(foreign)).to.deep.equal(["notes.txt"]);
    expect(await readFile(join(foreign, "notes.txt"), "utf8")).to.equal("mine");
  });

  it("refuses a LevelDB database another program wrote, and adds no key to it", async () => {
    const foreign = join(directory, "leveldb");
    const db = new ClassicLevel<string, string>(foreign);
    await db.put("hello", "world");
    await db.close();
    await expectRefusal({ dataDir: foreign }, /holds a LevelDB database that this node did not write; choose an empty or new directory with --data-dir/);
    const reopened = new ClassicLevel<string, string>(foreign);
    expect(await reopened.keys().all()).to.deep.equal(["hello"]);
    await reopened.close();
  });

  it("refuses the chain of another network or another genesis, and keeps that chain", async () => {
    const dataDir = join(directory, "chain");
    const head = await chainWithOneBlock(dataDir);
    await expectRefusal({ dataDir, networkId: 31 }, /holds another chain \(\{"chainId":"33".*this node runs \{"chainId":"31".*Use another --data-dir/);
    const genesisFile = join(directory, "genesis.json");
    await writeFile(genesisFile, JSON.stringify({ alloc: { "0x00000000000000000000000000000000000000dd": { balance: "0x1" } } }));
    await expectRefusal({ dataDir, chain: { genesisFile } }, /holds another chain/);
    await expectIntact(dataDir, head);
  });

  it("refuses a chain of store format 1 (block hashes over the whole header), saying what to do", async () => {
    const dataDir = join(directory, "chain");
    await chainWithOneBlock(dataDir);
    const db = new ClassicLevel<Uint8Array, Uint8Array>(dataDir, { keyEncoding: "view", valueEncoding: "view" });
    await db.open();
    await db.put(storeKeys.metadata(metadataNames.formatVersion), new TextEncoder().encode("1"));
    await db.close();
    await expectRefusal({ dataDir }, /holds a chain of format version 1, written by an earlier chain-node .*RSKIP92.*It is left as it is: start this node on a new --data-dir\.$/);
  });

  it("refuses a store without its head block, or that LevelDB cannot open, with a clear message", async () => {
    const dataDir = join(directory, "chain");
    await chainWithOneBlock(dataDir);
    const db = new ClassicLevel<Uint8Array, Uint8Array>(dataDir, { keyEncoding: "view", valueEncoding: "view" });
    await db.open();
    await db.del(storeKeys.metadata(metadataNames.head));
    await db.close();
    await expectRefusal({ dataDir }, /is damaged: the head block is missing/);

    await writeFile(join(dataDir, "CURRENT"), "MANIFEST-999999\n");
    await expectRefusal({ dataDir }, /LevelDB's files in .*chain are damaged: CURRENT names MANIFEST-999999, which is missing\. The node did not open the database, so nothing in .*chain was changed/);
  });

  it("refuses a --genesis file it cannot read or use, saying which field is wrong", async () => {
    const genesisFile = join(directory, "genesis.json");
    await expectRefusal({ chain: { genesisFile } }, /cannot read --genesis .*genesis\.json: ENOENT/);
    await writeFile(genesisFile, "{ not json");
    await expectRefusal({ chain: { genesisFile } }, /cannot read --genesis .*genesis\.json: .*JSON/);
    await writeFile(genesisFile, JSON.stringify({ alloc: { "0x00000000000000000000000000000000000000dd": { balance: "lots" } } }));
    await expectRefusal({ chain: { genesisFile } }, /alloc\["0x00000000000000000000000000000000000000dd"\]\.balance/);
    await writeFile(genesisFile, JSON.stringify({ gasLimit: "0x1", chainSpeed: 3 }));
    await expectRefusal({ chain: { genesisFile } }, /unknown field "chainSpeed"/);
  });
});

describe("chain: interval mining", () => {
  it("collects the transactions sent during an interval into one block, and answers sends at once", async () => {
    const node = await startTestNode({ chain: { mining: { kind: "interval", blockTimeSeconds: 2 } } });
    try {
      // Start right after a block, so that the sends below fall well inside one interval.
      const deadline = Date.now() + 10_000;
      const start = await node.client.eth_blockNumber();
      while ((await node.client.eth_blockNumber()) === start) {
        if (Date.now() > deadline) expect.fail("no block within 10 s");
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const hashes = [];
      for (let nonce = 0; nonce < 3; nonce++) {
        const raw = await cowWallet.signTransaction({ type: 0, chainId: 33n, nonce, gasLimit: 21_000n, gasPrice: 0n, to: "0x00000000000000000000000000000000000000ee", value: 1n });
        hashes.push(await node.client.eth_sendRawTransaction(raw));
      }
      expect(await node.client.eth_getTransactionReceipt(hashes[0]!)).to.equal(null);
      let receipts = [];
      do {
        if (Date.now() > deadline) expect.fail("the transactions were not mined within 10 s");
        await new Promise((resolve) => setTimeout(resolve, 50));
        receipts = await Promise.all(hashes.map((hash) => node.client.eth_getTransactionReceipt(hash)));
      } while (receipts.some((receipt) => receipt === null));
      expect(new Set(receipts.map((receipt) => receipt!.blockNumber)).size).to.equal(1);
      expect(receipts.map((receipt) => receipt!.transactionIndex)).to.deep.equal(["0x0", "0x1", "0x2"]);
      expect(await node.client.eth_getBalance("0x00000000000000000000000000000000000000ee", "latest")).to.equal("0x3");
    } finally {
      await node.stop();
    }
  });
});
