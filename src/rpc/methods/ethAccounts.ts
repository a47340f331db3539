// eth_ methods about one account: signing a message with a held key.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { Wallet } from "../../accounts/wallet.js";
import { bytesToHex, hexToBytes } from "../../common/hex.js";
import type { RpcCallContext } from "../dispatch.js";
import { accountNotFoundError } from "../errors.js";

export interface EthAccountDependencies {
  wallet: Wallet;
}

export function createEthAccountHandlers(deps: EthAccountDependencies): Pick<NamespaceHandlers<"eth", RpcCallContext>, "eth_sign"> {
  const { wallet } = deps;
  return {
    eth_sign: ([address, message]) => {
      const signature = wallet.signMessage(hexToBytes(address), hexToBytes(message));
      if (signature === undefined) throw accountNotFoundError();
      return bytesToHex(signature);
    },
  };
}
