// txpool_content, txpool_inspect and txpool_status: executable (pending) versus nonce-gap (queued)
// transactions as they arrive and as blocks are mined, without automine and with it.
import { expect } from "chai";
import { expectValidResult } from "../../helpers/results.js";
import { startManualNode, type ManualNode } from "../../helpers/manualNode.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const cow1 = "0x7986b3df570230288501eea3d890bd66948c9b79";
const stranger = "0x00000000000000000000000000000000000000aa";
/** A contract creation's init code: returns an empty runtime. */
const initCode = "0x600080f3";

async function poolState(client: ManualNode["client"]) {
  const [content, inspect, status] = await Promise.all([client.txpool_content(), client.txpool_inspect(), client.txpool_status()]);
  expectValidResult("txpool_content", content);
  expectValidResult("txpool_inspect", inspect);
  expectValidResult("txpool_status", status);
  return { content, inspect, status };
}

/** sender (no 0x) -> nonces held, per section. */
function nonceMap(section: Record<string, Record<string, unknown[]>>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(section).map(([sender, byNonce]) => [sender, Object.keys(byNonce)]));
}

describe("txpool: content, inspect and status without automine", () => {
  let node: ManualNode;
  beforeEach(async () => (node = await startManualNode()));
  afterEach(() => node.stop());

  it("starts empty", async () => {
    const { content, inspect, status } = await poolState(node.client);
    expect(content).to.deep.equal({ pending: {}, queued: {} });
    expect(inspect).to.deep.equal({ pending: {}, queued: {} });
    expect(status).to.deep.equal({ pending: 0, queued: 0 });
  });

  it("queues a nonce gap, keeps it queued after a block, and makes it pending once the gap is filled", async () => {
    const first = await node.client.eth_sendTransaction({ from: cow, to: stranger, value: "0x2a", nonce: "0x0" });
    const creation = await node.client.eth_sendTransaction({ from: cow, data: initCode, nonce: "0x2", gasPrice: "0x3", gas: "0x186a0" });
    const other = await node.client.eth_sendTransaction({ from: cow1, to: cow, value: "0x1", nonce: "0x0" });

    let { content, inspect, status } = await poolState(node.client);
    expect(status).to.deep.equal({ pending: 2, queued: 1 });
    expect(nonceMap(content.pending)).to.deep.equal({ [cow.slice(2)]: ["0"], [cow1.slice(2)]: ["0"] });
    expect(nonceMap(content.queued)).to.deep.equal({ [cow.slice(2)]: ["2"] });
    expect(content.pending[cow.slice(2)]!["0"]).to.deep.equal([
      {
        blockHash: `0x${"0".repeat(64)}`,
        blockNumber: null,
        transactionIndex: null,
        from: cow,
        gas: "0x15f90",
        gasPrice: "0x0",
        hash: first,
        input: "0x",
        nonce: "0x0",
        to: stranger,
        value: "0x2a",
      },
    ]);
    expect(content.pending[cow1.slice(2)]!["0"]![0]!.hash).to.equal(other);
    expect(content.queued[cow.slice(2)]!["2"]).to.deep.equal([
      {
        blockHash: `0x${"0".repeat(64)}`,
        blockNumber: null,
        transactionIndex: null,
        from: cow,
        gas: "0x186a0",
        gasPrice: "0x3",
        hash: creation,
        input: initCode,
        nonce: "0x2",
        to: null,
        value: "0x0",
      },
    ]);
    expect(inspect).to.deep.equal({
      pending: { [cow.slice(2)]: { "0": [`${stranger.slice(2)}: 42 wei + 90000 x 0 gas`] }, [cow1.slice(2)]: { "0": [`${cow.slice(2)}: 1 wei + 90000 x 0 gas`] } },
      queued: { [cow.slice(2)]: { "2": ["contract creation: 0 wei + 100000 x 3 gas"] } },
    });

    // The block takes the executable transactions; the one behind the gap stays queued.
    const block = await node.mine();
    expect(block.transactions).to.have.length(2);
    ({ content, status } = await poolState(node.client));
    expect(status).to.deep.equal({ pending: 0, queued: 1 });
    expect(nonceMap(content.pending)).to.deep.equal({});
    expect(nonceMap(content.queued)).to.deep.equal({ [cow.slice(2)]: ["2"] });

    // Filling the gap makes both executable.
    await node.client.eth_sendTransaction({ from: cow, to: stranger, nonce: "0x1" });
    ({ content, status } = await poolState(node.client));
    expect(status).to.deep.equal({ pending: 2, queued: 0 });
    expect(nonceMap(content.pending)).to.deep.equal({ [cow.slice(2)]: ["1", "2"] });
    expect(content.pending[cow.slice(2)]!["2"]![0]!.hash).to.equal(creation);
    expect(nonceMap(content.queued)).to.deep.equal({});

    expect((await node.mine()).transactions).to.have.length(2);
    ({ status } = await poolState(node.client));
    expect(status).to.deep.equal({ pending: 0, queued: 0 });
    expect((await node.client.eth_getTransactionReceipt(creation))!.status).to.equal("0x1");
  });
});

describe("txpool: with automine", () => {
  let node: TestNode;
  beforeEach(async () => (node = await startTestNode()));
  afterEach(() => node.stop());

  it("holds only what waits behind a nonce gap, and empties when the gap is filled and mined", async () => {
    const later = await node.client.eth_sendTransaction({ from: cow, to: stranger, nonce: "0x1" });
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
    let { content, status } = await poolState(node.client);
    expect(status).to.deep.equal({ pending: 0, queued: 1 });
    expect(content.queued[cow.slice(2)]!["1"]![0]!.hash).to.equal(later);

    await node.client.eth_sendTransaction({ from: cow, to: stranger, nonce: "0x0" });
    expect(await node.client.eth_blockNumber()).to.equal("0x2");
    ({ content, status } = await poolState(node.client));
    expect(status).to.deep.equal({ pending: 0, queued: 0 });
    expect(content).to.deep.equal({ pending: {}, queued: {} });
  });
});
