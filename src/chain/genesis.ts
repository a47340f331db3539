// Genesis: the allocation and header fields a chain starts from, the built-in ones of the network
// profiles, the `--genesis FILE` format, and the building of block 0 and its state.
import { Account, Address, setLengthLeft } from "@ethereumjs/util";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { StateDatabase } from "../state/stateDatabase.js";
import { Block } from "./block.js";
import { BlockHeader, emptyBloom, emptyBytes, emptyListHash, emptyTrieRoot, zeroHash } from "./header.js";

export interface GenesisAccount {
  balance: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  /** Storage slot (32 bytes) -> value (up to 32 bytes). */
  storage?: ReadonlyMap<string, Uint8Array>;
}

export interface GenesisSpec {
  /** Address (20 bytes, hex without 0x, lower case) -> account. */
  alloc: ReadonlyMap<string, GenesisAccount>;
  gasLimit: bigint;
  timestamp: bigint;
  difficulty: bigint;
  extraData: Uint8Array;
  coinbase: Uint8Array;
  minimumGasPrice: bigint;
}

/** A --genesis file the node cannot use; the message names the field. */
export class GenesisFileError extends Error {}

export async function buildGenesisBlock(spec: GenesisSpec, state: StateDatabase): Promise<Block> {
  const genesisState = state.at(emptyTrieRoot);
  for (const [addressHex, account] of spec.alloc) {
    const address = new Address(Buffer.from(addressHex, "hex"));
    await genesisState.putAccount(address, new Account(account.nonce ?? 0n, account.balance));
    if (account.code !== undefined && account.code.length > 0) await genesisState.putCode(address, account.code);
    for (const [slot, value] of account.storage ?? []) {
      await genesisState.putStorage(address, Buffer.from(slot, "hex"), value);
    }
  }
  const stateRoot = await genesisState.getStateRoot();
  const header = new BlockHeader({
    parentHash: zeroHash,
    unclesHash: emptyListHash,
    coinbase: spec.coinbase,
    stateRoot,
    transactionsRoot: emptyTrieRoot,
    receiptsRoot: emptyTrieRoot,
    logsBloom: emptyBloom,
    difficulty: spec.difficulty,
    number: 0n,
    gasLimit: spec.gasLimit,
    gasUsed: 0n,
    timestamp: spec.timestamp,
    extraData: spec.extraData,
    paidFees: 0n,
    minimumGasPrice: spec.minimumGasPrice,
    uncleCount: 0,
    mergedMiningHeader: emptyBytes,
    mergedMiningMerkleProof: emptyBytes,
    mergedMiningCoinbaseTransaction: emptyBytes,
  });
  return new Block(header, []);
}

// --- the --genesis file -------------------------------------------------------------------------
//
// {
//   "alloc": { "0x<address>": { "balance": "0x..." | "<decimal>", "nonce"?: ..., "code"?: "0x...",
//                               "storage"?: { "0x<slot>": "0x<value>" } } },
//   "gasLimit"?, "timestamp"?, "difficulty"?, "minimumGasPrice"?: quantities (hex or decimal),
//   "extraData"?: "0x..." (at most 32 bytes), "coinbase"?: "0x<address>"
// }
// Fields left out keep the network profile's values.

const knownTopLevel = new Set(["alloc", "gasLimit", "timestamp", "difficulty", "minimumGasPrice", "extraData", "coinbase"]);
const knownAccountFields = new Set(["balance", "nonce", "code", "storage"]);

function parseQuantity(value: unknown, where: string): bigint {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === "string" && /^(0x[0-9a-fA-F]+|[0-9]+)$/.test(value)) return BigInt(value);
  throw new GenesisFileError(`${where} must be a non-negative integer (hex "0x..." or decimal), got ${JSON.stringify(value)}`);
}

function parseHexBytes(value: unknown, where: string, maxLength?: number): Uint8Array {
  if (typeof value !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(value)) throw new GenesisFileError(`${where} must be hex data "0x...", got ${JSON.stringify(value)}`);
  const bytes = Buffer.from(value.slice(2), "hex");
  if (maxLength !== undefined && bytes.length > maxLength) throw new GenesisFileError(`${where} is longer than ${maxLength} bytes`);
  return new Uint8Array(bytes);
}

function parseAddress(value: string, where: string): string {
  if (!/^(0x)?[0-9a-fA-F]{40}$/.test(value)) throw new GenesisFileError(`${where}: "${value}" is not a 20-byte hex address`);
  return value.replace(/^0x/, "").toLowerCase();
}

function expectObject(value: unknown, where: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new GenesisFileError(`${where} must be a JSON object`);
  return value as Record<string, unknown>;
}

function rejectUnknown(object: Record<string, unknown>, known: Set<string>, where: string): void {
  const unknown = Object.keys(object).filter((key) => !known.has(key));
  if (unknown.length > 0) throw new GenesisFileError(`${where}: unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => `"${key}"`).join(", ")}`);
}

/** Reads a --genesis document over the profile's defaults. */
export function parseGenesisDocument(document: unknown, defaults: GenesisSpec): GenesisSpec {
  const root = expectObject(document, "the genesis file");
  rejectUnknown(root, knownTopLevel, "the genesis file");
  const alloc = new Map<string, GenesisAccount>();
  for (const [addressText, accountValue] of Object.entries(expectObject(root.alloc ?? {}, '"alloc"'))) {
    const where = `alloc["${addressText}"]`;
    const address = parseAddress(addressText, where);
    const account = expectObject(accountValue, where);
    rejectUnknown(account, knownAccountFields, where);
    const storage = new Map<string, Uint8Array>();
    for (const [slotText, slotValue] of Object.entries(expectObject(account.storage ?? {}, `${where}.storage`))) {
      const slot = setLengthLeft(parseHexBytes(slotText, `${where}.storage key`, 32), 32);
      storage.set(bytesToUnprefixedHex(slot), parseHexBytes(slotValue, `${where}.storage["${slotText}"]`, 32));
    }
    alloc.set(address, {
      balance: parseQuantity(account.balance ?? "0", `${where}.balance`),
      nonce: parseQuantity(account.nonce ?? "0", `${where}.nonce`),
      ...(account.code === undefined ? {} : { code: parseHexBytes(account.code, `${where}.code`) }),
      storage,
    });
  }
  return {
    alloc,
    gasLimit: root.gasLimit === undefined ? defaults.gasLimit : parseQuantity(root.gasLimit, '"gasLimit"'),
    timestamp: root.timestamp === undefined ? defaults.timestamp : parseQuantity(root.timestamp, '"timestamp"'),
    difficulty: root.difficulty === undefined ? defaults.difficulty : parseQuantity(root.difficulty, '"difficulty"'),
    minimumGasPrice: root.minimumGasPrice === undefined ? defaults.minimumGasPrice : parseQuantity(root.minimumGasPrice, '"minimumGasPrice"'),
    extraData: root.extraData === undefined ? defaults.extraData : parseHexBytes(root.extraData, '"extraData"', 32),
    coinbase: root.coinbase === undefined ? defaults.coinbase : Buffer.from(parseAddress(String(root.coinbase), '"coinbase"'), "hex"),
  };
}

