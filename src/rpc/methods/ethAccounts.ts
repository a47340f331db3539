// eth_ methods about one account: signing a message or EIP-712 typed data with a held key, and
// proving the account and its storage against a block's state root.
import { bytesToBigInt } from "@ethereumjs/util";
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { Proof as ProofJson } from "../../../generated/types.js";
import type { Wallet } from "../../accounts/wallet.js";
import type { Chain } from "../../chain/chain.js";
import { bytesToHex, hexToBytes, storageSlotFromHex, toQuantity } from "../../common/hex.js";
import type { AccountProof } from "../../state/stateProof.js";
import type { StateDatabase } from "../../state/stateDatabase.js";
import { resolveStateBlock } from "../blockParameters.js";
import type { RpcCallContext } from "../dispatch.js";
import { accountNotFoundError, invalidParamsError, stateNotFoundError } from "../errors.js";
import type { RequestWorkLimits } from "../options.js";
import { typedDataParameterHash } from "../typedDataParameter.js";

export interface EthAccountDependencies {
  chain: Chain;
  state: StateDatabase;
  wallet: Wallet;
  requestLimits: RequestWorkLimits;
}

function formatProof(proof: AccountProof): ProofJson {
  return {
    address: bytesToHex(proof.address),
    balance: toQuantity(proof.balance),
    codeHash: bytesToHex(proof.codeHash),
    nonce: toQuantity(proof.nonce),
    storageHash: bytesToHex(proof.storageRoot),
    accountProof: proof.accountProof.map(bytesToHex),
    storageProof: proof.storageProofs.map((slot) => ({
      key: toQuantity(bytesToBigInt(slot.key)),
      value: toQuantity(slot.value),
      proof: slot.proof.map(bytesToHex),
    })),
  };
}

export function createEthAccountHandlers(deps: EthAccountDependencies): Pick<NamespaceHandlers<"eth", RpcCallContext>, "eth_sign" | "eth_signTypedData_v4" | "eth_getProof"> {
  const { chain, state, wallet } = deps;
  const { proofKeysLimit } = deps.requestLimits;
  return {
    eth_sign: ([address, message]) => {
      const signature = wallet.signMessage(hexToBytes(address), hexToBytes(message));
      if (signature === undefined) throw accountNotFoundError();
      return bytesToHex(signature);
    },
    // The typed data is checked first: a malformed one is refused whatever the account.
    eth_signTypedData_v4: ([address, typedData]) => {
      const digest = typedDataParameterHash(typedData, 1, deps.requestLimits);
      const signature = wallet.signHash(hexToBytes(address), digest);
      if (signature === undefined) throw accountNotFoundError();
      return bytesToHex(signature);
    },
    // "pending" never gets here: the parameter schema leaves it out (PendingTagNotSupported).
    eth_getProof: async ([address, storageKeys, block]) => {
      if (storageKeys.length > proofKeysLimit) {
        throw invalidParamsError(`invalid argument 1: ${storageKeys.length} storage keys, more than the limit of ${proofKeysLimit}`);
      }
      const selected = await resolveStateBlock(chain, block);
      const proof = await state.prove(selected.header.fields.stateRoot, hexToBytes(address), storageKeys.map(storageSlotFromHex));
      if (proof === undefined) throw stateNotFoundError(bytesToHex(selected.hash));
      return formatProof(proof);
    },
  };
}
