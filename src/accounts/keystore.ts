// Encrypted private keys in the Web3 Secret Storage v3 format (geth's keystore files): the key is
// encrypted with AES-128-CTR under the first half of a key derived from the passphrase (scrypt,
// or pbkdf2-sha256 on import), and keccak-256(second half || ciphertext) is the MAC that tells a
// wrong passphrase apart. Two homes for the files: a directory (one file per key, written
// atomically, mode 0600, rescanned on use so files copied in by hand are picked up) or memory (a
// node without a data directory).
import { createCipheriv, createDecipheriv, pbkdf2, randomBytes, randomUUID, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { lstat, mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { scryptAsync as portableScrypt } from "@noble/hashes/scrypt.js";
import { keccak256 } from "../common/crypto.js";

/** scrypt cost of the keys this node writes. */
export interface ScryptParameters {
  readonly n: number;
  readonly r: number;
  readonly p: number;
}

/** geth's standard parameters: about 1.9 s per derivation on a 2-core development machine. */
export const standardScrypt: ScryptParameters = { n: 1 << 18, r: 8, p: 1 };
/** The node's default for keys it writes: 2^14 (about 0.1 s), as light clients do. Files with any parameters are read. */
export const lightScrypt: ScryptParameters = { n: 1 << 14, r: 8, p: 1 };

/** The cap on scrypt memory (128 * n * r bytes) a file may ask for when it is decrypted. */
const maxScryptMemoryBytes = 1 << 30;
/**
 * The cap on scrypt work (n * r * p, which the time of a derivation follows) a file may ask for:
 * 8 times geth's standard (about 15 s here). A file asking for p = 5,000 at n = 2^14 held the
 * key store for minutes and kept the node from stopping.
 */
const maxScryptWork = 8 * standardScrypt.n * standardScrypt.r * standardScrypt.p;
const derivedKeyLength = 32;
/** The cap on pbkdf2 rounds a file may ask for (geth writes 262,144). */
const maxPbkdf2Rounds = 10_000_000;

/** A v3 key file as JSON. Readers also accept "Crypto" (ethers and old Mist files). */
export interface KeystoreV3 {
  version: 3;
  id: string;
  /** Lower-case hex without 0x. */
  address: string;
  crypto: {
    cipher: "aes-128-ctr";
    cipherparams: { iv: string };
    ciphertext: string;
    kdf: "scrypt" | "pbkdf2";
    kdfparams: Record<string, unknown>;
    mac: string;
  };
}

/** The passphrase does not open the key (MAC mismatch). The message names no secret. */
export class WrongPassphraseError extends Error {
  constructor() {
    super("could not decrypt key with given passphrase");
    this.name = "WrongPassphraseError";
  }
}

/** A file that is not a usable v3 key file; the reason names the field, never a secret. */
export class KeystoreFormatError extends Error {
  constructor(reason: string) {
    super(`invalid key file: ${reason}`);
    this.name = "KeystoreFormatError";
  }
}

/** The key-store directory cannot be read or written (permissions, a full or read-only disk). */
export class KeyStoreAccessError extends Error {
  constructor(action: "read" | "write to", location: string, cause: Error) {
    super(`cannot ${action} the key store ${location}: ${cause.message}`);
    this.name = "KeyStoreAccessError";
  }
}

/** A file bigger than this in the key-store directory is no key file (they are about 500 bytes). */
export const maxKeyFileBytes = 64 * 1024;

function scryptAsync(passphrase: Buffer, salt: Buffer, length: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(passphrase, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/**
 * scrypt for any parameters a file may carry. OpenSSL (node:crypto, native, off the event loop)
 * enforces RFC 7914's n < 2^(16 r), which the Web3 Secret Storage test vector itself breaks
 * (n = 2^18 with r = 1); such files go to the JavaScript implementation, which yields between rounds.
 */
async function scryptAnyParameters(passphrase: Buffer, salt: Buffer, length: number, n: number, r: number, p: number): Promise<Buffer> {
  if (16 * r >= 53 || n < 2 ** (16 * r)) return scryptAsync(passphrase, salt, length, scryptOptions(n, r, p));
  return Buffer.from(await portableScrypt(passphrase, salt, { N: n, r, p, dkLen: length, maxmem: maxScryptMemoryBytes + (1 << 20) }));
}

function pbkdf2Async(passphrase: Buffer, salt: Buffer, iterations: number, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => pbkdf2(passphrase, salt, iterations, length, "sha256", (error, key) => (error ? reject(error) : resolve(key))));
}

function scryptOptions(n: number, r: number, p: number): ScryptOptions {
  return { N: n, r, p, maxmem: 128 * n * r + 128 * r * p + (1 << 20) };
}

function macOf(derivedKey: Uint8Array, ciphertext: Uint8Array): Buffer {
  const input = new Uint8Array(16 + ciphertext.length);
  input.set(derivedKey.subarray(16, 32), 0);
  input.set(ciphertext, 16);
  return Buffer.from(keccak256(input));
}

function aes128Ctr(key: Uint8Array, iv: Uint8Array, input: Uint8Array, direction: "encrypt" | "decrypt"): Buffer {
  const cipher = direction === "encrypt" ? createCipheriv("aes-128-ctr", key, iv) : createDecipheriv("aes-128-ctr", key, iv);
  return Buffer.concat([cipher.update(input), cipher.final()]);
}

/** Encrypts `privateKey` (32 bytes) for `address` (20 bytes) with a fresh salt and IV. */
export async function encryptKey(privateKey: Uint8Array, address: Uint8Array, passphrase: string, parameters: ScryptParameters = lightScrypt): Promise<KeystoreV3> {
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const derivedKey = await scryptAsync(Buffer.from(passphrase, "utf8"), salt, derivedKeyLength, scryptOptions(parameters.n, parameters.r, parameters.p));
  const ciphertext = aes128Ctr(derivedKey.subarray(0, 16), iv, privateKey, "encrypt");
  return {
    version: 3,
    id: randomUUID(),
    address: Buffer.from(address).toString("hex"),
    crypto: {
      cipher: "aes-128-ctr",
      cipherparams: { iv: iv.toString("hex") },
      ciphertext: ciphertext.toString("hex"),
      kdf: "scrypt",
      kdfparams: { dklen: derivedKeyLength, n: parameters.n, r: parameters.r, p: parameters.p, salt: salt.toString("hex") },
      mac: macOf(derivedKey, ciphertext).toString("hex"),
    },
  };
}

function hexField(value: unknown, name: string): Buffer {
  if (typeof value !== "string") throw new KeystoreFormatError(`${name} is not a string`);
  const digits = value.startsWith("0x") ? value.slice(2) : value;
  if (!/^([0-9a-fA-F]{2})*$/.test(digits)) throw new KeystoreFormatError(`${name} is not hex`);
  return Buffer.from(digits, "hex");
}

function positiveInteger(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) throw new KeystoreFormatError(`${name} is not a positive integer`);
  return value;
}

function cryptoSection(file: unknown): Record<string, unknown> {
  if (typeof file !== "object" || file === null) throw new KeystoreFormatError("not a JSON object");
  const document = file as Record<string, unknown>;
  if (document.version !== 3) throw new KeystoreFormatError("version is not 3");
  const section = document.crypto ?? document.Crypto;
  if (typeof section !== "object" || section === null) throw new KeystoreFormatError("crypto section missing");
  return section as Record<string, unknown>;
}

/** The address a key file names (lower-case hex without 0x), or a KeystoreFormatError. */
export function keystoreAddress(file: unknown): string {
  cryptoSection(file);
  const address = (file as Record<string, unknown>).address;
  if (typeof address !== "string" || !/^(0x)?[0-9a-fA-F]{40}$/.test(address)) throw new KeystoreFormatError("address missing or malformed");
  return address.replace(/^0x/, "").toLowerCase();
}

async function deriveKey(kdf: unknown, parameters: Record<string, unknown>, passphrase: Buffer): Promise<Buffer> {
  const salt = hexField(parameters.salt, "kdfparams.salt");
  const length = positiveInteger(parameters.dklen, "kdfparams.dklen");
  if (length < 32) throw new KeystoreFormatError("kdfparams.dklen is below 32");
  if (kdf === "scrypt") {
    const n = positiveInteger(parameters.n, "kdfparams.n");
    const r = positiveInteger(parameters.r, "kdfparams.r");
    const p = positiveInteger(parameters.p, "kdfparams.p");
    if ((n & (n - 1)) !== 0 || n < 2) throw new KeystoreFormatError("kdfparams.n is not a power of two");
    if (128 * n * r > maxScryptMemoryBytes) throw new KeystoreFormatError("kdfparams ask for more than 1 GiB of scrypt memory");
    if (n * r * p > maxScryptWork) throw new KeystoreFormatError("kdfparams ask for more than 8 times geth's standard scrypt work (n * r * p)");
    return scryptAnyParameters(passphrase, salt, length, n, r, p);
  }
  if (kdf === "pbkdf2") {
    if (parameters.prf !== "hmac-sha256") throw new KeystoreFormatError("kdfparams.prf is not hmac-sha256");
    const rounds = positiveInteger(parameters.c, "kdfparams.c");
    if (rounds > maxPbkdf2Rounds) throw new KeystoreFormatError("kdfparams.c is above 10,000,000 rounds");
    return pbkdf2Async(passphrase, salt, rounds, length);
  }
  throw new KeystoreFormatError("kdf is neither scrypt nor pbkdf2");
}

/** The private key in a v3 key file; WrongPassphraseError when the MAC does not match. */
export async function decryptKey(file: unknown, passphrase: string): Promise<Uint8Array> {
  const section = cryptoSection(file);
  if (section.cipher !== "aes-128-ctr") throw new KeystoreFormatError("cipher is not aes-128-ctr");
  const cipherParameters = section.cipherparams as Record<string, unknown> | undefined;
  const iv = hexField(cipherParameters?.iv, "cipherparams.iv");
  if (iv.length === 0 || iv.length > 16) throw new KeystoreFormatError("cipherparams.iv is not 1 to 16 bytes");
  const ciphertext = hexField(section.ciphertext, "ciphertext");
  const mac = hexField(section.mac, "mac");
  const kdfParameters = section.kdfparams;
  if (typeof kdfParameters !== "object" || kdfParameters === null) throw new KeystoreFormatError("kdfparams missing");
  const derivedKey = await deriveKey(section.kdf, kdfParameters as Record<string, unknown>, Buffer.from(passphrase, "utf8"));
  const expectedMac = macOf(derivedKey, ciphertext);
  if (mac.length !== expectedMac.length || !timingSafeEqual(mac, expectedMac)) throw new WrongPassphraseError();
  // Some writers drop leading zero bytes of the IV (an "odd-length IV" test vector): pad it back.
  const fullIv = Buffer.alloc(16);
  iv.copy(fullIv, 16 - iv.length);
  const privateKey = aes128Ctr(derivedKey.subarray(0, 16), fullIv, ciphertext, "decrypt");
  if (privateKey.length !== 32) throw new KeystoreFormatError("the key is not 32 bytes");
  return new Uint8Array(privateKey);
}

/** Where key files live. Addresses are lower-case hex without 0x. */
export interface KeyStorage {
  /** A description for logs: the directory, or "memory". */
  readonly location: string;
  /** Addresses with at least one key file, in the order their files were first seen. */
  addresses(): Promise<string[]>;
  /** The key files for an address (a folder may hold more than one). */
  filesFor(address: string): Promise<unknown[]>;
  /** Adds a key file; resolves once it is durable. */
  write(file: KeystoreV3): Promise<void>;
}

/** Keys kept in memory only: a node without a data directory (--in-memory) forgets them on exit. */
export class MemoryKeyStorage implements KeyStorage {
  readonly location = "memory";
  private readonly files: KeystoreV3[] = [];

  async addresses(): Promise<string[]> {
    return [...new Set(this.files.map((file) => file.address))];
  }

  async filesFor(address: string): Promise<unknown[]> {
    return this.files.filter((file) => file.address === address);
  }

  async write(file: KeystoreV3): Promise<void> {
    this.files.push(structuredClone(file));
  }
}

interface ScannedFile {
  readonly size: number;
  readonly modifiedMs: number;
  /** undefined when the file is not a key file (it is skipped, and reported once). */
  readonly address: string | undefined;
}

/**
 * The name of this node's temp file for a key file being written (writeAtomically): a user's file
 * never looks like it, so only these are deleted as unfinished writes.
 */
const unfinishedWriteName = /^\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/;

function unfinishedWriteFileName(): string {
  return `.${randomUUID()}.tmp`;
}

/** geth's file name: UTC--<ISO time with "-" for ":">--<address>. */
function keyFileName(address: string, now: Date): string {
  return `UTC--${now.toISOString().replace(/:/g, "-")}--${address}`;
}

/**
 * One JSON file per key in a directory (mode 0700, files 0600). Every read rescans the directory
 * (a stat per file; contents are re-read only when a file's size or time changes), so a file copied
 * in while the node runs is used by the next call. Files whose names start with "." are skipped:
 * they are this node's unfinished writes.
 */
export class DirectoryKeyStorage implements KeyStorage {
  private readonly scanned = new Map<string, ScannedFile>();
  /** Writes one at a time, so the directory sync of one cannot race the rename of another. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    readonly location: string,
    private readonly reportIgnoredFile: (fileName: string, reason: string) => void,
  ) {}

  /**
   * The folder's permission bits when users other than its owner may enter, list or change it (the
   * node creates it 0700; one made by hand may be looser); undefined when it is private or absent.
   */
  async looseAccess(): Promise<number | undefined> {
    try {
      const mode = (await stat(this.location)).mode & 0o777;
      return (mode & 0o077) === 0 ? undefined : mode;
    } catch {
      return undefined;
    }
  }

  /**
   * Deletes the temp files of writes a kill cut short (between creating one and renaming it); they
   * are skipped on every scan but would pile up. Meant for the start, before the server takes
   * calls; queued behind this process's writes all the same, so the temp file of a write under way
   * is never taken. Only regular files named as this node names them. Answers the names deleted.
   */
  removeUnfinishedWrites(): Promise<string[]> {
    const removal = this.writing.then(() => this.deleteUnfinishedWriteFiles());
    this.writing = removal.then(
      () => undefined,
      () => undefined,
    );
    return removal;
  }

  private async deleteUnfinishedWriteFiles(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.location);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new KeyStoreAccessError("read", this.location, error as Error);
    }
    const deleted: string[] = [];
    for (const name of names.filter((entry) => unfinishedWriteName.test(entry))) {
      const path = join(this.location, name);
      try {
        if (!(await lstat(path)).isFile()) continue;
        await rm(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw new KeyStoreAccessError("write to", this.location, error as Error);
      }
      deleted.push(name);
    }
    return deleted;
  }

  private async rescan(): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(this.location)).filter((name) => !name.startsWith(".")).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        this.scanned.clear();
        return;
      }
      throw new KeyStoreAccessError("read", this.location, error as Error);
    }
    const present = new Set(names);
    for (const name of this.scanned.keys()) if (!present.has(name)) this.scanned.delete(name);
    for (const name of names) {
      let info;
      try {
        info = await stat(join(this.location, name));
      } catch {
        continue; // removed while scanning
      }
      if (!info.isFile()) continue;
      const known = this.scanned.get(name);
      if (known !== undefined && known.size === info.size && known.modifiedMs === info.mtimeMs) continue;
      let address: string | undefined;
      if (info.size > maxKeyFileBytes) {
        this.reportIgnoredFile(name, `larger than ${maxKeyFileBytes} bytes: not a key file`);
        this.scanned.set(name, { size: info.size, modifiedMs: info.mtimeMs, address });
        continue;
      }
      try {
        address = keystoreAddress(JSON.parse(await readFile(join(this.location, name), "utf8")));
      } catch (error) {
        this.reportIgnoredFile(name, error instanceof KeystoreFormatError ? error.message : "not JSON");
      }
      this.scanned.set(name, { size: info.size, modifiedMs: info.mtimeMs, address });
    }
  }

  async addresses(): Promise<string[]> {
    await this.rescan();
    const addresses = new Set<string>();
    for (const file of this.scanned.values()) if (file.address !== undefined) addresses.add(file.address);
    return [...addresses];
  }

  async filesFor(address: string): Promise<unknown[]> {
    await this.rescan();
    const files: unknown[] = [];
    for (const [name, file] of this.scanned) {
      if (file.address !== address) continue;
      try {
        files.push(JSON.parse(await readFile(join(this.location, name), "utf8")));
      } catch {
        // removed or rewritten between the scan and the read: the next call rescans
      }
    }
    return files;
  }

  write(file: KeystoreV3): Promise<void> {
    const written = this.writing.then(() =>
      this.writeAtomically(file).catch((error: NodeJS.ErrnoException) => {
        throw error.code === undefined ? error : new KeyStoreAccessError("write to", this.location, error);
      }),
    );
    this.writing = written.catch(() => undefined);
    return written;
  }

  /** Temp file, fsync, rename, fsync of the directory: after a crash the file is whole or absent. */
  private async writeAtomically(file: KeystoreV3): Promise<void> {
    await mkdir(this.location, { recursive: true, mode: 0o700 });
    const finalPath = join(this.location, keyFileName(file.address, new Date()));
    const temporaryPath = join(this.location, unfinishedWriteFileName());
    try {
      const handle = await open(temporaryPath, "wx", 0o600);
      try {
        await handle.writeFile(JSON.stringify(file), "utf8");
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporaryPath, finalPath);
    } catch (error) {
      await rm(temporaryPath, { force: true });
      throw error;
    }
    const directory = await open(this.location, "r");
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
    // Read the file back, as geth does, so an answer never names a key whose file is unreadable.
    if ((await readFile(finalPath, "utf8")) !== JSON.stringify(file)) throw new Error(`key file ${finalPath} reads back differently`);
  }
}
