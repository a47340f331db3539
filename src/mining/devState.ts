// The state edits of the dev methods that set an account's fields (anvil_/hardhat_ setBalance,
// setNonce, setCode, setStorageAt). Each becomes a dev block (Miner.mineStateChange): an empty
// block whose state carries the change. So the change is in a state root like any other: reads at
// "latest" see it at once, the block before still answers the old value, calls on the call
// thread, proofs and traces of later blocks start from it, a restart keeps it, and evm_revert to a
// snapshot taken before it takes it away with the block.
import type { MerkleStateManager } from "@ethereumjs/statemanager";
import { Account, Address } from "@ethereumjs/util";
import type { StateEdit } from "../execution/blockBuilder.js";

/** One dev method's change of an account. */
export type AccountChange =
  | { readonly kind: "balance"; readonly address: Uint8Array; readonly balance: bigint }
  | { readonly kind: "nonce"; readonly address: Uint8Array; readonly nonce: bigint }
  | { readonly kind: "code"; readonly address: Uint8Array; readonly code: Uint8Array }
  | { readonly kind: "storage"; readonly address: Uint8Array; readonly slot: Uint8Array; readonly value: Uint8Array };

async function accountAt(state: MerkleStateManager, address: Address): Promise<Account> {
  return (await state.getAccount(address)) ?? new Account();
}

/** The edit that applies `change` to a state. */
export function stateEditOf(change: AccountChange): StateEdit {
  const address = new Address(change.address);
  return async (state) => {
    switch (change.kind) {
      case "balance": {
        const account = await accountAt(state, address);
        account.balance = change.balance;
        await state.putAccount(address, account);
        return;
      }
      case "nonce": {
        const account = await accountAt(state, address);
        account.nonce = change.nonce;
        await state.putAccount(address, account);
        return;
      }
      case "code":
        await state.putCode(address, change.code);
        return;
      case "storage":
        // The engine refuses storage of an account that does not exist: an empty one is made first.
        if ((await state.getAccount(address)) === undefined) await state.putAccount(address, new Account());
        await state.putStorage(address, change.slot, change.value);
        return;
    }
  };
}
