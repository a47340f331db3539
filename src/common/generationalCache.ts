// A cache bounded by the memory its entries cost, in two generations: entries go into the young
// map; when the young map's cost reaches half the budget it becomes the old one and the previous
// old one is dropped. A hit in the old map moves the entry back to the young one. Nearly an LRU, at
// the cost of two Map operations, and the whole cache never costs more than its budget (plus one
// entry).
//
// The cost of an entry is what it holds in the JavaScript heap, not only its payload: a Map entry
// with a hex-string key and a Uint8Array that owns its ArrayBuffer costs about 300 bytes besides
// the key's characters and the bytes (measured with node 20: Map slot, string header, Uint8Array
// and ArrayBuffer objects, the backing store's allocation). For trie nodes of 70 to 530 bytes that
// overhead is most of the memory, so a budget of payload bytes alone held two to four times more.

/** Heap bytes of one entry besides its key's characters and its value's bytes (see above). */
export const entryOverheadBytes = 320;

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

  /** Entries held (an entry in both generations counts twice). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  /** What the held entries cost together, by `costOf`. */
  get cost(): number {
    return this.youngCost + this.oldCost;
  }
}
