// personal_: accounts whose keys the node keeps encrypted in its key store (Web3 Secret Storage v3
// files under <data dir>/keystore), unlocked for a while with a passphrase, and accounts derived
// from a seed and held in memory. Passphrases and keys never reach a log or an error message.
// Whether keys may be unlocked is the wallet's rule (Wallet's unlockAllowed); whether a key may
// leave the node is decided here, by the bind.
import type { NamespaceHandlers } from "../../../generated/methods.js";
import { defaultUnlockDurationMs, type Wallet } from "../../accounts/wallet.js";
import { bytesToHex, hexToBytes } from "../../common/hex.js";
import type { RpcCallContext } from "../dispatch.js";
import { personalMessageHash } from "../../accounts/messageSigning.js";
import { accountNotFoundError, keyExportForbiddenError, walletErrorToRpc, withErrorsMapped } from "../errors.js";
import type { TransactionSending } from "./transactionSending.js";

export interface PersonalDependencies {
  wallet: Wallet;
  sending: TransactionSending;
  /**
   * False on a non-loopback bind, --allow-insecure-unlock or not: personal_dumpRawKey is refused,
   * since its answer would carry the key across the network.
   */
  keyExportAllowed: boolean;
}

/** The unlock duration parameter: hex milliseconds (the reference's unit), "" or absent for 30 minutes. */
export function unlockDurationMs(duration: string | undefined): number {
  if (duration === undefined || duration === "") return defaultUnlockDurationMs;
  const milliseconds = BigInt(duration);
  // Past 2^53 ms (285,000 years) the account simply stays unlocked until it is locked or the node stops.
  return milliseconds > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(milliseconds);
}

/** Runs a wallet operation, turning its domain errors into JSON-RPC errors. */
function walletCall<T>(operation: () => Promise<T>): Promise<T> {
  return withErrorsMapped(operation, walletErrorToRpc);
}

export function createPersonalHandlers(deps: PersonalDependencies): NamespaceHandlers<"personal", RpcCallContext> {
  const { wallet, sending } = deps;
  return {
    personal_newAccount: ([passphrase]) => walletCall(async () => bytesToHex(await wallet.newAccount(passphrase))),
    personal_importRawKey: ([privateKey, passphrase]) =>
      walletCall(async () => bytesToHex(await wallet.importRawKey(hexToBytes(privateKey.startsWith("0x") ? privateKey : `0x${privateKey}`), passphrase))),
    personal_newAccountWithSeed: ([seed]) => walletCall(async () => bytesToHex(wallet.addAccountFromSeed(seed))),
    personal_listAccounts: () => walletCall(async () => (await wallet.listAccounts()).map(bytesToHex)),
    personal_unlockAccount: ([address, passphrase, duration]) => walletCall(() => wallet.unlock(hexToBytes(address), passphrase, unlockDurationMs(duration))),
    personal_lockAccount: ([address]) => wallet.lock(hexToBytes(address)),
    personal_dumpRawKey: ([address]) => {
      if (!deps.keyExportAllowed) throw keyExportForbiddenError;
      return walletCall(async () => bytesToHex(await wallet.exportKey(hexToBytes(address))));
    },
    // eth_sign's signature; with a passphrase, personal_sendTransaction's way of opening the key.
    personal_sign: ([message, address, passphrase]) => {
      const digest = personalMessageHash(hexToBytes(message));
      if (passphrase !== undefined) return walletCall(async () => bytesToHex(await wallet.signHashWithPassphrase(hexToBytes(address), passphrase, digest)));
      const signature = wallet.signHash(hexToBytes(address), digest);
      if (signature === undefined) throw accountNotFoundError();
      return bytesToHex(signature);
    },
    personal_sendTransaction: ([submission, passphrase]) =>
      walletCall(async () => {
        const from = hexToBytes(submission.from);
        const raw = await wallet.signTransactionWithPassphrase(from, passphrase, () => sending.prepare(submission));
        return sending.submitOwn(raw, from);
      }),
  };
}
