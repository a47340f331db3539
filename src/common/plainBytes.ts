// Bytes from outside the node (LevelDB's reads, frames and messages from peers) as plain
// Uint8Arrays. Node's APIs hand out Buffers, a subclass; everything the node makes itself (hashes,
// encodings, blocks read from a file) is a Uint8Array, and fields decoded from bytes keep their
// input's class (RLP slices and subarrays). V8 gives the two classes different hidden classes, so
// the code reading bytes (trie nodes, headers, bodies, RLP) met both, and its optimised code was
// thrown away ("wrong map") whenever the class it had not seen yet came. Converted once where the
// bytes come in, the rest of the node sees one class.

/** `bytes` as a plain Uint8Array over the same memory (no copy); itself when it is one already. */
export function plainBytes<T extends Uint8Array | undefined>(bytes: T): T {
  return bytes === undefined || Object.getPrototypeOf(bytes) === Uint8Array.prototype ? bytes : (new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) as T);
}
