// The parts of EIP-712 typed data checked one by one (types, primary type, domain, message) and
// each field value encoded as its 32-byte word. Values are taken in the forms wallets and
// libraries send: integers as JSON numbers (safe integers only: a larger one was already rounded
// by JSON parsing), decimal or 0x-hex strings; bytes as 0x-hex; booleans as true/false.
import { keccak256 } from "../common/crypto.js";

/** Malformed typed data; the message names where (a path such as "message.from.wallet"). */
export class TypedDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TypedDataError";
  }
}

export interface TypedDataField {
  readonly name: string;
  readonly type: string;
}

export type TypedDataTypes = Readonly<Record<string, readonly TypedDataField[]>>;

export interface TypedData {
  readonly types: TypedDataTypes;
  readonly primaryType: string;
  readonly domain: Record<string, unknown>;
  readonly message: Record<string, unknown>;
}

/** The domain fields EIP-712 defines, in its order, for a domain whose type is not given. */
const standardDomainFields: readonly TypedDataField[] = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
  { name: "salt", type: "bytes32" },
];

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const integerType = /^(u?)int(\d+)$/;
const fixedBytesType = /^bytes(\d+)$/;
const arraySuffix = /\[(\d*)\]$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function isAtomicType(type: string): boolean {
  if (type === "address" || type === "bool" || type === "string" || type === "bytes") return true;
  const integer = integerType.exec(type);
  if (integer !== null) return isValidWidth(integer[2]!, 8, 256, 8);
  const fixed = fixedBytesType.exec(type);
  return fixed !== null && isValidWidth(fixed[1]!, 1, 32, 1);
}

function isValidWidth(digits: string, least: number, most: number, step: number): boolean {
  const width = Number(digits);
  return String(width) === digits && width >= least && width <= most && width % step === 0;
}

/** The type without its array suffixes. */
function baseType(type: string): string {
  let base = type;
  for (let suffix = arraySuffix.exec(base); suffix !== null; suffix = arraySuffix.exec(base)) base = base.slice(0, suffix.index);
  return base;
}

export function structFields(types: TypedDataTypes, name: string): readonly TypedDataField[] {
  return types[name]!;
}

/** Every struct reachable from `name` through its fields (itself included), cycles allowed. */
export function referencedStructs(types: TypedDataTypes, name: string): Set<string> {
  const found = new Set<string>([name]);
  const waiting = [name];
  for (let next = waiting.pop(); next !== undefined; next = waiting.pop()) {
    for (const field of types[next]!) {
      const base = baseType(field.type);
      if (types[base] !== undefined && !found.has(base)) {
        found.add(base);
        waiting.push(base);
      }
    }
  }
  return found;
}

function checkedTypes(input: unknown, domainTypeName: string, domain: Record<string, unknown>): TypedDataTypes {
  if (!isPlainObject(input)) throw new TypedDataError(`types: expected an object of struct types, got ${describe(input)}`);
  const types: Record<string, readonly TypedDataField[]> = {};
  for (const [name, fields] of Object.entries(input)) {
    if (!identifier.test(name) || isAtomicType(name)) throw new TypedDataError(`types: ${describe(name)} is not a valid struct type name`);
    if (!Array.isArray(fields)) throw new TypedDataError(`types.${name}: expected an array of {name, type}, got ${describe(fields)}`);
    const names = new Set<string>();
    types[name] = fields.map((field: unknown, index) => {
      const where = `types.${name}[${index}]`;
      if (!isPlainObject(field) || typeof field.name !== "string" || typeof field.type !== "string") throw new TypedDataError(`${where}: expected {name, type} with two strings, got ${describe(field)}`);
      if (!identifier.test(field.name)) throw new TypedDataError(`${where}.name: ${describe(field.name)} is not a valid field name`);
      if (names.has(field.name)) throw new TypedDataError(`${where}.name: the field ${field.name} appears twice in ${name}`);
      names.add(field.name);
      return { name: field.name, type: field.type };
    });
  }
  // Without a domain type the domain's own fields make it, in the EIP's order.
  types[domainTypeName] ??= standardDomainFields.filter((field) => domain[field.name] !== undefined);
  for (const [name, fields] of Object.entries(types)) {
    fields.forEach((field, index) => {
      const base = baseType(field.type);
      if (!isAtomicType(base) && types[base] === undefined) throw new TypedDataError(`types.${name}[${index}].type: unknown type ${describe(field.type)}`);
      if (/\[0+\d*\]/.test(field.type) || /\[\d*[^\d\]]/.test(field.type)) throw new TypedDataError(`types.${name}[${index}].type: ${describe(field.type)} is not a valid array type`);
    });
  }
  return types;
}

