// What the chain tells other modules about its head. Listeners are called synchronously, in the
// order they subscribed, once the blocks are on disk (the head, as every reader sees it), before
// the write promises of those blocks settle: whoever waited for a block finds every listener has
// seen it.
import type { Block } from "./block.js";
import type { ChainReceipt } from "./receipts.js";

export interface BlockWithReceipts {
  readonly block: Block;
  /** One per transaction, in order. */
  readonly receipts: readonly ChainReceipt[];
}

export interface ChainHeadListener {
  /** The head advanced by these blocks, oldest first (a group commit may bring several). */
  blocksAdded(blocks: readonly BlockWithReceipts[]): void;
  /**
   * These blocks left the canonical chain, newest first (a revert or reorganisation, which the
   * chain does not do yet). A reorganisation reports the removed blocks before the added ones.
   */
  blocksRemoved(blocks: readonly BlockWithReceipts[]): void;
}

/** What a listener does with an error it threw: the chain has written the blocks and goes on. */
export type ListenerErrorReporter = (error: unknown) => void;

/** Subscribers of one chain; a listener that throws does not stop the others nor the chain. */
export class ChainHeadListeners {
  private readonly listeners = new Map<ChainHeadListener, ListenerErrorReporter>();

  /** Adds a listener; the returned function removes it. */
  subscribe(listener: ChainHeadListener, reportError: ListenerErrorReporter): () => void {
    this.listeners.set(listener, reportError);
    return () => this.listeners.delete(listener);
  }

  notifyBlocksAdded(blocks: readonly BlockWithReceipts[]): void {
    this.notify((listener) => listener.blocksAdded(blocks));
  }

  notifyBlocksRemoved(blocks: readonly BlockWithReceipts[]): void {
    this.notify((listener) => listener.blocksRemoved(blocks));
  }

  private notify(call: (listener: ChainHeadListener) => void): void {
    for (const [listener, reportError] of this.listeners) {
      try {
        call(listener);
      } catch (error) {
        reportError(error);
      }
    }
  }
}
