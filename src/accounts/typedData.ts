// EIP-712 typed structured data: the hash eth_signTypedData_v4 signs, keccak-256(0x19 0x01 ||
// domainSeparator || hashStruct(primaryType, message)). The data comes from the network, so every
// part is checked before it is hashed, and a fault is reported by its path ("message.to.wallet")
// instead of being hashed as something the signer did not mean: a missing field, a field the type
// does not have, a number out of its type's range, a bytes32 of 31 bytes.
import { keccak256 } from "../common/crypto.js";
import { checkedTypedData, checkStructValue, encodeField, referencedStructs, structFields, type TypedData, type TypedDataTypes } from "./typedDataValues.js";

export { TypedDataError, type TypedData } from "./typedDataValues.js";

const domainTypeName = "EIP712Domain";

/** encodeType: "Name(type1 field1,...)" and then every struct it references, sorted by name. */
function encodeType(types: TypedDataTypes, primary: string): string {
  const referenced = [...referencedStructs(types, primary)].filter((name) => name !== primary).sort();
  return [primary, ...referenced].map((name) => `${name}(${structFields(types, name).map((field) => `${field.type} ${field.name}`).join(",")})`).join("");
}

/** Type hashes by types object: an array of a thousand structs walks the type graph once. */
const typeHashes = new WeakMap<TypedDataTypes, Map<string, Uint8Array>>();

function typeHash(types: TypedDataTypes, name: string): Uint8Array {
  let known = typeHashes.get(types);
  if (known === undefined) typeHashes.set(types, (known = new Map()));
  let hash = known.get(name);
  if (hash === undefined) known.set(name, (hash = keccak256(new TextEncoder().encode(encodeType(types, name)))));
  return hash;
}

/** hashStruct: keccak-256 of the type hash followed by each field's 32-byte encoding. */
export function hashStruct(types: TypedDataTypes, name: string, value: Record<string, unknown>, path: string): Uint8Array {
  checkStructValue(types, name, value, path);
  const fields = structFields(types, name);
  const encoded = new Uint8Array(32 * (fields.length + 1));
  encoded.set(typeHash(types, name), 0);
  fields.forEach((field, index) => {
    const word = encodeField(field.type, value[field.name], `${path}.${field.name}`, types, (structName, structValue, structPath) => hashStruct(types, structName, structValue, structPath));
    encoded.set(word, 32 * (index + 1));
  });
  return keccak256(encoded);
}

/**
 * The digest a v4 signature covers. TypedDataError names the first fault found. Without an
 * EIP712Domain type, the domain's type is made from the fields the domain has, in the EIP's
 * order (as ethers does).
 */
export function typedDataHash(input: unknown): Uint8Array {
  const data: TypedData = checkedTypedData(input, domainTypeName);
  const domainSeparator = hashStruct(data.types, domainTypeName, data.domain, "domain");
  const prefixed = new Uint8Array(data.primaryType === domainTypeName ? 34 : 66);
  prefixed.set([0x19, 0x01], 0);
  prefixed.set(domainSeparator, 2);
  // geth: a primary type of EIP712Domain signs the domain alone.
  if (data.primaryType !== domainTypeName) prefixed.set(hashStruct(data.types, data.primaryType, data.message, "message"), 34);
  return keccak256(prefixed);
}
