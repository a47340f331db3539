// The addresses eth_sendTransaction may send from without their key (anvil_impersonateAccount,
// hardhat_impersonateAccount), until stopped. Held in memory: a restart forgets them, as it
// forgets snapshots. Only the dev modules reach this, and those are off on a non-loopback bind
// unless named.
import { bytesToUnprefixedHex } from "../common/hex.js";

export class ImpersonatedAccounts {
  private readonly addresses = new Set<string>();

  /** Starts impersonating `address`; true when it was not impersonated before. */
  start(address: Uint8Array): boolean {
    const key = bytesToUnprefixedHex(address);
    const added = !this.addresses.has(key);
    this.addresses.add(key);
    return added;
  }

  /** Stops impersonating `address`; true when it was impersonated. */
  stop(address: Uint8Array): boolean {
    return this.addresses.delete(bytesToUnprefixedHex(address));
  }

  has(address: Uint8Array): boolean {
    return this.addresses.has(bytesToUnprefixedHex(address));
  }
}
