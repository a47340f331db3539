// kill -9 right after personal_importRawKey / personal_newAccount answer: the key file was made
// durable before the answer (temp file, fsync, rename, directory fsync), so after a restart on the
// same data dir the account is listed, unlocks with its passphrase and dumps the same key, and no
// unfinished temp file is left behind as an account.
import { expect } from "chai";
import { computeAddress } from "ethers";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcClient } from "../../generated/client.js";
import { startNodeProcess } from "../helpers/nodeProcess.js";

const rounds = process.env.CHAIN_NODE_LONG_TESTS === "1" ? 10 : 2;

describe("crash safety: kill -9 after a key is stored", function () {
  this.timeout(30_000 + rounds * 15_000);
  let directory: string;
  before(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-keystore-crash-"))));
  after(() => rm(directory, { recursive: true, force: true }));

  it(`keeps every key whose address was returned, across ${rounds} kills`, async () => {
    const stored: { address: string; passphrase: string; privateKey?: string }[] = [];
    for (let round = 0; round < rounds; round++) {
      const node = await startNodeProcess(["--port", "0", "--data-dir", directory]);
      const client = new RpcClient(node.url, { timeoutMs: 10_000 });
      const privateKey = `0x${(round + 1).toString(16).padStart(2, "0").repeat(32)}`;
      const passphrase = `round ${round}`;
      const imported = await client.personal_importRawKey(privateKey, passphrase);
      expect(imported).to.equal(computeAddress(privateKey).toLowerCase());
      stored.push({ address: imported, passphrase, privateKey });
      // A second key, and the kill lands as soon as its answer arrives.
      const created = await client.personal_newAccount(`${passphrase} new`);
      stored.push({ address: created, passphrase: `${passphrase} new` });
      await node.stop("SIGKILL");
    }

    const node = await startNodeProcess(["--port", "0", "--data-dir", directory]);
    try {
      const client = new RpcClient(node.url, { timeoutMs: 10_000 });
      const listed = await client.personal_listAccounts();
      expect(listed.slice(11)).to.have.members(stored.map((entry) => entry.address));
      for (const entry of stored) {
        expect(await client.personal_unlockAccount(entry.address, entry.passphrase), entry.address).to.equal(true);
        const key = await client.personal_dumpRawKey(entry.address);
        expect(computeAddress(key).toLowerCase()).to.equal(entry.address);
        if (entry.privateKey !== undefined) expect(key).to.equal(entry.privateKey);
      }
      expect((await readdir(join(directory, "keystore"))).filter((name) => !name.startsWith("UTC--"))).to.deep.equal([]);
    } finally {
      await node.stop();
    }
  });
});
