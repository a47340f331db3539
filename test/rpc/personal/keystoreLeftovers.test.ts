// A node started on a data dir whose key store holds temp files of key writes a kill cut short
// (`.<uuid>.tmp`, empty or half written) deletes them before it serves, and keeps the key files and
// every other file there.
import { expect } from "chai";
import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestNode } from "../../helpers/testNode.js";

const importedKey = `0x${"42".repeat(32)}`;
const passphrase = "leftovers";

describe("personal: temp files of unfinished key writes", function () {
  this.timeout(30_000);
  let directory: string;
  before(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-keystore-leftovers-"))));
  after(() => rm(directory, { recursive: true, force: true }));

  it("are deleted at start; key files and a user's files stay", async () => {
    let node = await startTestNode({ dataDir: directory });
    let imported: string;
    try {
      imported = await node.client.personal_importRawKey(importedKey, passphrase);
    } finally {
      await node.stop();
    }
    const keystore = join(directory, "keystore");
    const keyFiles = await readdir(keystore);
    expect(keyFiles).to.have.length(1);
    const leftovers = Array.from({ length: 8 }, () => `.${randomUUID()}.tmp`);
    await writeFile(join(keystore, leftovers[0]!), "");
    for (const name of leftovers.slice(1)) await writeFile(join(keystore, name), '{"version":3,"id":"');
    const usersFiles = ["notes.tmp", ".backup.tmp"];
    for (const name of usersFiles) await writeFile(join(keystore, name), "a user's file");
    expect(await readdir(keystore)).to.have.length(1 + leftovers.length + usersFiles.length);

    node = await startTestNode({ dataDir: directory });
    try {
      expect((await readdir(keystore)).sort()).to.deep.equal([...keyFiles, ...usersFiles].sort());
      expect(await node.client.personal_listAccounts()).to.include(imported);
      expect(await node.client.personal_unlockAccount(imported, passphrase)).to.equal(true);
      expect(node.logs.some((record) => record.msg === "temp files of key writes a kill cut short deleted")).to.equal(true);
    } finally {
      await node.stop();
    }
  });
});
