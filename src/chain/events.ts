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
   * These blocks left the canonical chain, newest first (a revert, or a reorganisation, which
   * reports the removed blocks before the added ones).
   */
  blocksRemoved(blocks: readonly BlockWithReceipts[]): void;
  /**
   * A heavier branch became canonical (after blocksRemoved and blocksAdded told the blocks). Not
   * called for a dev revert, whose caller restores the pool itself. The chain waits for the
   * promise a listener answers before the next change (the pool takes back the removed
   * branch's transactions before the next block is built).
   */
  reorganised?(change: Reorganisation): void | Promise<void>;
}

/** A switch to a heavier branch: what left the canonical chain and what joined it. */
export interface Reorganisation {
  /** The last block both branches share. */
  readonly ancestor: Block;
  /** Newest first. */
  readonly removed: readonly BlockWithReceipts[];
  /** Oldest first; the last is the new head. */
  readonly added: readonly BlockWithReceipts[];
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

  /** Tells every listener of a reorganisation and settles once each has dealt with it (errors reported). */
  async notifyReorganised(change: Reorganisation): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const [listener, reportError] of this.listeners) {
      try {
        const answer = listener.reorganised?.(change);
        if (answer !== undefined) pending.push(answer.catch(reportError));
      } catch (error) {
        reportError(error);
      }
    }
    await Promise.all(pending);
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
