// The value each storage slot had before the running transaction, which SSTORE's gas compares with
// (EIP-2200): the package's OriginalStorageCache, keyed the same way (account hex -> slot hex ->
// value, read as `map` by tracing/structLogger.ts) but with the node's hex conversions. The
// package converts the address and the slot on every SSTORE with a JavaScript loop; here the
// address's hex is kept by its bytes and the slot's is the one its SSTORE already computed
// (common/hex.ts).
import type { Address } from "@ethereumjs/util";
import { hexOfRecentKey, hexOfStableBytes } from "../common/hex.js";

export class OriginalStorageValues {
  map = new Map<string, Map<string, Uint8Array>>();

  /** `getStorage`: the slot's value now, taken as its original when first asked for. */
  constructor(private readonly getStorage: (address: Address, key: Uint8Array) => Promise<Uint8Array>) {}

  async get(address: Address, key: Uint8Array): Promise<Uint8Array> {
    const slotHex = hexOfRecentKey(key);
    const known = this.map.get(hexOfStableBytes(address.bytes))?.get(slotHex);
    if (known !== undefined) return known;
    const value = await this.getStorage(address, key);
    this.put(address, key, value);
    return value;
  }

  /** Records `value` as the slot's original unless one is recorded already. */
  put(address: Address, key: Uint8Array, value: Uint8Array): void {
    const addressHex = hexOfStableBytes(address.bytes);
    let slots = this.map.get(addressHex);
    if (slots === undefined) this.map.set(addressHex, (slots = new Map()));
    const slotHex = hexOfRecentKey(key);
    if (!slots.has(slotHex)) slots.set(slotHex, value);
  }

  clear(): void {
    this.map = new Map();
  }
}
