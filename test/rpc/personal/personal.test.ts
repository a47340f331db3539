// personal_: key-store accounts created, imported, unlocked for a while, locked, dumped and used to
// send, and in-memory accounts from a seed; wrong passphrases never unlock, and nothing secret
// reaches the logs. Runs on an in-memory node (keys kept in memory only) unless a test needs files.
import { expect } from "chai";
import { computeAddress, encryptKeystoreJson, keccak256 as ethersKeccak, toUtf8Bytes, Wallet as EthersWallet } from "ethers";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcClient } from "../../../generated/client.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { expectValidResult } from "../../helpers/results.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const recipient = "0x00000000000000000000000000000000000000bb";
const stranger = "0x00000000000000000000000000000000000000aa";
// Not a development account: its balance starts at zero.
const importedKey = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
const importedAddress = computeAddress(importedKey).toLowerCase();
const passphrase = "correct horse battery staple";

/** A call with parameters the typed client would not allow (wrong count or type). */
function rawCall(client: RpcClient, method: string, ...params: unknown[]): Promise<unknown> {
  return (client.call as unknown as (method: string, ...params: unknown[]) => Promise<unknown>).call(client, method, ...params);
}

/** ethers' keystore writer, with a cost low enough for tests. */
function ethersKeyFile(wallet: { address: string; privateKey: string }, password: string): Promise<string> {
  return encryptKeystoreJson({ address: wallet.address, privateKey: wallet.privateKey }, password, { scrypt: { N: 1 << 12 } });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The accounts eth_accounts lists on a fresh regtest node: the ten development accounts and the miner's. */
async function developmentAccounts(client: RpcClient): Promise<string[]> {
  const accounts = await client.eth_accounts();
  expect(accounts).to.have.length(11);
  return accounts;
}

describe("personal_ accounts (in-memory node)", function () {
  this.timeout(30_000);
  let node: TestNode;
  beforeEach(async () => (node = await startTestNode({ logLevel: "debug" })));
  afterEach(() => node.stop());

  it("newAccount makes a random key, unlocked for 30 minutes, listed after the development accounts", async () => {
    const development = await developmentAccounts(node.client);
    const first = await node.client.personal_newAccount(passphrase);
    const second = await node.client.personal_newAccount(passphrase);
    expectValidResult("personal_newAccount", first);
    expect(first).to.not.equal(second);
    const listed = await node.client.personal_listAccounts();
    expectValidResult("personal_listAccounts", listed);
    expect(listed).to.deep.equal([...development, first, second]);
    expect(await node.client.eth_accounts()).to.deep.equal(listed);
    const key = await node.client.personal_dumpRawKey(first);
    expectValidResult("personal_dumpRawKey", key);
    expect(computeAddress(key).toLowerCase()).to.equal(first);
  });

  it("importRawKey takes the key with or without 0x, gives its address, and refuses a second import and bad keys", async () => {
    const address = await node.client.personal_importRawKey(importedKey.slice(2), passphrase);
    expectValidResult("personal_importRawKey", address);
    expect(address).to.equal(importedAddress);
    expect(await node.client.personal_dumpRawKey(address)).to.equal(importedKey);
    await expectRpcError(node.client.personal_importRawKey(importedKey, "another"), -32000, `account ${importedAddress} already exists`);

    // Two imports of one key at once: one wins, the other is refused (no second file).
    const otherKey = `0x${"5a".repeat(32)}`;
    const outcomes = await Promise.allSettled([node.client.personal_importRawKey(otherKey, "a"), node.client.personal_importRawKey(otherKey, "b")]);
    expect(outcomes.map((outcome) => outcome.status).sort()).to.deep.equal(["fulfilled", "rejected"]);

    const before = await node.client.personal_listAccounts();
    await expectRpcError(node.client.personal_importRawKey(`0x${"00".repeat(32)}`, "pw"), -32602, "invalid argument 0: invalid private key");
    // The secp256k1 order n: not a key.
    await expectRpcError(node.client.personal_importRawKey("0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", "pw"), -32602, "invalid argument 0: invalid private key");
    await expectRpcError(rawCall(node.client, "personal_importRawKey", "0x1234", "pw"), -32602, /invalid argument 0/);
    await expectRpcError(rawCall(node.client, "personal_importRawKey", importedKey), -32602, /missing value for required argument 1|invalid/i);
    expect(await node.client.personal_listAccounts()).to.deep.equal(before);
  });

  it("unlockAccount: a wrong passphrase answers WrongPassphrase and never unlocks; the right one does", async () => {
    const address = await node.client.personal_importRawKey(importedKey, passphrase);
    expect(await node.client.personal_lockAccount(address)).to.equal(true);
    for (const wrong of ["", "correct horse battery stapl", passphrase.toUpperCase()]) {
      await expectRpcError(node.client.personal_unlockAccount(address, wrong), -32000, "could not decrypt key with given passphrase");
      await expectRpcError(node.client.personal_dumpRawKey(address), -32002, `account ${address} is locked`);
    }
    const unlocked = await node.client.personal_unlockAccount(address, passphrase);
    expectValidResult("personal_unlockAccount", unlocked);
    expect(unlocked).to.equal(true);
    expect(await node.client.personal_dumpRawKey(address)).to.equal(importedKey);
    // A wrong passphrase on an unlocked account leaves it unlocked (it changes nothing).
    await expectRpcError(node.client.personal_unlockAccount(address, "nope", "0x0"), -32000, "could not decrypt key with given passphrase");
    expect(await node.client.personal_dumpRawKey(address)).to.equal(importedKey);
  });

  it("unlockAccount answers false for an address without a key-store file (unknown, development or seed account)", async () => {
    const seeded = await node.client.personal_newAccountWithSeed("a seed");
    for (const address of [stranger, cow, seeded]) expect(await node.client.personal_unlockAccount(address, passphrase)).to.equal(false);
    await expectRpcError(node.client.personal_dumpRawKey(stranger), -32001, `unknown account ${stranger}`);
  });

  it("an unlock expires after its duration in hex milliseconds; \"\" and no duration mean 30 minutes", async () => {
    const address = await node.client.personal_importRawKey(importedKey, passphrase);
    expect(await node.client.personal_unlockAccount(address, passphrase, "0x190")).to.equal(true); // 400 ms
    expect(await node.client.personal_dumpRawKey(address)).to.equal(importedKey);
    await sleep(600);
    await expectRpcError(node.client.personal_dumpRawKey(address), -32002, `account ${address} is locked`);
    await expectRpcError(node.client.eth_sendTransaction({ from: address, to: recipient }), -32602, `Could not find account for address: ${address}`);
    expect(await node.client.personal_lockAccount(address)).to.equal(false);

    for (const duration of ["", undefined]) {
      const params: unknown[] = duration === undefined ? [address, passphrase] : [address, passphrase, duration];
      expect(await rawCall(node.client, "personal_unlockAccount", ...params)).to.equal(true);
      await sleep(600);
      expect(await node.client.personal_dumpRawKey(address)).to.equal(importedKey);
      expect(await node.client.personal_lockAccount(address)).to.equal(true);
    }
    await expectRpcError(rawCall(node.client, "personal_unlockAccount", address, passphrase, "300"), -32602, /invalid argument 2/);
    await expectRpcError(rawCall(node.client, "personal_unlockAccount", address, passphrase, 300), -32602, /invalid argument 2/);
  });

  it("lockAccount drops the key: dumpRawKey and eth_sendTransaction refuse it until it is unlocked again", async () => {
    const address = await node.client.personal_importRawKey(importedKey, passphrase);
    await node.client.eth_sendTransaction({ from: cow, to: address, value: "0xde0b6b3a7640000" });
    expect(await node.client.personal_lockAccount(address)).to.equal(true);
    expect(await node.client.personal_lockAccount(address)).to.equal(false);
    expect(await node.client.personal_lockAccount(stranger)).to.equal(false);
    await expectRpcError(node.client.personal_dumpRawKey(address), -32002, `account ${address} is locked`);
    const blockBefore = await node.client.eth_blockNumber();
    await expectRpcError(node.client.eth_sendTransaction({ from: address, to: recipient, value: "0x1" }), -32602, `Could not find account for address: ${address}`);
    expect(await node.client.eth_blockNumber()).to.equal(blockBefore);

    expect(await node.client.personal_unlockAccount(address, passphrase)).to.equal(true);
    const hash = await node.client.eth_sendTransaction({ from: address, to: recipient, value: "0x1" });
    const receipt = await node.client.eth_getTransactionReceipt(hash);
    expect(receipt!.from).to.equal(address);
    expect(receipt!.status).to.equal("0x1");
    expect(await node.client.eth_getBalance(recipient, "latest")).to.equal("0x1");
  });

  it("sendTransaction signs with the passphrase without unlocking, mined under automine with the right sender", async () => {
    const address = await node.client.personal_newAccount(passphrase);
    await node.client.eth_sendTransaction({ from: cow, to: address, value: "0xde0b6b3a7640000" });
    expect(await node.client.personal_lockAccount(address)).to.equal(true);

    const hash = await node.client.personal_sendTransaction({ from: address, to: recipient, value: "0x2a", gas: "0x5208" }, passphrase);
    expectValidResult("personal_sendTransaction", hash);
    const transaction = await node.client.eth_getTransactionByHash(hash);
    expect(transaction!.from).to.equal(address);
    expect(transaction!.blockNumber).to.not.equal(null);
    expect(transaction!.gas).to.equal("0x5208");
    expect((await node.client.eth_getTransactionReceipt(hash))!.status).to.equal("0x1");
    expect(await node.client.eth_getBalance(recipient, "latest")).to.equal("0x2a");
    // Still locked: the passphrase opened the key for this transaction only.
    await expectRpcError(node.client.personal_dumpRawKey(address), -32002, `account ${address} is locked`);
    // Defaults as eth_sendTransaction: gas 90000, next nonce.
    const second = await node.client.personal_sendTransaction({ from: address, to: recipient }, passphrase);
    const secondTransaction = await node.client.eth_getTransactionByHash(second);
    expect(secondTransaction!.gas).to.equal("0x15f90");
    expect(secondTransaction!.nonce).to.equal("0x1");
  });

  it("sendTransaction refuses a wrong passphrase, accounts without a key file and bad submissions, sending nothing", async () => {
    const address = await node.client.personal_importRawKey(importedKey, passphrase);
    await node.client.eth_sendTransaction({ from: cow, to: address, value: "0xde0b6b3a7640000" });
    const blockBefore = await node.client.eth_blockNumber();
    await expectRpcError(node.client.personal_sendTransaction({ from: address, to: recipient, value: "0x1" }, "wrong"), -32000, "could not decrypt key with given passphrase");
    const seeded = await node.client.personal_newAccountWithSeed("seed for sending");
    for (const from of [cow, seeded, stranger]) {
      await expectRpcError(node.client.personal_sendTransaction({ from, to: recipient, value: "0x1" }, passphrase), -32001, `unknown account ${from}`);
    }
    await expectRpcError(
      node.client.personal_sendTransaction({ from: address, to: recipient, data: "0x01", input: "0x02" }, passphrase),
      -32602,
      'invalid argument 0: "data" and "input" are both given and differ',
    );
    // The pool's verdict, verbatim: more than the account holds.
    await expectRpcError(node.client.personal_sendTransaction({ from: address, to: recipient, value: "0xde0b6b3a7640001" }, passphrase), -32010, "insufficient funds");
    await expectRpcError(rawCall(node.client, "personal_sendTransaction", { from: address, to: recipient }), -32602, /argument 1/);
    expect(await node.client.eth_blockNumber()).to.equal(blockBefore);
    expect(await node.client.eth_getTransactionCount(address, "latest")).to.equal("0x0");
  });

  it("newAccountWithSeed: key = keccak256(seed), in memory, never expiring, listed with the in-memory accounts before key-store ones", async () => {
    const development = await developmentAccounts(node.client);
    const stored = await node.client.personal_newAccount(passphrase);
    const seeded = await node.client.personal_newAccountWithSeed("my seed");
    expectValidResult("personal_newAccountWithSeed", seeded);
    const expectedKey = new EthersWallet(`0x${Buffer.from(keccakOf("my seed")).toString("hex")}`);
    expect(seeded).to.equal(expectedKey.address.toLowerCase());
    expect(await node.client.personal_dumpRawKey(seeded)).to.equal(expectedKey.privateKey);
    expect(await node.client.personal_newAccountWithSeed("cow")).to.equal(cow);
    expect(await node.client.personal_listAccounts()).to.deep.equal([...development, seeded, stored]);
    // Usable for eth_sendTransaction once funded; locking makes it unusable (no key-store copy).
    await node.client.eth_sendTransaction({ from: cow, to: seeded, value: "0xde0b6b3a7640000" });
    await node.client.eth_sendTransaction({ from: seeded, to: recipient, value: "0x1" });
    expect(await node.client.personal_lockAccount(seeded)).to.equal(true);
    await expectRpcError(node.client.personal_dumpRawKey(seeded), -32002, `account ${seeded} is locked`);
    expect(await node.client.personal_listAccounts()).to.include(seeded);
  });

  it("logs no passphrase and no private key", async () => {
    const secret = "a passphrase that must not be logged";
    const address = await node.client.personal_importRawKey(importedKey, secret);
    await expectRpcError(node.client.personal_unlockAccount(address, `${secret}!`), -32000, "could not decrypt key with given passphrase");
    await node.client.personal_unlockAccount(address, secret);
    await node.client.personal_dumpRawKey(address);
    await node.client.personal_sendTransaction({ from: address, to: recipient }, `${secret}?`).catch(() => undefined);
    const logged = JSON.stringify(node.logs);
    expect(node.logs.length).to.be.greaterThan(0);
    expect(logged).to.not.include(secret);
    expect(logged.toLowerCase()).to.not.include(importedKey.slice(2));
  });

  it("keeps keys in memory only when the node has no data directory", async () => {
    const address = await node.client.personal_importRawKey(importedKey, passphrase);
    expect(node.logs.some((record) => record.msg === "key store opened" && record.keyStore === "memory")).to.equal(true);
    await node.stop();
    node = await startTestNode();
    expect(await node.client.personal_listAccounts()).to.not.include(address);
    expect(await node.client.personal_unlockAccount(address, passphrase)).to.equal(false);
  });
});

function keccakOf(text: string): Uint8Array {
  return Buffer.from(ethersKeccak(toUtf8Bytes(text)).slice(2), "hex");
}

describe("personal_ accounts with a data directory", function () {
  this.timeout(60_000);
  let directory: string;
  let node: TestNode | undefined;
  beforeEach(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-personal-"))));
  afterEach(async () => {
    await node?.stop();
    node = undefined;
    await rm(directory, { recursive: true, force: true });
  });

  it("says why a key store it cannot use fails, instead of an internal error", async () => {
    node = await startTestNode({ dataDir: directory });
    const keystore = join(directory, "keystore");
    await rm(keystore, { recursive: true, force: true });
    await writeFile(keystore, "a file where the key store should be");
    await expectRpcError(node.client.personal_newAccount("pw"), -32000, new RegExp(`^cannot write to the key store ${keystore}: EEXIST`));
    await expectRpcError(node.client.eth_accounts(), -32000, new RegExp(`^cannot read the key store ${keystore}: ENOTDIR`));
    await expectRpcError(node.client.personal_listAccounts(), -32000, new RegExp(`^cannot read the key store ${keystore}: ENOTDIR`));
  });

  it("writes one 0600 v3 file per key under <data dir>/keystore that ethers opens, kept (locked) across restarts", async () => {
    node = await startTestNode({ dataDir: directory });
    const created = await node.client.personal_newAccount("pw one");
    const imported = await node.client.personal_importRawKey(importedKey, passphrase);
    const keystore = join(directory, "keystore");
    expect((await stat(keystore)).mode & 0o777).to.equal(0o700);
    const names = await readdir(keystore);
    expect(names).to.have.length(2);
    for (const name of names) expect((await stat(join(keystore, name))).mode & 0o777).to.equal(0o600);
    const importedFile = names.find((name) => name.endsWith(imported.slice(2)))!;
    const opened = await EthersWallet.fromEncryptedJson(await readFile(join(keystore, importedFile), "utf8"), passphrase);
    expect(opened.privateKey).to.equal(importedKey);
    await node.stop();

    node = await startTestNode({ dataDir: directory });
    const listed = await node.client.personal_listAccounts();
    expect(listed.slice(11)).to.have.members([created, imported]);
    expect(await node.client.eth_accounts()).to.deep.equal(listed);
    // Unlocks do not survive a restart.
    await expectRpcError(node.client.personal_dumpRawKey(imported), -32002, `account ${imported} is locked`);
    expect(await node.client.personal_unlockAccount(created, "pw one")).to.equal(true);
    expect(computeAddress(await node.client.personal_dumpRawKey(created)).toLowerCase()).to.equal(created);
  });

  it("uses a file ethers wrote, copied into the key-store folder while the node runs, and reports a broken one", async () => {
    node = await startTestNode({ dataDir: directory });
    await node.client.personal_newAccount("makes the folder");
    const outside = EthersWallet.createRandom();
    const address = outside.address.toLowerCase();
    expect(await node.client.personal_unlockAccount(address, "outside")).to.equal(false);
    await writeFile(join(directory, "keystore", "from-ethers.json"), await ethersKeyFile(outside, "outside"));
    await writeFile(join(directory, "keystore", "broken.json"), "{ not json");
    expect(await node.client.personal_listAccounts()).to.include(address);
    await expectRpcError(node.client.personal_unlockAccount(address, "inside"), -32000, "could not decrypt key with given passphrase");
    expect(await node.client.personal_unlockAccount(address, "outside")).to.equal(true);
    expect(await node.client.personal_dumpRawKey(address)).to.equal(outside.privateKey);
    await node.client.eth_sendTransaction({ from: cow, to: address, value: "0xde0b6b3a7640000" });
    const hash = await node.client.personal_sendTransaction({ from: address, to: recipient, value: "0x5" }, "outside");
    expect((await node.client.eth_getTransactionReceipt(hash))!.from).to.equal(address);
    expect(node.logs.filter((record) => record.msg === "key file ignored").map((record) => record.file)).to.deep.equal(["broken.json"]);
  });

  it("writes light scrypt parameters by default and geth's standard ones with keyStoreKdf standard", async () => {
    for (const [kdf, n] of [["light", 1 << 14], ["standard", 1 << 18]] as const) {
      node = await startTestNode({ dataDir: join(directory, kdf), chain: { keyStoreKdf: kdf } });
      const address = await node.client.personal_newAccount("pw");
      const [name] = await readdir(join(directory, kdf, "keystore"));
      const file = JSON.parse(await readFile(join(directory, kdf, "keystore", name!), "utf8")) as { crypto: { kdfparams: { n: number; r: number; p: number } } };
      expect(file.crypto.kdfparams).to.include({ n, r: 8, p: 1 });
      expect(await node.client.personal_lockAccount(address)).to.equal(true);
      expect(await node.client.personal_unlockAccount(address, "pw")).to.equal(true);
      await node.stop();
      node = undefined;
    }
  });

  it("answers KeyFileInvalid for a key file whose key does not match its address", async () => {
    node = await startTestNode({ dataDir: directory });
    await node.client.personal_newAccount("makes the folder");
    const liar = JSON.parse(await ethersKeyFile(EthersWallet.createRandom(), "pw")) as { address: string };
    liar.address = stranger.slice(2);
    await writeFile(join(directory, "keystore", "liar.json"), JSON.stringify(liar));
    await expectRpcError(node.client.personal_unlockAccount(stranger, "pw"), -32000, "invalid key file: the key does not belong to the file's address");
    await expectRpcError(node.client.personal_dumpRawKey(stranger), -32002, `account ${stranger} is locked`);
  });
});