/** The typed data with its structure checked (field values are checked as they are encoded). */
export function checkedTypedData(input: unknown, domainTypeName: string): TypedData {
  if (!isPlainObject(input)) throw new TypedDataError(`expected an object with types, primaryType, domain and message, got ${describe(input)}`);
  const { primaryType, domain, message } = input;
  if (!isPlainObject(domain)) throw new TypedDataError(`domain: expected an object, got ${describe(domain)}`);
  const types = checkedTypes(input.types, domainTypeName, domain);
  if (typeof primaryType !== "string" || types[primaryType] === undefined) throw new TypedDataError(`primaryType: ${describe(primaryType)} is not one of the struct types`);
  if (primaryType !== domainTypeName && !isPlainObject(message)) throw new TypedDataError(`message: expected an object, got ${describe(message)}`);
  return { types, primaryType, domain, message: isPlainObject(message) ? message : {} };
}

/** The fields of `value` must be exactly those of the struct type. */
export function checkStructValue(types: TypedDataTypes, name: string, value: Record<string, unknown>, path: string): void {
  const fields = types[name]!;
  for (const key of Object.keys(value)) {
    if (!fields.some((field) => field.name === key)) throw new TypedDataError(`${path}.${key}: ${name} has no field ${key}`);
  }
  for (const field of fields) {
    if (value[field.name] === undefined) throw new TypedDataError(`${path}.${field.name}: missing (a ${field.type} field of ${name})`);
  }
}

type StructHasher = (name: string, value: Record<string, unknown>, path: string) => Uint8Array;

/** One field value as its 32-byte word in encodeData. */
export function encodeField(type: string, value: unknown, path: string, types: TypedDataTypes, hashStruct: StructHasher): Uint8Array {
  const suffix = arraySuffix.exec(type);
  if (suffix !== null) {
    if (!Array.isArray(value)) throw new TypedDataError(`${path}: expected an array (${type}), got ${describe(value)}`);
    if (suffix[1] !== "" && value.length !== Number(suffix[1])) throw new TypedDataError(`${path}: expected ${suffix[1]} elements (${type}), got ${value.length}`);
    const inner = type.slice(0, suffix.index);
    const words = new Uint8Array(32 * value.length);
    value.forEach((element: unknown, index) => words.set(encodeField(inner, element, `${path}[${index}]`, types, hashStruct), 32 * index));
    return keccak256(words);
  }
  if (types[type] !== undefined) {
    if (!isPlainObject(value)) throw new TypedDataError(`${path}: expected a ${type} object, got ${describe(value)}`);
    return hashStruct(type, value, path);
  }
  return encodeAtomic(type, value, path);
}

function hexBytes(value: unknown, path: string, type: string): Uint8Array {
  if (typeof value !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(value)) throw new TypedDataError(`${path}: expected 0x-prefixed hex bytes (${type}), got ${describe(value)}`);
  return Buffer.from(value.slice(2), "hex");
}

function integerValue(value: unknown, path: string, type: string): bigint {
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === "string" && /^-?(0x[0-9a-fA-F]+|[0-9]+)$/.test(value)) return value.startsWith("-") ? -BigInt(value.slice(1)) : BigInt(value);
  throw new TypedDataError(`${path}: expected an integer (${type}) as a safe JSON number, a decimal or a 0x-hex string, got ${describe(value)}`);
}

function encodeAtomic(type: string, value: unknown, path: string): Uint8Array {
  const word = new Uint8Array(32);
  if (type === "string") {
    if (typeof value !== "string") throw new TypedDataError(`${path}: expected a string, got ${describe(value)}`);
    return keccak256(new TextEncoder().encode(value));
  }
  if (type === "bytes") return keccak256(hexBytes(value, path, type));
  if (type === "bool") {
    if (value !== true && value !== false && value !== "true" && value !== "false") throw new TypedDataError(`${path}: expected true or false, got ${describe(value)}`);
    word[31] = value === true || value === "true" ? 1 : 0;
    return word;
  }
  if (type === "address") {
    if (typeof value !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(value)) throw new TypedDataError(`${path}: expected a 20-byte 0x-hex address, got ${describe(value)}`);
    word.set(Buffer.from(value.slice(2), "hex"), 12);
    return word;
  }
  const fixed = fixedBytesType.exec(type);
  if (fixed !== null) {
    const bytes = hexBytes(value, path, type);
    if (bytes.length !== Number(fixed[1])) throw new TypedDataError(`${path}: expected ${fixed[1]} bytes (${type}), got ${bytes.length}`);
    word.set(bytes, 0);
    return word;
  }
  const [, unsigned, bits] = integerType.exec(type)!;
  const width = BigInt(bits!);
  const integer = integerValue(value, path, type);
  const least = unsigned === "u" ? 0n : -(1n << (width - 1n));
  const most = unsigned === "u" ? (1n << width) - 1n : (1n << (width - 1n)) - 1n;
  if (integer < least || integer > most) throw new TypedDataError(`${path}: ${integer} is out of the range of ${type}`);
  word.set(Buffer.from(BigInt.asUintN(256, integer).toString(16).padStart(64, "0"), "hex"), 0);
  return word;
}
