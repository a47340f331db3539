// A cache bounded by the memory its entries cost, in two generations: entries go into the young
// map; when the young map's cost reaches half the budget it becomes the old one and the previous
// old one is dropped. A hit in the old map moves the entry back to the young one. Nearly an LRU, at
// the cost of two Map operations, and the whole cache never costs more than its budget (plus one
// entry).
//
// What an entry of bytes costs (bytesEntryCost) is the resident memory it takes, not only its
// payload. A typed array of more than 64 bytes owns a backing store that node allocates with
// malloc, together with the bookkeeping V8 and node keep for each backing store (Buffers node cuts
// from its 8 KiB pool share one instead). Measured with node 20 as the growth of the process's
// resident memory per Map entry of a 64-character hex key and a Uint8Array of its own (60,000
// entries): some 420-520 bytes besides the key's characters and the bytes for values of 65 to 530
// bytes. Values V8 keeps in its heap (64 bytes or fewer) took 140-300; they are counted at the
// same rate, which errs towards holding less. For trie nodes of 70 to 530 bytes that overhead is
// most of the memory; 320 bytes, the share of V8's heap alone, made a budget hold a fifth to two
// fifths more than it said.

/** Resident bytes of one entry besides its key's characters and its value's bytes (see above). */
export const entryOverheadBytes = 500;

/** The cost of an entry with a string key and bytes (or null) as its value. */
export function bytesEntryCost(key: string, value: Uint8Array | null): number {
  return entryOverheadBytes + key.length + (value === null ? 0 : value.byteLength);
}

export class GenerationalCache<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  private youngCost = 0;
  private oldCost = 0;
  private readonly generationCost: number;

  /** `budget`: most the entries may cost together; `costOf` the cost of one entry. */
  constructor(
    budget: number,
    private readonly costOf: (key: string, value: V) => number,
  ) {
    this.generationCost = budget / 2;
  }

  get(key: string): V | undefined {
    const hit = this.young.get(key);
    if (hit !== undefined) return hit;
    const aged = this.old.get(key);
    if (aged !== undefined) this.set(key, aged);
    return aged;
  }

  set(key: string, value: V): void {
    if (this.young.has(key)) return;
    this.young.set(key, value);
    this.youngCost += this.costOf(key, value);
    if (this.youngCost >= this.generationCost) {
      this.old = this.young;
      this.oldCost = this.youngCost;
      this.young = new Map();
      this.youngCost = 0;
    }
  }

  /** Drops the entry under `key` from both generations (a value known to be of no further use). */
  delete(key: string): void {
    const young = this.young.get(key);
    if (young !== undefined) {
      this.young.delete(key);
      this.youngCost -= this.costOf(key, young);
    }
    const aged = this.old.get(key);
    if (aged !== undefined) {
      this.old.delete(key);
      this.oldCost -= this.costOf(key, aged);
    }
  }

  /** Entries held (an entry in both generations counts twice). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  /** What the held entries cost together, by `costOf`. */
  get cost(): number {
    return this.youngCost + this.oldCost;
  }
}
