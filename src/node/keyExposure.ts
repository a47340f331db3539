// What the bind means for the keys the node holds. On loopback every account works as on a
// developer's machine. Beyond it the port serves whoever reaches it, so by default no key is held
// unlocked there (development accounts included), and a private key never leaves the node.
import type { Wallet } from "../accounts/wallet.js";
import type { Logger } from "../common/logger.js";
import { bytesToHex } from "../common/hex.js";
import { isLoopbackHost } from "../rpc/index.js";
import type { NodeOptions } from "./options.js";

/** Whether keys may be held unlocked: always on loopback, beyond it only with --allow-insecure-unlock. */
export function unlockAllowedOn(rpc: Pick<NodeOptions["rpc"], "host" | "allowInsecureUnlock">): boolean {
  return isLoopbackHost(rpc.host) || rpc.allowInsecureUnlock;
}

/** Whether personal_dumpRawKey may answer: on loopback only, whatever the flags (its answer is the key). */
export function keyExportAllowedOn(host: string): boolean {
  return isLoopbackHost(host);
}

/** Who reaches a node bound to `host` on `port`, in words for the log. */
function reachedBy(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, "");
  const wildcard = bare === "0.0.0.0" || bare === "::";
  return wildcard ? `any machine that reaches port ${port} on any address of this machine` : `any machine that reaches ${host}:${port}`;
}

/**
 * Logs, at start, what a bind beyond loopback means for the accounts: with --allow-insecure-unlock a
 * warning naming the accounts unlocked now and who can sign with them; without it, that every
 * account is locked and why eth_sendTransaction refuses the development accounts.
 */
export function reportKeyExposure(rpc: Pick<NodeOptions["rpc"], "host">, port: number, wallet: Wallet, log: Logger): void {
  if (isLoopbackHost(rpc.host)) return;
  const listed = wallet.addresses().length;
  if (!wallet.unlockAllowed) {
    log.info(
      { host: rpc.host, listedAccounts: listed },
      "bound beyond loopback: every account is locked (eth_sendTransaction and eth_sign refuse them, development accounts included); personal_unlockAccount, personal_newAccountWithSeed and personal_dumpRawKey are refused; --allow-insecure-unlock unlocks them for anyone who reaches the port",
    );
    return;
  }
  const unlocked = wallet.unlockedAddresses().map(bytesToHex);
  log.warn(
    { host: rpc.host, unlockedAccounts: unlocked },
    `bound beyond loopback with --allow-insecure-unlock: ${reachedBy(rpc.host, port)} can sign and send with eth_sendTransaction and eth_sign from the ${unlocked.length} unlocked accounts listed, and from every account unlocked, created or imported later (personal_dumpRawKey stays refused)`,
  );
}
