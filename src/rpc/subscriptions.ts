// eth_subscribe over WebSocket: newHeads, logs (removed: true when evm_revert takes their block
// away), newPendingTransactions and syncing. One hub listens to the chain's head and the pool's
// pending transactions and hands each event, encoded once, to the subscriptions of every
// connection, in the order the chain and the pool made them. What a connection may hold is
// bounded: subscriptions by a count, notifications by the transport's send buffer (webSocket.ts).
import { randomBytes } from "node:crypto";
import type { Chain } from "../chain/chain.js";
import type { BlockWithReceipts, ChainHeadListener } from "../chain/events.js";
import type { ChainTransaction } from "../chain/transactions.js";
import { bytesToHex } from "../common/hex.js";
import { blockLogsOf, collectBlockLogs, type LocatedLog, type LogMatcher } from "../logs/index.js";
import type { TransactionPool } from "../txpool/transactionPool.js";
import { formatBlock, formatLocatedLogs, formatTransaction } from "./format.js";

export type SubscriptionKind = "newHeads" | "logs" | "newPendingTransactions" | "syncing";

/** What one subscription asks for. */
export type SubscriptionRequest =
  | { readonly kind: "newHeads" | "syncing" }
  | { readonly kind: "logs"; readonly matcher: LogMatcher }
  | { readonly kind: "newPendingTransactions"; readonly fullTransactions: boolean };

/** One subscription more than a connection may hold. */
export class TooManySubscriptionsError extends Error {
  constructor(readonly limit: number) {
    super(`too many subscriptions on this connection (${limit}); unsubscribe some`);
  }
}

interface Subscription {
  readonly id: string;
  readonly request: SubscriptionRequest;
  /** False until the answer that names it is sent: what comes meanwhile waits in `held`. */
  active: boolean;
  held: string[];
}

/** 128 random bits as a QUANTITY (no leading zeros), as geth's ids. */
function randomSubscriptionId(): string {
  return `0x${BigInt(`0x${randomBytes(16).toString("hex")}`).toString(16)}`;
}

/** The one spelling of a QUANTITY id: lower case, no leading zeros. */
function idKey(id: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{1,64}$/.test(id)) return undefined;
  return `0x${BigInt(id).toString(16)}`;
}

function notification(id: string, resultJson: string): string {
  return `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":${resultJson}}}`;
}

/**
 * The subscriptions of one request: they start receiving once the answer naming them is sent
 * (`answered`), so no notification comes before the id it carries.
 */
export interface SubscriptionScope {
  subscribe(request: SubscriptionRequest): string;
  unsubscribe(id: string): boolean;
}

/** A connection's subscriptions. */
export class SubscriberConnection {
  readonly subscriptions = new Map<string, Subscription>();
  private closed = false;
  /** Characters of the notifications held for subscriptions whose answer is not sent yet. */
  private heldChars = 0;

  constructor(
    private readonly hub: SubscriptionHub,
    private readonly transport: SubscriberTransport,
    private readonly maxSubscriptions: number,
  ) {}

  /** A scope for one incoming message; call `answered()` once its answer is written. */
  messageScope(): SubscriptionScope & { answered(): void } {
    const started: Subscription[] = [];
    return {
      subscribe: (request) => {
        const subscription = this.add(request);
        started.push(subscription);
        return subscription.id;
      },
      unsubscribe: (id) => this.remove(id),
      answered: () => {
        for (const subscription of started) this.activate(subscription);
      },
    };
  }

  /** Ends every subscription (the connection closed). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const subscription of this.subscriptions.values()) this.hub.counted(subscription.request.kind, -1);
    this.subscriptions.clear();
    this.hub.connectionClosed(this);
  }

  /** Delivers a notification's result (JSON text) to a subscription. */
  deliver(subscription: Subscription, resultJson: string): void {
    const text = notification(subscription.id, resultJson);
    if (subscription.active) return this.transport.send(text);
    subscription.held.push(text);
    // Held while a batch runs on (at most its time limit), and bounded as what waits to be sent.
    this.heldChars += text.length;
    if (this.heldChars > this.transport.heldLimitChars) this.transport.overflow(this.heldChars);
  }

  private add(request: SubscriptionRequest): Subscription {
    if (this.subscriptions.size >= this.maxSubscriptions) throw new TooManySubscriptionsError(this.maxSubscriptions);
    let id = randomSubscriptionId();
    while (this.subscriptions.has(id)) id = randomSubscriptionId();
    const subscription: Subscription = { id, request, active: false, held: [] };
    this.subscriptions.set(id, subscription);
    this.hub.counted(request.kind, 1);
    return subscription;
  }

  private remove(id: string): boolean {
    const key = idKey(id);
    const subscription = key === undefined ? undefined : this.subscriptions.get(key);
    if (subscription === undefined) return false;
    this.subscriptions.delete(key!);
    this.hub.counted(subscription.request.kind, -1);
    return true;
  }

  private activate(subscription: Subscription): void {
    if (this.closed || this.subscriptions.get(subscription.id) !== subscription || subscription.active) return;
    subscription.active = true;
    const held = subscription.held;
    subscription.held = [];
    for (const text of held) {
      this.heldChars -= text.length;
      this.transport.send(text);
    }
    // The node does not sync: a syncing subscription says so once.
    if (subscription.request.kind === "syncing") this.transport.send(notification(subscription.id, "false"));
  }
}

