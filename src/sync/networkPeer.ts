// A connected peer as the sync state machines see it (SyncPeer), over the request/response
// protocols of sync/messages.ts. Requests larger than a protocol allows are split; an answer cut
// short by the peer's soft size limit is asked again for the rest. What comes back is decoded and
// shape-checked here (counts, sizes, RLP); whether it is the right chain is the caller's to check.
import type { Common } from "@ethereumjs/common";
import type { BlockHeader } from "../chain/header.js";
import type { TypedTransactionsAccepted } from "../chain/transactions.js";
import type { PeerToPeerNetwork, RequestProtocol } from "../p2p/interface.js";
import {
  decodeBlock,
  decodeBlockHashAnswer,
  decodeBlocksAnswer,
  decodeBodiesAnswer,
  decodeHeadersAnswer,
  decodeSkeletonAnswer,
  encodeHashesRequest,
  encodeHeadersRequest,
  encodeNumberRequest,
  maxBlocksPerRequest,
  maxBodiesPerRequest,
  maxHeadersPerRequest,
  MessageDecodingError,
  signedBodyOf,
  type SyncProtocols,
} from "./messages.js";
import type { Block } from "../chain/block.js";
import type { BlockBody, PeerBest, SkeletonPoint, SyncPeer } from "./syncPeer.js";

export interface BlockDecoding {
  readonly common: Common;
  readonly typed: TypedTransactionsAccepted;
}

export class NetworkSyncPeer implements SyncPeer {
  constructor(
    readonly id: string,
    readonly best: PeerBest,
    private readonly network: PeerToPeerNetwork,
    private readonly protocols: SyncProtocols,
    private readonly decoding: BlockDecoding,
  ) {}

  async blockHashAt(blockNumber: bigint): Promise<Uint8Array | undefined> {
    return decodeBlockHashAnswer(await this.network.request(this.id, this.protocols.blockHash, encodeNumberRequest(blockNumber)));
  }

  async skeleton(startNumber: bigint): Promise<readonly SkeletonPoint[]> {
    return decodeSkeletonAnswer(await this.network.request(this.id, this.protocols.skeleton, encodeNumberRequest(startNumber)));
  }

  async headers(startHash: Uint8Array, count: number): Promise<readonly BlockHeader[]> {
    const headers: BlockHeader[] = [];
    let from = startHash;
    while (headers.length < count) {
      const asked = Math.min(count - headers.length, maxHeadersPerRequest);
      const answer = decodeHeadersAnswer(await this.network.request(this.id, this.protocols.headers, encodeHeadersRequest(from, asked)), asked);
      headers.push(...answer);
      // A shorter answer: the peer's chain ends there (genesis, or it does not have more).
      if (answer.length < asked) break;
      const oldest = answer[answer.length - 1]!;
      if (oldest.number === 0n) break;
      from = oldest.fields.parentHash;
    }
    return headers;
  }

  async bodies(hashes: readonly Uint8Array[]): Promise<readonly (BlockBody | undefined)[]> {
    return this.byHashes(hashes, this.protocols.bodies, maxBodiesPerRequest, decodeBodiesAnswer, (body) => signedBodyOf(body, this.decoding.common, this.decoding.typed));
  }

  /** Whole blocks by hash (orphans' parents); undefined for one it does not have. */
  async blocks(hashes: readonly Uint8Array[]): Promise<(Block | undefined)[]> {
    return this.byHashes(hashes, this.protocols.blocks, maxBlocksPerRequest, decodeBlocksAnswer, (encoded) => decodeBlock(encoded, this.decoding.common, this.decoding.typed));
  }

  /**
   * Items by hash over a protocol that takes at most `perRequest` hashes: asked in turn, and asked
   * again for the rest when an answer stops short (the peer's soft size limit); undefined for an
   * item the peer does not have.
   */
  private async byHashes<Entry, Item>(
    hashes: readonly Uint8Array[],
    protocol: RequestProtocol,
    perRequest: number,
    decodeAnswer: (answer: Uint8Array, asked: number) => (Entry | undefined)[],
    decodeEntry: (entry: Entry) => Item,
  ): Promise<(Item | undefined)[]> {
    const items: (Item | undefined)[] = [];
    while (items.length < hashes.length) {
      const asked = hashes.slice(items.length, items.length + perRequest);
      const answer = decodeAnswer(await this.network.request(this.id, protocol, encodeHashesRequest(asked)), asked.length);
      if (answer.length === 0) throw new MessageDecodingError(`an empty ${protocol.name} answer for ${asked.length} asked`);
      for (const entry of answer) items.push(entry === undefined ? undefined : decodeEntry(entry));
    }
    return items;
  }
}
