// Key files in the Web3 Secret Storage v3 format: what this node writes opens in ethers, what
// ethers writes opens here, the published test vectors decrypt, a wrong passphrase is told apart by
// the MAC, and a key-store directory is written atomically with private file modes.
import { expect } from "chai";
import { encryptKeystoreJson, Wallet as EthersWallet } from "ethers";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  decryptKey,
  DirectoryKeyStorage,
  maxKeyFileBytes,
  encryptKey,
  keystoreAddress,
  KeystoreFormatError,
  lightScrypt,
  WrongPassphraseError,
  type KeystoreV3,
} from "../../../src/accounts/keystore.js";

const privateKeyHex = "0c06818f82e04c564290b32ab86b25676731fc34e9a546108bf109194c8e3aae";
const privateKey = new Uint8Array(Buffer.from(privateKeyHex, "hex"));
const address = "7986b3df570230288501eea3d890bd66948c9b79";
const addressBytes = new Uint8Array(Buffer.from(address, "hex"));

/** Web3 Secret Storage definition's test vectors (password "testpassword"). */
const specPrivateKey = "7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d";
const specScryptVector = {
  crypto: {
    cipher: "aes-128-ctr",
    cipherparams: { iv: "83dbcc02d8ccb40e466191a123791e0e" },
    ciphertext: "d172bf743a674da9cdad04534d56926ef8358534d458fffccd4e6ad2fbde479c",
    kdf: "scrypt",
    kdfparams: { dklen: 32, n: 262144, p: 8, r: 1, salt: "ab0c7876052600dd703518d6fc3fe8984592145b591fc8fb5c6d43190334ba19" },
    mac: "2103ac29920d71da29f15d75b4a16dbe95cfd7ff8faea1056c33131d846e3097",
  },
  id: "3198bc9c-6672-5ab3-d995-4942343ae5b6",
  version: 3,
};
const specPbkdf2Vector = {
  crypto: {
    cipher: "aes-128-ctr",
    cipherparams: { iv: "6087dab2f9fdbbfaddc31a909735c1e6" },
    ciphertext: "5318b4d5bcd28de64ee5559e671353e16f075ecae9f99c7a79a38af5f869aa46",
    kdf: "pbkdf2",
    kdfparams: { c: 262144, dklen: 32, prf: "hmac-sha256", salt: "ae3cd4e7013836a3df6bd7241b12db061dbe2c6785853cce422d148a624ce0bd" },
    mac: "517ead924a9d0dc3124507e3393d175ce3ff7c1e96529c6c555ce9e51205e9b2",
  },
  id: "3198bc9c-6672-5ab3-d995-4942343ae5b6",
  version: 3,
};

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

async function expectRejection(promise: Promise<unknown>, type: new (...args: never[]) => Error): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(type);
    return error as Error;
  }
  expect.fail("resolved");
}

