// The serving side of the request/response protocols (network brief 4; rskj: NodeBlockProcessor's
// process*Request): what this node answers peers from its stored chain. A request that does not
// decode, or asks for more than its protocol allows, is refused (InvalidRequestError: the peer
// gets result 1 and the network records an invalid message); unknown blocks are empty entries. A
// stored block found damaged (a header that does not hash to its key, a body that is not its
// header's) is left out like an unknown one, and reported: the rest of the answer still goes.
import type { Block } from "../chain/block.js";
import { StoredDataDamagedError, type StoredHeader } from "../chain/chain.js";
import type { PeerToPeerNetwork } from "../p2p/interface.js";
import {
  decodeBlocksRequest,
  decodeBodiesRequest,
  decodeHeadersRequest,
  decodeNumberRequest,
  encodeBlockHashAnswer,
  encodeHeadersAnswer,
  encodeItemsAnswer,
  encodeSkeletonAnswer,
  maxSkeletonChunks,
  MessageDecodingError,
  type SyncProtocols,
} from "./messages.js";

/**
 * What serving reads of the chain. The reads of blocks throw StoredDataDamagedError for a stored
 * block that is not what was written.
 */
export interface ServedChain {
  /** The last block on disk. */
  readonly head: Block;
  /** A stored block, its header checked against its hash and its body against its header. */
  servedBlock(hash: Uint8Array): Promise<Block | undefined>;
  /** A stored header as stored, checked against its hash, not decoded. */
  servedHeader(hash: Uint8Array): StoredHeader | undefined;
  /** A stored body in its wire form, its transactions not decoded, checked against its header. */
  wireBody(hash: Uint8Array): Uint8Array | undefined;
  getCanonicalHash(blockNumber: bigint): Promise<Uint8Array | undefined>;
}

/** The network's refusal, handed in so that sync/ loads nothing of libp2p. */
export type RefuseRequest = (reason: string) => Error;

/** Hears of a stored block found damaged while serving (the node logs it: `chain-node verify` lists every problem). */
export type DamageReporter = (error: StoredDataDamagedError) => void;

export class RequestServer {
  constructor(
    private readonly chain: ServedChain,
    private readonly chunkSize: number,
    private readonly refuse: RefuseRequest,
    private readonly reportDamage: DamageReporter = () => undefined,
  ) {}

  async register(network: PeerToPeerNetwork, protocols: SyncProtocols): Promise<void> {
    await network.serve(protocols.headers, (_peer, request) => this.guarded(() => this.headers(request)));
    await network.serve(protocols.bodies, (_peer, request) => this.guarded(() => this.bodies(request)));
    await network.serve(protocols.blocks, (_peer, request) => this.guarded(() => this.blocks(request)));
    await network.serve(protocols.blockHash, (_peer, request) => this.guarded(() => this.blockHash(request)));
    await network.serve(protocols.skeleton, (_peer, request) => this.guarded(() => this.skeleton(request)));
  }

  /**
   * Up to `count` headers walking parent links from `startHash`, newest first (empty when it is not
   * stored); the walk stops before a damaged header, whose parent link cannot be trusted.
   */
  async headers(request: Uint8Array): Promise<Uint8Array> {
    const { startHash, count } = decodeHeadersRequest(request);
    const headers: Uint8Array[] = [];
    let cursor = this.undamaged(() => this.chain.servedHeader(startHash));
    while (cursor !== undefined && headers.length < count) {
      headers.push(cursor.encoded);
      const parentHash = cursor.parentHash;
      cursor = cursor.number === 0n ? undefined : this.undamaged(() => this.chain.servedHeader(parentHash));
    }
    return encodeHeadersAnswer(headers);
  }

  async bodies(request: Uint8Array): Promise<Uint8Array> {
    const hashes = decodeBodiesRequest(request);
    const bodies: (Uint8Array | undefined)[] = [];
    for (const hash of hashes) bodies.push(this.undamaged(() => this.chain.wireBody(hash)));
    return encodeItemsAnswer(bodies);
  }

  async blocks(request: Uint8Array): Promise<Uint8Array> {
    const hashes = decodeBlocksRequest(request);
    const blocks: (Uint8Array | undefined)[] = [];
    for (const hash of hashes) {
      try {
        blocks.push((await this.chain.servedBlock(hash))?.encode());
      } catch (error) {
        blocks.push(this.leftOut(error));
      }
    }
    return encodeItemsAnswer(blocks);
  }

  async blockHash(request: Uint8Array): Promise<Uint8Array> {
    const blockNumber = decodeNumberRequest(request, "block-hash request");
    return encodeBlockHashAnswer(blockNumber > this.chain.head.number ? undefined : await this.chain.getCanonicalHash(blockNumber));
  }

  /** The canonical block every chunk from the chunk start at or below `startNumber`, at most maxSkeletonChunks of them, then the head (rskj processSkeletonRequest). */
  async skeleton(request: Uint8Array): Promise<Uint8Array> {
    const startNumber = decodeNumberRequest(request, "skeleton request");
    const head = this.chain.head;
    const step = BigInt(this.chunkSize);
    const points: { number: bigint; hash: Uint8Array }[] = [];
    for (let number = startNumber - (startNumber % step); number < head.number && points.length < maxSkeletonChunks; number += step) {
      const hash = await this.chain.getCanonicalHash(number);
      if (hash === undefined) break;
      points.push({ number, hash });
    }
    points.push({ number: head.number, hash: head.hash });
    return encodeSkeletonAnswer(points);
  }

  /** `read`'s item, or none when the stored block is damaged. */
  private undamaged<T>(read: () => T | undefined): T | undefined {
    try {
      return read();
    } catch (error) {
      return this.leftOut(error);
    }
  }

  /** A damaged stored block is reported and left out of the answer; any other error goes on. */
  private leftOut(error: unknown): undefined {
    if (!(error instanceof StoredDataDamagedError)) throw error;
    this.reportDamage(error);
    return undefined;
  }

  private async guarded(serve: () => Promise<Uint8Array>): Promise<Uint8Array> {
    try {
      return await serve();
    } catch (error) {
      if (error instanceof MessageDecodingError) throw this.refuse(error.message);
      throw error;
    }
  }
}
