// The uncles a new block includes (rskj: co/rsk/core/bc/FamilyUtils.java getUncles,
// co/rsk/mine/BlockToMineBuilder.java getUnclesHeaders): the stored siblings of its ancestors,
// less the ancestors themselves and the uncles an ancestor already included, at most the list
// limit. The reference takes them in hash-set order; here the oldest come first (they leave the
// window soonest), then by hash in byte order, so every node builds the same block from the same store.
import type { BlockHeader } from "../chain/header.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import { oldestFamilyNumber, type StoredFamilyView } from "./familyView.js";
import type { UncleLimits } from "./uncles.js";

const hashKey = (header: BlockHeader) => bytesToUnprefixedHex(header.hash);

export function selectUncles(blockNumber: bigint, family: StoredFamilyView, limits: UncleLimits): BlockHeader[] {
  const oldest = oldestFamilyNumber(blockNumber, limits.uncleGenerationLimit);
  // Oldest first: a sibling counts only when the block it branched from is in the window too.
  const line = family.ancestors.filter((ancestor) => ancestor.header.number >= oldest).reverse();
  const excluded = new Set(line.flatMap((ancestor) => [hashKey(ancestor.header), ...ancestor.uncles.map(hashKey)]));

  const candidates = new Map<string, BlockHeader>();
  for (let index = 1; index < line.length; index++) {
    const branchedFrom = line[index - 1]!.header.hash;
    for (const sibling of family.headersAt(line[index]!.header.number)) {
      const key = hashKey(sibling);
      if (excluded.has(key) || Buffer.compare(sibling.fields.parentHash, branchedFrom) !== 0) continue;
      candidates.set(key, sibling);
    }
  }
  return [...candidates.values()].sort(olderFirstThenByHash).slice(0, limits.uncleListLimit);
}

function olderFirstThenByHash(left: BlockHeader, right: BlockHeader): number {
  if (left.number !== right.number) return left.number < right.number ? -1 : 1;
  return Buffer.compare(left.hash, right.hash);
}
