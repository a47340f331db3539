// The database behind the state tries (@ethereumjs/mpt's DB interface). Trie writes are held in
// memory until the block that made them is written: `takeWrites` hands them over to that block's
// batch, so a block and its state reach the disk together or not at all. Nodes are keyed by their
// own hash, so a node written twice, or left over from a block that was never written, is harmless.
import type { BatchDBOp, DB } from "@ethereumjs/util";
import { bytesToUnprefixedHex } from "../common/hex.js";
import type { KeyValueStore, StoreOperation } from "./keyValueStore.js";
import { storeKeys } from "./keys.js";

/** The tries key nodes by unprefixed hex; values are bytes (hex text only if a trie is set up so). */
type TrieKey = string | Uint8Array;
type TrieValue = string | Uint8Array;

function valueBytes(value: TrieValue): Uint8Array {
  return typeof value === "string" ? Buffer.from(value, "hex") : value;
}

function keyBytes(key: TrieKey): Uint8Array {
  return typeof key === "string" ? Buffer.from(key, "hex") : key;
}

function keyText(key: TrieKey): string {
  return typeof key === "string" ? key : bytesToUnprefixedHex(key);
}

export class TrieNodeStore implements DB<string, TrieValue> {
  /** Written by the tries, not yet on disk (hex key -> node). */
  private unwritten = new Map<string, Uint8Array>();
  /** Handed to a batch that is being written: still served until the write completes. */
  private inFlight = new Map<string, Uint8Array>();

  constructor(private readonly store: KeyValueStore) {}

  async get(key: TrieKey): Promise<Uint8Array | undefined> {
    const text = keyText(key);
    const held = this.unwritten.get(text) ?? this.inFlight.get(text);
    if (held !== undefined) return held;
    return this.store.get(storeKeys.trieNode(keyBytes(key)));
  }

  async put(key: TrieKey, value: TrieValue): Promise<void> {
    this.unwritten.set(keyText(key), valueBytes(value));
  }

  async del(): Promise<void> {
    // Tries run without pruning: a node may be shared by several state roots, so none is deleted.
  }

  async batch(operations: BatchDBOp<string, TrieValue>[]): Promise<void> {
    for (const operation of operations) {
      if (operation.type === "put") this.unwritten.set(keyText(operation.key), valueBytes(operation.value));
    }
  }

  shallowCopy(): DB<string, TrieValue> {
    return this;
  }

  async open(): Promise<void> {}

  /**
   * Moves every unwritten node into `operations`. Call `writeFinished` once the batch holding them
   * is on disk; until then the nodes are still served from memory.
   */
  takeWrites(operations: StoreOperation[]): void {
    for (const [text, value] of this.unwritten) {
      this.inFlight.set(text, value);
      operations.push({ type: "put", key: storeKeys.trieNode(Buffer.from(text, "hex")), value });
    }
    this.unwritten = new Map();
  }

  writeFinished(): void {
    this.inFlight = new Map();
  }
}
