// Where a peer's chain meets ours (rskj: co/rsk/net/sync/ConnectionPointFinder, used by
// FindingConnectionPointSyncState): the highest block of the peer's chain that we store, canonical
// or not. Genesis is shared by construction (the status handshake refused peers with another one).
// Two cases need no search, because every stored block of a valid chain is heavier than its parent
// and our best is the heaviest we store:
//   - our best is genesis: we store nothing else, so the point is genesis, with no request (a
//     fresh node's sync);
//   - the peer's canonical block at our best's number is our best: a stored block of the peer's
//     above it would descend from our best and be heavier, so the point is our best, with one
//     request (a node behind on the peer's chain, and each round after a long sync's first).
// Otherwise (our best is on a branch the peer's chain left, or the peer reorganised past it) a
// binary search over the peer's canonical hashes by number, the answer at our best's number its
// first probe. A point found too low costs only blocks fetched again (the importer answers EXIST
// for a stored one); one too high is never given: every point above genesis is a block the peer
// named and we store.

export interface ConnectionPointSearch {
  /** The peer's canonical hash at a number, or undefined (it has none: it shrank since its status). */
  blockHashAt(number: bigint): Promise<Uint8Array | undefined>;
  /** Whether we store this block. */
  hasBlock(hash: Uint8Array): boolean;
  /** Our best block: the heaviest we store. */
  readonly best: { readonly number: bigint; readonly hash: Uint8Array };
}

/**
 * The highest number in [0, peerBest] whose peer block we store, and that block's hash (undefined
 * for genesis when the peer was not asked for it); no request when our best is genesis, one when
 * the peer's chain holds our best, else at most ~1 + log2(peerBest). A peer that answers nothing
 * for a number below its best counts as not having it there.
 */
export async function findConnectionPoint(search: ConnectionPointSearch, peerBest: bigint): Promise<{ number: bigint; hash: Uint8Array | undefined; requests: number }> {
  const { best } = search;
  if (best.number === 0n) return { number: 0n, hash: undefined, requests: 0 };
  let found = 0n;
  let foundHash: Uint8Array | undefined;
  let missing = peerBest + 1n;
  let requests = 0;
  if (best.number <= peerBest) {
    requests++;
    const hash = await search.blockHashAt(best.number);
    if (hash !== undefined && Buffer.compare(hash, best.hash) === 0) return { number: best.number, hash, requests };
    // Not our best there: as one probe of the search (we may store the peer's block there on a side branch).
    if (hash !== undefined && search.hasBlock(hash)) {
      found = best.number;
      foundHash = hash;
    } else {
      missing = best.number;
    }
  }
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
