// LevelDB's variable-length integers: seven bits a byte, least significant first, the high bit set
// on every byte but the last. Values here (file numbers, sizes, offsets) stay below 2^53.

/** The varint at `offset` and where the next field starts, or undefined when it runs past the end or past 64 bits. */
export function readVarint(bytes: Uint8Array, offset: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let shift = 0, at = offset; shift < 64 && at < bytes.length; shift += 7, at++) {
    const byte = bytes[at]!;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return value > Number.MAX_SAFE_INTEGER ? undefined : { value, next: at + 1 };
  }
  return undefined;
}

/** A varint length followed by that many bytes. */
export function readLengthPrefixed(bytes: Uint8Array, offset: number): { value: Uint8Array; next: number } | undefined {
  const length = readVarint(bytes, offset);
  if (length === undefined || length.next + length.value > bytes.length) return undefined;
  return { value: bytes.subarray(length.next, length.next + length.value), next: length.next + length.value };
}