/** Where a connection's notifications go. */
export interface SubscriberTransport {
  /** Writes a notification; the transport bounds what it buffers. */
  send(text: string): void;
  /** Most characters of notifications held before their subscription's answer is sent. */
  readonly heldLimitChars: number;
  /** Called when more are held: the transport closes the connection. */
  overflow(heldChars: number): void;
}

export interface SubscriptionHubOptions {
  /** Most subscriptions one connection may hold. */
  maxSubscriptionsPerConnection: number;
  /** Where a failure while delivering is reported (the chain and the pool go on). */
  reportError: (error: unknown) => void;
  /** Whether newHeads show baseFeePerGas (a node started with --typed-transactions). */
  baseFeePerGas?: boolean;
}

/** Every connection's subscriptions, fed by the chain and the pool. */
export class SubscriptionHub implements ChainHeadListener {
  private readonly connections = new Set<SubscriberConnection>();
  private readonly counts = new Map<SubscriptionKind, number>();
  /** Events run one after another: a newHeads block waits for its total difficulty, and later events for it. */
  private tail: Promise<void> = Promise.resolve();
  private readonly unsubscribe: (() => void)[];

  constructor(
    private readonly chain: Pick<Chain, "subscribeHead" | "getTotalDifficulty">,
    pool: Pick<TransactionPool, "subscribePending">,
    private readonly options: SubscriptionHubOptions,
  ) {
    this.unsubscribe = [
      chain.subscribeHead(this, options.reportError),
      pool.subscribePending((transactions) => this.pendingTransactionsAdded(transactions), options.reportError),
    ];
  }

  openConnection(transport: SubscriberTransport): SubscriberConnection {
    const connection = new SubscriberConnection(this, transport, this.options.maxSubscriptionsPerConnection);
    this.connections.add(connection);
    return connection;
  }

  /** Subscriptions held now, all connections together. */
  get size(): number {
    let total = 0;
    for (const count of this.counts.values()) total += count;
    return total;
  }

  /** @internal */
  counted(kind: SubscriptionKind, change: number): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + change);
  }

  /** @internal */
  connectionClosed(connection: SubscriberConnection): void {
    this.connections.delete(connection);
  }

  blocksAdded(blocks: readonly BlockWithReceipts[]): void {
    const heads = this.has("newHeads");
    if (!heads && !this.has("logs")) return;
    // Read now (synchronously, before the head moves on); the values come with the promises.
    const totalDifficulties = heads ? blocks.map(({ block }) => this.chain.getTotalDifficulty(block.hash)) : [];
    this.enqueue(async () => {
      const known = await Promise.all(totalDifficulties);
      for (let index = 0; index < blocks.length; index++) {
        const { block } = blocks[index]!;
        if (heads) {
          const { transactions: _omitted, ...header } = formatBlock(block, known[index] ?? 0n, false, this.options.baseFeePerGas);
          this.deliverTo("newHeads", () => true, JSON.stringify(header));
        }
        this.deliverLogs([blocks[index]!], false);
      }
    });
  }

  blocksRemoved(blocks: readonly BlockWithReceipts[]): void {
    if (!this.has("logs")) return;
    this.enqueue(() => this.deliverLogs(blocks, true));
  }

  /** Stops listening and forgets every connection's subscriptions. */
  close(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    for (const connection of [...this.connections]) connection.close();
  }

  private pendingTransactionsAdded(transactions: readonly ChainTransaction[]): void {
    if (!this.has("newPendingTransactions")) return;
    this.enqueue(() => {
      for (const transaction of transactions) {
        let hashJson: string | undefined;
        let wholeJson: string | undefined;
        for (const connection of this.connections) {
          for (const subscription of connection.subscriptions.values()) {
            const { request } = subscription;
            if (request.kind !== "newPendingTransactions") continue;
            const json = request.fullTransactions
              ? (wholeJson ??= JSON.stringify(formatTransaction(transaction, undefined)))
              : (hashJson ??= `"${bytesToHex(transaction.hash)}"`);
            connection.deliver(subscription, json);
          }
        }
      }
    });
  }

  private deliverLogs(blocks: readonly BlockWithReceipts[], removed: boolean): void {
    if (!this.has("logs")) return;
    for (const { block, receipts } of blocks) {
      const blockLogs = blockLogsOf(block, receipts);
      const encoded = new Map<LocatedLog, string>();
      const shared = new Map<LocatedLog["log"], LocatedLog>();
      for (const connection of this.connections) {
        for (const subscription of connection.subscriptions.values()) {
          const { request } = subscription;
          if (request.kind !== "logs") continue;
          const found: LocatedLog[] = [];
          collectBlockLogs(request.matcher, blockLogs, removed, found, shared);
          for (const located of found) {
            let json = encoded.get(located);
            if (json === undefined) {
              json = JSON.stringify(formatLocatedLogs([located])[0]);
              encoded.set(located, json);
            }
            connection.deliver(subscription, json);
          }
        }
      }
    }
  }

  private deliverTo(kind: SubscriptionKind, wanted: (request: SubscriptionRequest) => boolean, json: string): void {
    for (const connection of this.connections) {
      for (const subscription of connection.subscriptions.values()) {
        if (subscription.request.kind === kind && wanted(subscription.request)) connection.deliver(subscription, json);
      }
    }
  }

  private has(kind: SubscriptionKind): boolean {
    return (this.counts.get(kind) ?? 0) > 0;
  }

  private enqueue(task: () => void | Promise<void>): void {
    this.tail = this.tail.then(task).catch((error: unknown) => this.options.reportError(error));
  }
}
