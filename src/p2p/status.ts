// The status message peers exchange on connect and after each new head (design brief section 4):
// RLP [protocolVersion, p2pNetworkId, chainId, genesisHash, bestNumber, bestHash, bestParentHash,
// totalDifficulty], the reference's eth STATUS merged with its RSK STATUS (facts section 14). A
// response frame is one result byte (0 ok) followed by the RLP. The bytes come from a peer:
// anything not exactly this shape is a StatusDecodingError, never another exception.
import { decodeRlp, encodeRlp, type RlpDecoded } from "../common/rlp.js";
import type { ChainStatus, PeerStatus } from "./interface.js";

export const statusProtocolVersion = 1;
/** Without a network id on purpose: a peer of another network still completes it and is refused by its answer. */
export const statusProtocolId = "/chain-node/status/1";
/** The largest status frame read (a status is some 150 bytes). */
export const statusMaxBytes = 1024;
/** Result byte of a response frame. */
export const statusResultOk = 0;

export type { PeerStatus } from "./interface.js";

export class StatusDecodingError extends Error {}

export function encodeStatus(status: ChainStatus): Uint8Array {
  return encodeRlp([statusProtocolVersion, status.networkId, status.chainId, status.genesisHash, status.bestNumber, status.bestHash, status.bestParentHash, status.totalDifficulty]);
}

export function encodeStatusResponse(status: ChainStatus): Uint8Array {
  const body = encodeStatus(status);
  const frame = new Uint8Array(1 + body.length);
  frame[0] = statusResultOk;
  frame.set(body, 1);
  return frame;
}

/** An unsigned integer of at most `maxBytes` bytes, canonical (no leading zero byte). */
function integer(item: RlpDecoded | undefined, name: string, maxBytes: number): bigint {
  if (!(item instanceof Uint8Array)) throw new StatusDecodingError(`status ${name} is not a byte string`);
  if (item.length > maxBytes) throw new StatusDecodingError(`status ${name} is longer than ${maxBytes} bytes`);
  if (item.length > 0 && item[0] === 0) throw new StatusDecodingError(`status ${name} has a leading zero byte`);
  let value = 0n;
  for (const byte of item) value = (value << 8n) | BigInt(byte);
  return value;
}

function hash(item: RlpDecoded | undefined, name: string): Uint8Array {
  if (!(item instanceof Uint8Array) || item.length !== 32) throw new StatusDecodingError(`status ${name} is not 32 bytes`);
  return item;
}

export function decodeStatus(bytes: Uint8Array): PeerStatus {
  if (bytes.length > statusMaxBytes) throw new StatusDecodingError(`status of ${bytes.length} bytes, more than ${statusMaxBytes}`);
  let decoded: RlpDecoded;
  try {
    decoded = decodeRlp(bytes) as RlpDecoded;
  } catch (error) {
    throw new StatusDecodingError(`status is not RLP: ${(error as Error).message}`);
  }
  if (!Array.isArray(decoded) || decoded.length !== 8) throw new StatusDecodingError("status is not a list of 8 items");
  const [version, networkId, chainId, genesisHash, bestNumber, bestHash, bestParentHash, totalDifficulty] = decoded;
  return {
    protocolVersion: Number(integer(version, "protocol version", 4)),
    networkId: Number(integer(networkId, "network id", 6)),
    chainId: integer(chainId, "chain id", 32),
    genesisHash: hash(genesisHash, "genesis hash"),
    bestNumber: integer(bestNumber, "best number", 8),
    bestHash: hash(bestHash, "best hash"),
    bestParentHash: hash(bestParentHash, "best parent hash"),
    totalDifficulty: integer(totalDifficulty, "total difficulty", 32),
  };
}

export function decodeStatusResponse(frame: Uint8Array): PeerStatus {
  if (frame.length === 0) throw new StatusDecodingError("empty status response");
  if (frame[0] !== statusResultOk) throw new StatusDecodingError(`status response with result ${frame[0]}`);
  return decodeStatus(frame.subarray(1));
}

/** Why a peer's status refuses it (the reference's score events, facts section 2), or undefined when it fits. */
export type StatusMismatch = "incompatibleProtocol" | "invalidNetwork" | "invalidChain" | "unexpectedGenesis";

export function statusMismatch(own: ChainStatus, peer: PeerStatus): StatusMismatch | undefined {
  if (peer.protocolVersion !== statusProtocolVersion) return "incompatibleProtocol";
  if (peer.networkId !== own.networkId) return "invalidNetwork";
  if (peer.chainId !== own.chainId) return "invalidChain";
  if (Buffer.compare(peer.genesisHash, own.genesisHash) !== 0) return "unexpectedGenesis";
  return undefined;
}
