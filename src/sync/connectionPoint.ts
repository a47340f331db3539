// Where a peer's chain meets ours (rskj: co/rsk/net/sync/ConnectionPointFinder, used by
// FindingConnectionPointSyncState): a binary search over the peer's canonical hashes by number for
// the highest block we store, canonical or not. Genesis is shared by construction (the status
// handshake refused peers with another one), so the search starts with it found.

export interface ConnectionPointSearch {
  /** The peer's canonical hash at a number, or undefined (it has none: it shrank since its status). */
  blockHashAt(number: bigint): Promise<Uint8Array | undefined>;
  /** Whether we store this block. */
  hasBlock(hash: Uint8Array): boolean;
}

/**
 * The highest number in [0, peerBest] whose peer block we store; at most ~log2(peerBest) requests.
 * A peer that answers nothing for a number below its best counts as not having it there.
 */
export async function findConnectionPoint(search: ConnectionPointSearch, peerBest: bigint): Promise<{ number: bigint; hash: Uint8Array | undefined; requests: number }> {
  let found = 0n;
  let foundHash: Uint8Array | undefined;
  let missing = peerBest + 1n;
  let requests = 0;
  while (missing - found > 1n) {
    const middle = (found + missing) / 2n;
    requests++;
    const hash = await search.blockHashAt(middle);
    if (hash !== undefined && search.hasBlock(hash)) {
      found = middle;
      foundHash = hash;
    } else {
      missing = middle;
    }
  }
  return { number: found, hash: foundHash, requests };
}
