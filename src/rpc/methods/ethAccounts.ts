// eth_ methods about one account: signing a message or EIP-712 typed data with a held key, and
// proving the account and its storage against a block's state root.
import { bytesToBigInt } from "@ethereumjs/util";
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { Proof as ProofJson } from "../../../generated/types.js";
import type { Wallet } from "../../accounts/wallet.js";
import type { Chain } from "../../chain/chain.js";
import { nextEventLoopTurn } from "../../common/eventLoop.js";
import { bytesToHex, hexToBytes, storageSlotFromHex, toQuantity } from "../../common/hex.js";
import type { AccountProof } from "../../state/stateProof.js";
import type { StateDatabase } from "../../state/stateDatabase.js";
import { resolveStateBlock } from "../blockParameters.js";
import { EncodedJson, type RpcCallContext } from "../dispatch.js";
import { accountNotFoundError, invalidParamsError, stateNotFoundError } from "../errors.js";
import type { RequestWorkLimits } from "../options.js";
import { typedDataParameterHash } from "../typedDataParameter.js";

export interface EthAccountDependencies {
  chain: Chain;
  state: StateDatabase;
  wallet: Wallet;
  requestLimits: RequestWorkLimits;
}

/** Storage proofs are encoded this long between two turns of the event loop. */
const encodeSliceMs = 5;

/**
 * The proof as JSON text, the text JSON.stringify gives of the result's object form (every value
 * is a hex string: nothing to escape), in parts with a turn of the event loop every 5 ms. 1,024
 * slots make about 4 MB: the object form held the thread 60-70 ms in JSON.stringify alone, and its
 * thousands of hex strings, alive until then, were promoted and collected by full collections.
 */
async function encodeProof(proof: AccountProof): Promise<EncodedJson> {
  const account = JSON.stringify({
    address: bytesToHex(proof.address),
    balance: toQuantity(proof.balance),
    codeHash: bytesToHex(proof.codeHash),
    nonce: toQuantity(proof.nonce),
    storageHash: bytesToHex(proof.storageRoot),
    accountProof: proof.accountProof.map(bytesToHex),
  } satisfies Omit<ProofJson, "storageProof">);
  const parts = [account.slice(0, -1), ',"storageProof":['];
  let sliceEndsAt = performance.now() + encodeSliceMs;
  for (let index = 0; index < proof.storageProofs.length; index++) {
    if (performance.now() >= sliceEndsAt) {
      await nextEventLoopTurn();
      sliceEndsAt = performance.now() + encodeSliceMs;
    }
    const slot = proof.storageProofs[index]!;
    parts.push(index === 0 ? '{"key":"' : ',{"key":"', toQuantity(bytesToBigInt(slot.key)), '","value":"', toQuantity(slot.value), '","proof":[');
    for (let node = 0; node < slot.proof.length; node++) parts.push(node === 0 ? '"' : ',"', bytesToHex(slot.proof[node]!), '"');
    parts.push("]}");
  }
  parts.push("]}");
  return new EncodedJson(parts);
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
      // The handler's declared result is the object form; EncodedJson is its text, spliced in as is.
      return (await encodeProof(proof)) as unknown as ProofJson;
    },
  };
}
