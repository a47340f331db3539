// Blocks whose parent is not stored yet (rskj: co/rsk/net/NetBlockStore with
// BlockSyncService.connectBlocksAndDescendants): held by parent hash until the parent lands, then
// imported with their descendants. Bounded: the oldest go first when it is full, and blocks too far
// ahead of the best one are not held at all (a long sync brings those).
import type { Block } from "../chain/block.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { ImportOutcome } from "../consensus/importResult.js";

export interface OrphanPoolOptions {
  /** Blocks held at most. */
  readonly maxBlocks: number;
  /** Blocks further than this above the best are refused (rskj: 192 × 20). */
  readonly maxAheadOfBest: bigint;
}

export const defaultOrphanPoolOptions: OrphanPoolOptions = { maxBlocks: 1_024, maxAheadOfBest: 192n * 20n };

export interface Orphan {
  readonly block: Block;
  /** The peer that sent it (to score when it turns out invalid). */
  readonly from: string;
}

export type OrphanAdmission = "held" | "known" | "tooFarAhead";

export class OrphanPool {
  /** By block hash (hex), oldest first. */
  private readonly byHash = new Map<string, Orphan>();
  /** Parent hash (hex) -> hashes of the held blocks waiting for it. */
  private readonly byParent = new Map<string, Set<string>>();

  constructor(private readonly options: OrphanPoolOptions = defaultOrphanPoolOptions) {}

  get size(): number {
    return this.byHash.size;
  }

  has(hash: Uint8Array): boolean {
    return this.byHash.has(bytesToUnprefixedHex(hash));
  }

  /** Holds `block` until its parent is stored; `bestNumber` is the local best's. */
  add(block: Block, from: string, bestNumber: bigint): OrphanAdmission {
    const key = bytesToUnprefixedHex(block.hash);
    if (this.byHash.has(key)) return "known";
    if (block.number > bestNumber + this.options.maxAheadOfBest) return "tooFarAhead";
    this.byHash.set(key, { block, from });
    const parent = bytesToUnprefixedHex(block.header.fields.parentHash);
    let siblings = this.byParent.get(parent);
    if (siblings === undefined) this.byParent.set(parent, (siblings = new Set()));
    siblings.add(key);
    while (this.byHash.size > this.options.maxBlocks) this.remove(this.byHash.keys().next().value!);
    return "held";
  }

  /**
   * The hash to ask peers for so that `hash`'s line can connect: the parent of the oldest held
   * ancestor of the held block `hash` (the block itself when it is not held).
   */
  missingAncestorOf(hash: Uint8Array): Uint8Array {
    let cursor = this.byHash.get(bytesToUnprefixedHex(hash));
    if (cursor === undefined) return hash;
    for (;;) {
      const parent = this.byHash.get(bytesToUnprefixedHex(cursor.block.header.fields.parentHash));
      if (parent === undefined) return cursor.block.header.fields.parentHash;
      cursor = parent;
    }
  }

  /**
   * After `parent` was stored: imports the held blocks waiting for it, then theirs, parents before
   * children; answers each outcome with the block's sender. A refused block's descendants are
   * dropped (they cannot connect).
   */
  async connectDescendants(parent: Uint8Array, importBlock: (block: Block) => Promise<ImportOutcome>): Promise<{ orphan: Orphan; outcome: ImportOutcome }[]> {
    const results: { orphan: Orphan; outcome: ImportOutcome }[] = [];
    const ready = [bytesToUnprefixedHex(parent)];
    for (let next = ready.shift(); next !== undefined; next = ready.shift()) {
      const children = this.byParent.get(next);
      if (children === undefined) continue;
      this.byParent.delete(next);
      for (const childKey of children) {
        const orphan = this.byHash.get(childKey);
        if (orphan === undefined) continue;
        this.byHash.delete(childKey);
        const outcome = await importBlock(orphan.block);
        results.push({ orphan, outcome });
        if (outcome.status === "INVALID_BLOCK" || outcome.status === "NO_PARENT") this.dropDescendants(childKey);
        else ready.push(childKey);
      }
    }
    return results;
  }

  private dropDescendants(key: string): void {
    const children = this.byParent.get(key);
    this.byParent.delete(key);
    for (const child of children ?? []) {
      this.byHash.delete(child);
      this.dropDescendants(child);
    }
  }

  private remove(key: string): void {
    const orphan = this.byHash.get(key);
    if (orphan === undefined) return;
    this.byHash.delete(key);
    const parent = bytesToUnprefixedHex(orphan.block.header.fields.parentHash);
    const siblings = this.byParent.get(parent);
    siblings?.delete(key);
    if (siblings?.size === 0) this.byParent.delete(parent);
  }
}
