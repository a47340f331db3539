// web3_: client identity and hashing.
import { keccak256 } from "../../common/crypto.js";
import type { NamespaceHandlers } from "../../../generated/methods.js";
import { bytesToHex, hexToBytes } from "../../common/hex.js";
import type { RpcCallContext } from "../dispatch.js";

export interface Web3Dependencies {
  clientVersion: string;
}

export function createWeb3Handlers(deps: Web3Dependencies): NamespaceHandlers<"web3", RpcCallContext> {
  return {
    web3_clientVersion: () => deps.clientVersion,
    web3_sha3: ([data]) => bytesToHex(keccak256(hexToBytes(data))),
  };
}
