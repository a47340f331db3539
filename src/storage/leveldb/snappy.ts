// Snappy decompression, for the LevelDB table blocks the integrity check must read (the index
// block of a table is compressed like its data). The format: the uncompressed length as a varint,
// then elements, each a literal (bytes to copy from the input) or a copy (bytes to repeat from
// the output written so far, at an offset back). Any malformed input answers undefined.
import { readVarint } from "./varint.js";

export function snappyDecompress(input: Uint8Array): Uint8Array | undefined {
  const header = readVarint(input, 0);
  if (header === undefined || header.value > 64 * 1024 * 1024) return undefined;
  const output = new Uint8Array(header.value);
  let at = header.next;
  let written = 0;
  while (at < input.length) {
    const tag = input[at++]!;
    let length: number;
    let offset = 0;
    switch (tag & 3) {
      case 0: {
        length = (tag >>> 2) + 1;
        if (length > 60) {
          // 60 to 63: the length less one follows in 1 to 4 little-endian bytes.
          const bytes = length - 60;
          if (at + bytes > input.length) return undefined;
          length = 0;
          for (let index = 0; index < bytes; index++) length += input[at + index]! * 2 ** (8 * index);
          length += 1;
          at += bytes;
        }
        if (at + length > input.length || written + length > output.length) return undefined;
        output.set(input.subarray(at, at + length), written);
        at += length;
        written += length;
        continue;
      }
      case 1:
        if (at >= input.length) return undefined;
        length = 4 + ((tag >>> 2) & 7);
        offset = ((tag >>> 5) << 8) | input[at++]!;
        break;
      case 2:
        if (at + 2 > input.length) return undefined;
        length = 1 + (tag >>> 2);
        offset = input[at]! | (input[at + 1]! << 8);
        at += 2;
        break;
      default:
        if (at + 4 > input.length) return undefined;
        length = 1 + (tag >>> 2);
        offset = (input[at]! | (input[at + 1]! << 8) | (input[at + 2]! << 16)) + input[at + 3]! * 2 ** 24;
        at += 4;
    }
    if (offset === 0 || offset > written || written + length > output.length) return undefined;
    // Byte by byte: a copy may overlap what it writes (a run).
    for (let index = 0; index < length; index++, written++) output[written] = output[written - offset]!;
  }
  return written === output.length ? output : undefined;
}
