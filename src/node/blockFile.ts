// Files of blocks as `chain-node export` writes them and `chain-node import` reads them: blocks in
// the wire form (chain/block.ts, RLP([header, [transaction...], [uncle...]])) one after another,
// nothing between them. Read as a stream: each block's RLP list prefix tells its length, so only
// one block (and one chunk) is in memory at a time, whatever the file's size.
import { open, type FileHandle } from "node:fs/promises";

/** A file that is not a sequence of whole RLP lists; `offset` is where the bad item starts. */
export class BlockFileError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** One block's bytes and where they start in the file. */
export interface FileBlock {
  readonly bytes: Uint8Array;
  readonly offset: number;
}

const defaultChunkBytes = 1 << 20;

/**
 * Length of the RLP list whose prefix starts at `at`: `{ total }` (prefix and payload), or
 * undefined when the prefix is not all in `bytes` yet. Throws BlockFileError for a prefix that is
 * not a list's or not canonical (a long form for a short length, a length with a leading zero).
 */
export function rlpListLength(bytes: Uint8Array, at: number, fileOffset: number): { total: number } | undefined {
  const first = bytes[at];
  if (first === undefined) return undefined;
  if (first < 0xc0) {
    throw new BlockFileError(`at offset ${fileOffset}: byte 0x${first.toString(16).padStart(2, "0")} does not start an RLP list, so no block starts there (a file chain-node export wrote holds blocks only)`, fileOffset);
  }
  if (first <= 0xf7) return { total: 1 + first - 0xc0 };
  const lengthBytes = first - 0xf7;
  if (at + 1 + lengthBytes > bytes.length) return undefined;
  if (bytes[at + 1] === 0) throw new BlockFileError(`at offset ${fileOffset}: an RLP list length with a leading zero byte (not canonical RLP)`, fileOffset);
  let payload = 0;
  for (let index = 0; index < lengthBytes; index++) payload = payload * 256 + bytes[at + 1 + index]!;
  if (payload < 56) throw new BlockFileError(`at offset ${fileOffset}: an RLP list of ${payload} bytes in the long form (not canonical RLP)`, fileOffset);
  if (!Number.isSafeInteger(payload)) throw new BlockFileError(`at offset ${fileOffset}: an RLP list announces ${payload} bytes`, fileOffset);
  return { total: 1 + lengthBytes + payload };
}

/** Reads a file of blocks one block at a time; `size` and `offset` give the progress. */
export class BlockFileReader {
  /** Bytes of the file consumed: the end of the last block read. */
  private consumed = 0;

  private constructor(
    private readonly handle: FileHandle,
    readonly path: string,
    readonly size: number,
    private readonly chunkBytes: number,
  ) {}

  /** Opens `path`; throws the system's error (ENOENT...) when it cannot be read. */
  static async open(path: string, { chunkBytes = defaultChunkBytes } = {}): Promise<BlockFileReader> {
    const handle = await open(path, "r");
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new Error(`${path} is not a file`);
      return new BlockFileReader(handle, path, stats.size, chunkBytes);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Where the next block starts: the bytes read so far. */
  get offset(): number {
    return this.consumed;
  }

  /**
   * The blocks from the start of the file to its end. Throws BlockFileError at an item that is not
   * an RLP list and at a block the file ends inside of (naming its offset); the blocks before it
   * have been yielded.
   */
  async *blocks(): AsyncGenerator<FileBlock> {
    let buffered: Uint8Array = new Uint8Array(0);
    let bufferedStart = 0; // file offset of buffered[0]
    let position = 0; // index in buffered of the next block
    let readTo = 0; // file offset read up to
    const readMore = async (atLeast: number): Promise<void> => {
      // Keep what is left of the current block, then add at least `atLeast` bytes (or the rest of the file).
      const rest = buffered.subarray(position);
      const wanted = Math.min(Math.max(this.chunkBytes, atLeast), this.size - readTo);
      const next = new Uint8Array(rest.length + wanted);
      next.set(rest);
      let filled = rest.length;
      while (filled < next.length) {
        const { bytesRead } = await this.handle.read(next, filled, next.length - filled, readTo + filled - rest.length);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      bufferedStart += position;
      readTo += filled - rest.length;
      buffered = next.subarray(0, filled);
      position = 0;
    };
    while (bufferedStart + position < this.size) {
      const blockOffset = bufferedStart + position;
      let length = rlpListLength(buffered, position, blockOffset);
      if (length === undefined) {
        if (readTo < this.size) await readMore(9);
        length = rlpListLength(buffered, position, blockOffset);
      }
      const left = this.size - blockOffset;
      if (length === undefined || length.total > left) {
        const announced = length === undefined ? "its RLP prefix is cut short" : `it announces ${length.total} bytes`;
        throw new BlockFileError(`the file ends inside the block at offset ${blockOffset}: ${announced}, ${left} ${left === 1 ? "is" : "are"} left (an export cut short, or a damaged file)`, blockOffset);
      }
      if (position + length.total > buffered.length) await readMore(length.total - (buffered.length - position));
      // A copy: what decodes from it may be kept (the chain's recent blocks), the chunk need not be.
      const bytes = buffered.slice(position, position + length.total);
      position += length.total;
      this.consumed = blockOffset + length.total;
      yield { bytes, offset: blockOffset };
    }
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
