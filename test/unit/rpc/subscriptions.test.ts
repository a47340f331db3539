// The subscription hub without sockets: notifications held until the answer naming them is sent,
// the bound on what is held, unsubscribing, the per-connection limit, and closing.
import { expect } from "chai";
import type { ChainHeadListener } from "../../../src/chain/events.js";
import type { ChainTransaction } from "../../../src/chain/transactions.js";
import { SubscriptionHub, TooManySubscriptionsError } from "../../../src/rpc/subscriptions.js";

function fakeSources() {
  let pending: ((transactions: readonly ChainTransaction[]) => void) | undefined;
  const chain = {
    subscribeHead: (_listener: ChainHeadListener) => () => undefined,
    getTotalDifficulty: async () => 1n,
  };
  const pool = {
    subscribePending(listener: (transactions: readonly ChainTransaction[]) => void) {
      pending = listener;
      return () => (pending = undefined);
    },
  };
  const announce = (...bytes: number[]) => pending?.(bytes.map((byte) => ({ hash: new Uint8Array(32).fill(byte) }) as unknown as ChainTransaction));
  return { chain, pool, announce };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function hashesOf(sent: string[]): string[] {
  return sent.map((text) => (JSON.parse(text) as { params: { result: string } }).params.result.slice(0, 4));
}

describe("rpc/subscriptions", () => {
  it("holds notifications until the answer is sent, then sends them in order", async () => {
    const { chain, pool, announce } = fakeSources();
    const hub = new SubscriptionHub(chain, pool, { maxSubscriptionsPerConnection: 10, reportError: (error) => { throw error; } });
    const sent: string[] = [];
    const connection = hub.openConnection({ send: (text) => sent.push(text), heldLimitChars: 1_000_000, overflow: () => expect.fail("no overflow") });
    const scope = connection.messageScope();
    const id = scope.subscribe({ kind: "newPendingTransactions", fullTransactions: false });
    announce(1, 2);
    await settle();
    expect(sent).to.deep.equal([]);
    scope.answered();
    announce(3);
    await settle();
    expect(hashesOf(sent)).to.deep.equal(["0x01", "0x02", "0x03"]);
    expect(JSON.parse(sent[0]!)).to.deep.include({ method: "eth_subscription" });
    expect((JSON.parse(sent[0]!) as { params: { subscription: string } }).params.subscription).to.equal(id);
    expect(connection.messageScope().unsubscribe(id)).to.equal(true);
    announce(4);
    await settle();
    expect(sent).to.have.length(3);
    hub.close();
  });

  it("tells the transport when held notifications pass its limit", async () => {
    const { chain, pool, announce } = fakeSources();
    const hub = new SubscriptionHub(chain, pool, { maxSubscriptionsPerConnection: 10, reportError: (error) => { throw error; } });
    const overflows: number[] = [];
    const connection = hub.openConnection({ send: () => undefined, heldLimitChars: 500, overflow: (held) => overflows.push(held) });
    connection.messageScope().subscribe({ kind: "newPendingTransactions", fullTransactions: false });
    announce(1, 2);
    await settle();
    expect(overflows).to.deep.equal([]);
    announce(3, 4, 5);
    await settle();
    expect(overflows.length).to.be.greaterThan(0);
    expect(overflows[0]).to.be.greaterThan(500);
    hub.close();
  });

  it("limits subscriptions per connection and frees them when the connection closes", () => {
    const { chain, pool } = fakeSources();
    const hub = new SubscriptionHub(chain, pool, { maxSubscriptionsPerConnection: 2, reportError: () => undefined });
    const transport = { send: () => undefined, heldLimitChars: 1000, overflow: () => undefined };
    const first = hub.openConnection(transport);
    const second = hub.openConnection(transport);
    const scope = first.messageScope();
    scope.subscribe({ kind: "newHeads" });
    scope.subscribe({ kind: "syncing" });
    expect(() => scope.subscribe({ kind: "newHeads" })).to.throw(TooManySubscriptionsError, "too many subscriptions on this connection (2)");
    second.messageScope().subscribe({ kind: "newHeads" });
    expect(hub.size).to.equal(3);
    first.close();
    expect(hub.size).to.equal(1);
    hub.close();
    expect(hub.size).to.equal(0);
  });
});
