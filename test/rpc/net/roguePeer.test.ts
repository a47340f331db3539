// A real node (TCP on 127.0.0.2, mining off) and a rogue peer on 127.0.0.4: a bare peer-to-peer
// network with the node's chain status, which passes the handshake and then gossips what it likes.
// A block whose header passes the gossip checks but whose execution fails, and one whose proof of
// work is broken, are both refused and their sender recorded and disconnected; a malformed
// transaction is recorded and kept out of the pool; a valid one reaches the pool; its requests are
// served from the chain, and one over a limit refused and recorded.
import { expect } from "chai";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { Block } from "../../../src/chain/block.js";
import { BlockHeader } from "../../../src/chain/header.js";
import type { ChainTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { bytesToHex, hexToBytes } from "../../../src/common/hex.js";
import { encodeRlp } from "../../../src/common/rlp.js";
import { proveBlock } from "../../../src/mining/blockProof.js";
import { findNetworkProfile, type ChainServices } from "../../../src/node/index.js";
import type { ChainStatus, GossipTopic, PeerRecord } from "../../../src/p2p/interface.js";
import { PeerRequestError, startPeerNetwork, type PeerToPeerNetwork } from "../../../src/p2p/network.js";
import { blockTopic, decodeBlockHashAnswer, decodeHeadersAnswer, decodeSkeletonAnswer, encodeHeadersRequest, encodeNumberRequest, syncProtocols, transactionTopic } from "../../../src/sync/messages.js";
import { mineBlocks, openTestChain, signedTransfer } from "../../helpers/chainPair.js";
import { newNodeKey, tcpP2pOptions, testTimings, TestStatusSource, waitUntilAnswer } from "../../helpers/p2p.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const stranger = "0x00000000000000000000000000000000000000aa";
const noMergedMining = { mergedMiningHeader: new Uint8Array(), mergedMiningMerkleProof: new Uint8Array(), mergedMiningCoinbaseTransaction: new Uint8Array() };

/**
 * A rogue: `target`'s status, `target` as its bootnode (never redialled within a test), past the
 * handshake on both sides; kept in `rogues` for the suite to stop.
 */
async function startRogue(target: TestNode, targetStatus: ChainStatus, rogues: PeerToPeerNetwork[]): Promise<PeerToPeerNetwork> {
  const rogue = await startPeerNetwork({
    options: tcpP2pOptions("127.0.0.4", { bootnodes: target.node.peerNetwork!.multiaddrs() }),
    privateKey: newNodeKey(),
    status: new TestStatusSource(targetStatus),
    log: createLogger("silent"),
    userAgent: "rogue",
    timings: { ...testTimings, redialFirstMs: 600_000, redialMaxMs: 600_000, statusRefreshMs: 600_000 },
  });
  rogues.push(rogue);
  await waitUntilAnswer(async () => rogue.readyPeers().length === 1 && target.node.peerNetwork!.readyPeers().some((peer) => peer.peerId === rogue.peerId), "the rogue past the handshake on both sides");
  return rogue;
}

describe("a rogue peer against a real node over TCP (127.0.0.2 and 127.0.0.4)", function () {
  this.timeout(60_000);
  let node: TestNode;
  /** Chain services on the same genesis, where the rogue's blocks and transactions are made. */
  let forge: ChainServices;
  /** Block 1 with a transfer, mined and proven in `forge`. */
  let honest: Block;
  let status: ChainStatus;
  const rogues: PeerToPeerNetwork[] = [];

  before(async () => {
    node = await startTestNode({ rpc: { host: "127.0.0.2" }, chain: { mining: { kind: "off" } }, p2p: tcpP2pOptions("127.0.0.2"), sync: { requestTimeoutMs: 5_000 } });
    forge = await openTestChain();
    [honest] = await mineBlocks(forge, 1, async () => [await signedTransfer(forge, "cow", 0, stranger)]);
    const genesis = (await node.client.eth_getBlockByNumber("0x0", false))!;
    const genesisHash = genesis.hash!;
    expect(bytesToHex((await forge.chain.getBlockByNumber(0n))!.hash)).to.equal(genesisHash);
    const profile = findNetworkProfile(33)!;
    expect(profile.p2pNetworkId).to.equal(7771);
    status = {
      networkId: profile.p2pNetworkId,
      chainId: 33n,
      genesisHash: hexToBytes(genesisHash),
      bestNumber: 0n,
      bestHash: hexToBytes(genesisHash),
      bestParentHash: new Uint8Array(32),
      totalDifficulty: BigInt(genesis.totalDifficulty),
    };
  });

  afterEach(async () => {
    await Promise.all(rogues.splice(0).map((rogue) => rogue.stop()));
  });

  after(async () => {
    await node?.stop();
    await forge?.close();
  });

  function recordOf(rogue: PeerToPeerNetwork): PeerRecord | undefined {
    return node.node.peerNetwork!.peerRecord(rogue.peerId);
  }

  /**
   * Publishes `make(attempt)` until gossipsub sends it to the node: the node's subscriptions reach
   * the rogue shortly after connecting, and a message sent to nobody is not sent again (its id is
   * the hash of its bytes), so each attempt is a different message. Answers the one that went.
   */
  async function publishToNode<T extends { bytes: Uint8Array }>(rogue: PeerToPeerNetwork, topic: GossipTopic, make: (attempt: number) => Promise<T> | T): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (let attempt = 0; ; attempt++) {
      const message = await make(attempt);
      if ((await rogue.publish(topic, message.bytes)) > 0) return message;
      if (Date.now() > deadline) throw new Error(`the node never subscribed to ${topic.name} as the rogue sees it`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The reasons the node logged for penalising `rogue`. */
  function penalties(rogue: PeerToPeerNetwork): string[] {
    return node.logs.filter((record) => record.msg === "peer sent something invalid" && record.peer === rogue.peerId).map((record) => String(record.reason));
  }

  it("a block that passes the gossip checks but fails execution (a wrong state root, proof of work made again): refused, the head unchanged, the rogue recorded and disconnected", async () => {
    const rogue = await startRogue(node, status, rogues);
    const sent = await publishToNode(rogue, blockTopic, (attempt) => {
      const fields = { ...honest.header.fields, ...noMergedMining, stateRoot: new Uint8Array(32).fill(attempt + 1) };
      const block = proveBlock(new Block(new BlockHeader(fields), honest.transactions, honest.uncles));
      return { block, bytes: block.encode() };
    });
    await waitUntilAnswer(async () => recordOf(rogue)?.events.invalidBlock === 1, "invalidBlock recorded for the rogue");
    await waitUntilAnswer(async () => (await node.client.net_peerCount()) === "0x0", "the rogue disconnected");
    await waitUntilAnswer(async () => rogue.readyPeers().length === 0, "the rogue sees the node gone");
    // It went through the gossip checks to the importer, which refused it by the state root.
    const [reason] = penalties(rogue);
    expect(reason).to.match(new RegExp(`^block 1 ${bytesToHex(sent.block.hash)} refused: stateRoot: `));
    expect(recordOf(rogue)!.events.validBlock).to.equal(undefined);
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
    expect(await node.client.eth_getBlockByHash(bytesToHex(sent.block.hash), false)).to.equal(null);
  });

  it("a block whose proof of work does not commit to its header: rejected at gossip, never imported, the rogue recorded and disconnected", async () => {
    const rogue = await startRogue(node, status, rogues);
    // The honest block's proof, kept, over a header changed after it was made.
    const sent = await publishToNode(rogue, blockTopic, (attempt) => {
      const block = new Block(new BlockHeader({ ...honest.header.fields, stateRoot: new Uint8Array(32).fill(100 + attempt) }), honest.transactions, honest.uncles);
      return { block, bytes: block.encode() };
    });
    await waitUntilAnswer(async () => recordOf(rogue)?.events.invalidBlock === 1, "invalidBlock recorded for the rogue");
    await waitUntilAnswer(async () => (await node.client.net_peerCount()) === "0x0", "the rogue disconnected");
    const [reason] = penalties(rogue);
    // The gossip verdict's reason (block, hash, rule), not the importer's ("refused: ...").
    expect(reason).to.match(new RegExp(`^block 1 ${bytesToHex(sent.block.hash)}: tagMissing: `));
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
    expect(await node.client.eth_getBlockByHash(bytesToHex(sent.block.hash), false)).to.equal(null);
  });

  it("malformed transactions on the tx topic: each recorded as invalidTransaction, none in the pool", async () => {
    const rogue = await startRogue(node, status, rogues);
    const cowWallet = new Wallet(keccak256(toUtf8Bytes("cow")));
    const kinds: [string, (attempt: number) => Promise<Uint8Array>][] = [
      ["an RLP list of three items", async (attempt) => encodeRlp([1, 2, attempt + 3])],
      ["another chain's transaction", async (attempt) => hexToBytes(await cowWallet.signTransaction({ type: 0, chainId: 34n, nonce: attempt, gasLimit: 21_000n, gasPrice: 0n, to: stranger, value: 1n }))],
      [
        "a signature with s above half the curve order",
        async (attempt) => {
          const fields = [attempt, 0, 21_000, hexToBytes(stranger), 1, new Uint8Array(), 101, new Uint8Array(32).fill(1), new Uint8Array(32).fill(0xff)];
          return encodeRlp(fields);
        },
      ],
    ];
    for (const [index, [what, make]] of kinds.entries()) {
      await publishToNode(rogue, transactionTopic, async (attempt) => ({ bytes: await make(attempt) }));
      await waitUntilAnswer(async () => recordOf(rogue)?.events.invalidTransaction === index + 1, `invalidTransaction recorded for ${what}`);
    }
    expect(recordOf(rogue)!.events.validTransaction).to.equal(undefined);
    expect(await node.client.txpool_status()).to.deep.equal({ pending: 0, queued: 0 });
    expect(await node.client.txpool_content()).to.deep.equal({ pending: {}, queued: {} });
  });

  it("the node serves the rogue's requests from its chain and refuses one over a limit, recording it", async () => {
    const rogue = await startRogue(node, status, rogues);
    const nodeId = node.node.peerNetwork!.peerId;
    const protocols = syncProtocols(5_000);
    const [genesis] = decodeHeadersAnswer(await rogue.request(nodeId, protocols.headers, encodeHeadersRequest(status.genesisHash, 192)), 192);
    expect(bytesToHex(genesis!.hash)).to.equal(bytesToHex(status.genesisHash));
    expect(decodeBlockHashAnswer(await rogue.request(nodeId, protocols.blockHash, encodeNumberRequest(0n)))).to.deep.equal(status.genesisHash);
    expect(decodeBlockHashAnswer(await rogue.request(nodeId, protocols.blockHash, encodeNumberRequest(1n)))).to.equal(undefined);
    expect(decodeSkeletonAnswer(await rogue.request(nodeId, protocols.skeleton, encodeNumberRequest(0n)))).to.deep.equal([{ number: 0n, hash: status.genesisHash }]);
    expect(recordOf(rogue)!.events.invalidMessage).to.equal(undefined);
    let refusal: unknown;
    await rogue.request(nodeId, protocols.headers, encodeHeadersRequest(status.genesisHash, 193)).catch((error: unknown) => (refusal = error));
    expect(refusal).to.be.instanceOf(PeerRequestError);
    expect((refusal as PeerRequestError).failure).to.equal("refused");
    expect((refusal as Error).message).to.equal("headers: the peer refused the request: headers count 193 is not in 1..192");
    expect(recordOf(rogue)!.events.invalidMessage).to.equal(1);
  });

  it("a valid transaction from the rogue lands in the node's pool", async () => {
    const rogue = await startRogue(node, status, rogues);
    const sent = await publishToNode(rogue, transactionTopic, async (attempt): Promise<{ transaction: ChainTransaction; bytes: Uint8Array }> => {
      const transaction = await signedTransfer(forge, "cow", 0, stranger, BigInt(attempt + 1));
      return { transaction, bytes: transaction.raw };
    });
    const hash = bytesToHex(sent.transaction.hash);
    await waitUntilAnswer(async () => (await node.client.txpool_status()).pending === 1, "the transaction pending in the node's pool");
    const content = await node.client.txpool_content();
    const [pooled] = content.pending[cow.slice(2)]!["0"] as { hash: string; from: string }[];
    expect(pooled!.hash).to.equal(hash);
    expect(pooled!.from).to.equal(cow);
    expect(recordOf(rogue)!.events.validTransaction).to.equal(1);
    expect(recordOf(rogue)!.events.invalidTransaction).to.equal(undefined);
  });
});

describe("a rogue peer's block relayed through an honest node (rogue 127.0.0.4 -> 127.0.0.2 -> 127.0.0.3)", function () {
  this.timeout(60_000);
  const running: TestNode[] = [];
  const rogues: PeerToPeerNetwork[] = [];
  let forge: ChainServices;

  after(async () => {
    await Promise.all(rogues.map((rogue) => rogue.stop()));
    await Promise.all(running.map((each) => each.stop()));
    await forge?.close();
  });

  async function start(host: string, bootnodes: string[] = []): Promise<TestNode> {
    const started = await startTestNode({ rpc: { host }, chain: { mining: { kind: "off" } }, p2p: tcpP2pOptions(host, { bootnodes }), sync: { requestTimeoutMs: 5_000 } });
    running.push(started);
    return started;
  }

  it("the honest node that relays blocks is not blamed for a block that fails execution: it relays only what it imported", async () => {
    forge = await openTestChain();
    const [first, second] = await mineBlocks(forge, 2, async (index) => [await signedTransfer(forge, "cow", index, stranger)]);
    const relay = await start("127.0.0.2");
    const far = await start("127.0.0.3", relay.node.peerNetwork!.multiaddrs());
    await waitUntilAnswer(async () => (await far.client.net_peerCount()) === "0x1", "the far node connected to the relay");
    const genesis = (await relay.client.eth_getBlockByNumber("0x0", false))!;
    const status: ChainStatus = { networkId: 7771, chainId: 33n, genesisHash: hexToBytes(genesis.hash!), bestNumber: 0n, bestHash: hexToBytes(genesis.hash!), bestParentHash: new Uint8Array(32), totalDifficulty: BigInt(genesis.totalDifficulty) };

    async function publishOnce(rogue: PeerToPeerNetwork, blocks: (attempt: number) => Block): Promise<Block> {
      const deadline = Date.now() + 10_000;
      for (let attempt = 0; ; attempt++) {
        const block = blocks(attempt);
        if ((await rogue.publish(blockTopic, block.encode())) > 0) return block;
        if (Date.now() > deadline) throw new Error("the relay never subscribed to the block topic as the rogue sees it");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    // A valid block 1 from the rogue goes through the relay to the far node.
    const rogue = await startRogue(relay, status, rogues);
    await publishOnce(rogue, () => first!);
    await waitUntilAnswer(async () => (await far.client.eth_blockNumber()) === "0x1", "block 1 at the far node");

    // Block 2 with a wrong state root (proof of work made again): the relay refuses it and drops the rogue.
    const bad = await publishOnce(rogue, (attempt) => proveBlock(new Block(new BlockHeader({ ...second!.header.fields, ...noMergedMining, stateRoot: new Uint8Array(32).fill(attempt + 1) }), second!.transactions)));
    await waitUntilAnswer(async () => relay.node.peerNetwork!.peerRecord(rogue.peerId)?.events.invalidBlock === 1, "the relay blames the rogue");

    // The valid block 2 from another rogue: once it is at the far node, the bad one, sent earlier, would have been too.
    const other = await startRogue(relay, status, rogues);
    await publishOnce(other, () => second!);
    await waitUntilAnswer(async () => (await far.client.eth_blockNumber()) === "0x2", "block 2 at the far node");
    expect((await far.client.eth_getBlockByNumber("0x2", false))!.hash).to.equal(bytesToHex(second!.hash));
    expect(await far.client.eth_getBlockByHash(bytesToHex(bad.hash), false)).to.equal(null);
    const relayAtFar = far.node.peerNetwork!.peerRecord(relay.node.peerNetwork!.peerId)!;
    expect(relayAtFar.events.invalidBlock, "the far node blamed the relay").to.equal(undefined);
    expect(relayAtFar.events.successfulHandshake, "the far node hung up on the relay and it reconnected").to.equal(1);
    expect(far.logs.filter((record) => record.msg === "peer sent something invalid")).to.deep.equal([]);
  });
});