describe("accounts: v3 key files", function () {
  this.timeout(20_000);

  it("writes files ethers' Wallet.fromEncryptedJson opens, with the light scrypt parameters and fresh salt and IV", async () => {
    const file = await encryptKey(privateKey, addressBytes, "correct horse battery staple");
    expect(file.version).to.equal(3);
    expect(file.address).to.equal(address);
    expect(file.crypto.cipher).to.equal("aes-128-ctr");
    expect(file.crypto.kdfparams).to.include({ n: lightScrypt.n, r: lightScrypt.r, p: lightScrypt.p, dklen: 32 });
    expect(file.crypto.kdfparams.salt).to.match(/^[0-9a-f]{64}$/);
    expect(file.crypto.cipherparams.iv).to.match(/^[0-9a-f]{32}$/);
    const opened = await EthersWallet.fromEncryptedJson(JSON.stringify(file), "correct horse battery staple");
    expect(opened.privateKey).to.equal(`0x${privateKeyHex}`);
    expect(opened.address.toLowerCase()).to.equal(`0x${address}`);

    const second = await encryptKey(privateKey, addressBytes, "correct horse battery staple");
    expect(second.crypto.kdfparams.salt).to.not.equal(file.crypto.kdfparams.salt);
    expect(second.crypto.cipherparams.iv).to.not.equal(file.crypto.cipherparams.iv);
    expect(second.crypto.ciphertext).to.not.equal(file.crypto.ciphertext);
  });

  it("opens files ethers' encrypt writes (its own scrypt parameters, the Crypto spelling)", async () => {
    const json = await encryptKeystoreJson(new EthersWallet(`0x${privateKeyHex}`), "from ethers", { scrypt: { N: 1 << 12 } });
    const file = JSON.parse(json) as unknown;
    expect(keystoreAddress(file)).to.equal(address);
    expect(hex(await decryptKey(file, "from ethers"))).to.equal(privateKeyHex);
    await expectRejection(decryptKey(file, "From ethers"), WrongPassphraseError);
  });

  it("decrypts the Web3 Secret Storage test vectors (scrypt n=2^18 and pbkdf2 c=2^18)", async () => {
    expect(hex(await decryptKey(specScryptVector, "testpassword"))).to.equal(specPrivateKey);
    expect(hex(await decryptKey(specPbkdf2Vector, "testpassword"))).to.equal(specPrivateKey);
  });

  it("tells a wrong passphrase by the MAC, with a message that names no secret", async () => {
    const file = await encryptKey(privateKey, addressBytes, "right");
    const error = await expectRejection(decryptKey(file, "wrong"), WrongPassphraseError);
    expect(error.message).to.equal("could not decrypt key with given passphrase");
    // A flipped ciphertext byte fails the MAC too, rather than giving a different key.
    const tampered = structuredClone(file);
    tampered.crypto.ciphertext = (tampered.crypto.ciphertext[0] === "0" ? "1" : "0") + tampered.crypto.ciphertext.slice(1);
    await expectRejection(decryptKey(tampered, "right"), WrongPassphraseError);
  });

  it("refuses malformed files with the field at fault", async () => {
    const file = await encryptKey(privateKey, addressBytes, "pw");
    const cases: [unknown, RegExp][] = [
      [null, /not a JSON object/],
      [{ ...file, version: 1 }, /version is not 3/],
      [{ ...file, crypto: { ...file.crypto, cipher: "aes-128-cbc" } }, /cipher/],
      [{ ...file, crypto: { ...file.crypto, kdf: "argon2" } }, /kdf is neither/],
      [{ ...file, crypto: { ...file.crypto, mac: "zz" } }, /mac is not hex/],
      [{ ...file, crypto: { ...file.crypto, kdfparams: { ...file.crypto.kdfparams, n: 1000 } } }, /power of two/],
      [{ ...file, crypto: { ...file.crypto, kdfparams: { ...file.crypto.kdfparams, n: 1 << 22 } } }, /1 GiB/],
      [{ ...file, crypto: { ...file.crypto, kdfparams: { ...file.crypto.kdfparams, n: 1 << 14, p: 5_000 } } }, /8 times geth's standard scrypt work/],
      [{ ...specPbkdf2Vector, crypto: { ...specPbkdf2Vector.crypto, kdfparams: { ...specPbkdf2Vector.crypto.kdfparams, c: 20_000_000 } } }, /10,000,000 rounds/],
    ];
    for (const [broken, reason] of cases) {
      const error = await expectRejection(decryptKey(broken, "pw"), KeystoreFormatError);
      expect(error.message).to.match(reason);
    }
    expect(() => keystoreAddress({ ...file, address: "0x1234" })).to.throw(KeystoreFormatError, /address/);
  });
});

describe("accounts: key-store directory", function () {
  this.timeout(20_000);
  let directory: string;
  let ignored: string[];
  let storage: DirectoryKeyStorage;
  beforeEach(async () => {
    directory = join(await mkdtemp(join(tmpdir(), "chain-node-keystore-")), "keystore");
    ignored = [];
    storage = new DirectoryKeyStorage(directory, (file, reason) => ignored.push(`${file}: ${reason}`));
  });
  afterEach(() => rm(join(directory, ".."), { recursive: true, force: true }));

  it("is empty before its folder exists, then writes one 0600 file per key in a 0700 folder, no temp file left", async () => {
    expect(await storage.addresses()).to.deep.equal([]);
    const file = await encryptKey(privateKey, addressBytes, "pw");
    await storage.write(file);
    expect((await stat(directory)).mode & 0o777).to.equal(0o700);
    const names = await readdir(directory);
    expect(names).to.have.length(1);
    expect(names[0]).to.match(new RegExp(`^UTC--\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d\\.\\d{3}Z--${address}$`));
    expect((await stat(join(directory, names[0]!))).mode & 0o777).to.equal(0o600);
    expect(JSON.parse(await readFile(join(directory, names[0]!), "utf8"))).to.deep.equal(file);
    expect(await storage.addresses()).to.deep.equal([address]);
    expect(await storage.filesFor(address)).to.deep.equal([file]);
    expect(await storage.filesFor("00".repeat(20))).to.deep.equal([]);
  });

  it("deletes only its own unfinished writes' temp files: regular files named .<uuid>.tmp", async () => {
    expect(await storage.removeUnfinishedWrites(), "no folder yet").to.deep.equal([]);
    const file = await encryptKey(privateKey, addressBytes, "pw");
    await storage.write(file);
    const [keyFile] = await readdir(directory);
    const leftovers = [".0f8e2f4c-3a8b-4c1e-9d2a-5b7e6f1a2c3d.tmp", ".a1b2c3d4-e5f6-4789-abcd-ef0123456789.tmp"];
    await writeFile(join(directory, leftovers[0]!), "");
    await writeFile(join(directory, leftovers[1]!), JSON.stringify(file).slice(0, 100));
    // Not the node's: other names, a folder and a link named as the node names temp files.
    const kept = [".half-written.tmp", "backup.tmp", ".0F8E2F4C-3A8B-4C1E-9D2A-5B7E6F1A2C3D.tmp", ".11111111-2222-3333-4444-555555555555.tmp.json"];
    for (const name of kept) await writeFile(join(directory, name), "a user's file");
    await mkdir(join(directory, ".22222222-2222-3333-4444-555555555555.tmp"));
    await symlink(join(directory, keyFile!), join(directory, ".33333333-2222-3333-4444-555555555555.tmp"));

    expect((await storage.removeUnfinishedWrites()).sort()).to.deep.equal([...leftovers].sort());
    expect((await readdir(directory)).sort()).to.deep.equal([keyFile!, ...kept, ".22222222-2222-3333-4444-555555555555.tmp", ".33333333-2222-3333-4444-555555555555.tmp"].sort());
    expect(await storage.filesFor(address)).to.deep.equal([file]);
  });

  it("tells when other users can reach its folder", async () => {
    expect(await storage.looseAccess(), "absent").to.equal(undefined);
    await storage.write(await encryptKey(privateKey, addressBytes, "pw"));
    expect(await storage.looseAccess(), "made by the node").to.equal(undefined);
    await chmod(directory, 0o755);
    expect(await storage.looseAccess()).to.equal(0o755);
    await chmod(directory, 0o700);
  });

  it("picks up files copied in while it is open, skips broken ones (reported once) and unfinished writes", async () => {
    await storage.write(await encryptKey(privateKey, addressBytes, "pw"));
    const other = new EthersWallet(`0x${"11".repeat(32)}`);
    await writeFile(join(directory, "copied-by-hand.json"), await encryptKeystoreJson(other, "x", { scrypt: { N: 1 << 10 } }));
    await writeFile(join(directory, "notes.txt"), "not a key");
    await writeFile(join(directory, ".half-written.tmp"), "{");
    expect(await storage.addresses()).to.have.members([address, other.address.slice(2).toLowerCase()]);
    expect(await storage.addresses()).to.have.length(2);
    expect(ignored).to.deep.equal(["notes.txt: not JSON"]);

    await writeFile(join(directory, "notes.txt"), JSON.stringify({ version: 2 }));
    await storage.addresses();
    expect(ignored).to.have.length(2);
    expect(ignored[1]).to.equal("notes.txt: invalid key file: version is not 3");

    await rm(join(directory, "copied-by-hand.json"));
    expect(await storage.addresses()).to.deep.equal([address]);
  });

  it("reports and never reads a file too big to be a key file", async () => {
    await storage.write(await encryptKey(privateKey, addressBytes, "pw"));
    await writeFile(join(directory, "huge.json"), Buffer.alloc(maxKeyFileBytes + 1, 0x20));
    expect(await storage.addresses()).to.deep.equal([address]);
    expect(ignored).to.deep.equal([`huge.json: larger than ${maxKeyFileBytes} bytes: not a key file`]);
    await storage.addresses();
    expect(ignored, "reported once").to.have.length(1);
  });

  it("keeps both files when two writes for different keys run at once", async () => {
    const files: KeystoreV3[] = await Promise.all(
      ["22", "33", "44"].map((byte) => {
        const key = new EthersWallet(`0x${byte.repeat(32)}`);
        return encryptKey(Buffer.from(key.privateKey.slice(2), "hex"), Buffer.from(key.address.slice(2), "hex"), "pw");
      }),
    );
    await Promise.all(files.map((file) => storage.write(file)));
    expect(await storage.addresses()).to.have.members(files.map((file) => file.address));
    expect((await readdir(directory)).filter((name) => name.startsWith("."))).to.deep.equal([]);
  });
});
