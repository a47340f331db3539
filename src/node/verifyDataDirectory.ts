// `chain-node verify`: everything a data directory holds, checked while no node runs on it.
// First LevelDB's own files, every table read (storage/leveldb/filesCheck.ts), the node's
// write-ahead log and the key files, without opening the database: opened, LevelDB would drop damaged log records
// and serve damaged blocks, so damage there ends the check. Then, through the store: every
// canonical block from the head down to genesis (chain/integrity.ts, each transaction's sender
// recovered again) and every node of the head's state (state/stateWalk.ts).
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { keystoreAddress, KeystoreFormatError } from "../accounts/keystore.js";
import { findCanonicalDamage } from "../chain/integrity.js";
import { BlockHeader } from "../chain/header.js";
import { decodeRawTransaction, impersonatedSenderOf } from "../chain/transactions.js";
import { bytesToHex } from "../common/hex.js";
import { createExecutionRules } from "../execution/rules.js";
import { walkState } from "../state/stateWalk.js";
import { DataDirectoryError } from "../storage/keyValueStore.js";
import { metadataNames, storeKeys } from "../storage/keys.js";
import { checkLevelFiles } from "../storage/leveldb/filesCheck.js";
import { findLevelLockHolder } from "../storage/leveldb/lockHolder.js";
import { openLevelStore, writeAheadLogFileName } from "../storage/levelStore.js";
import { WriteAheadLog } from "../storage/writeAheadLog.js";

export type VerifyProgress =
  | { readonly phase: "files" }
  | { readonly phase: "blocks"; readonly done: bigint; readonly total: bigint }
  | { readonly phase: "state"; readonly nodes: number };

export interface VerifyReport {
  /** Every problem found, each naming what is damaged. */
  readonly problems: string[];
  readonly tablesRead: number;
  readonly blocksChecked: bigint;
  readonly stateNodes: number;
  readonly accounts: number;
}

/**
 * Key files that cannot be read as such: not JSON, not a v3 key file, or naming another address
 * than their geth-style file name. (Damage inside the encrypted key shows only at unlock: its MAC
 * needs the passphrase.)
 */
async function findKeyStoreDamage(keyStore: string): Promise<string[]> {
  const names = await readdir(keyStore).catch(() => [] as string[]);
  const problems: string[] = [];
  for (const name of names.filter((candidate) => !candidate.startsWith(".")).sort()) {
    try {
      const address = keystoreAddress(JSON.parse(await readFile(join(keyStore, name), "utf8")));
      const named = /--([0-9a-fA-F]{40})$/.exec(name)?.[1]?.toLowerCase();
      if (named !== undefined && named !== address) problems.push(`key file keystore/${name} holds the key of 0x${address}, not of the address its name gives`);
    } catch (error) {
      problems.push(`key file keystore/${name} cannot be read as a key file: ${error instanceof KeystoreFormatError ? error.message : "it is not JSON"}`);
    }
  }
  return problems;
}

/** Problems beyond this many are counted, not listed. */
const listedProblems = 1000;

const textDecoder = new TextDecoder();

export async function verifyDataDirectory(directory: string, onProgress: (progress: VerifyProgress) => void = () => undefined): Promise<VerifyReport> {
  const problems: string[] = [];
  let unlisted = 0;
  const report = (problem: string) => (problems.length < listedProblems ? problems.push(problem) : unlisted++);
  const finish = (counts: Omit<VerifyReport, "problems">): VerifyReport => ({ ...counts, problems: unlisted > 0 ? [...problems, `and ${unlisted} more problems`] : problems });

  if (!(await stat(join(directory, "CURRENT")).catch(() => undefined))?.isFile()) {
    report(`${directory} holds no LevelDB database (no CURRENT file)`);
    return finish({ tablesRead: 0, blocksChecked: 0n, stateNodes: 0, accounts: 0 });
  }
  const lockHolder = await findLevelLockHolder(directory);
  if (lockHolder !== undefined) {
    report(`${directory} is in use by process ${lockHolder} (it holds LevelDB's lock): stop the node first`);
    return finish({ tablesRead: 0, blocksChecked: 0n, stateNodes: 0, accounts: 0 });
  }
  onProgress({ phase: "files" });
  const log = WriteAheadLog.read(join(directory, writeAheadLogFileName));
  if (log.end === "damaged") report(`${writeAheadLogFileName}: ${log.damage}`);
  if (log.torn !== undefined) {
    const batch = log.torn.sequence === undefined ? "a write" : `the write of batch ${log.torn.sequence}`;
    report(`${writeAheadLogFileName} ends with ${batch} cut short (${log.torn.bytes} bytes): a crash interrupted it before it was acknowledged, or the file was cut; the node drops it at its next start`);
  }
  const files = await checkLevelFiles(directory, { everyTable: true, nodeLogHoldsBatches: log.records.length > 0 });
  files.damage.forEach(report);
  for (const torn of files.tornLogs) report(`${torn}: a write a crash interrupted, which LevelDB drops at open (the batch is still in ${writeAheadLogFileName}, which the node applies again)`);
  if (problems.length > 0) return finish({ tablesRead: files.tablesRead, blocksChecked: 0n, stateNodes: 0, accounts: 0 });
  await files.recordChecked();
  for (const problem of await findKeyStoreDamage(join(directory, "keystore"))) report(problem);

  let store;
  try {
    store = await openLevelStore(directory);
  } catch (error) {
    if (!(error instanceof DataDirectoryError)) throw error;
    report(error.message);
    return finish({ tablesRead: files.tablesRead, blocksChecked: 0n, stateNodes: 0, accounts: 0 });
  }
  try {
    const identity = store.getSync(storeKeys.metadata(metadataNames.chainIdentity));
    const headHash = store.getSync(storeKeys.metadata(metadataNames.head));
    const chainId = identity === undefined ? undefined : (JSON.parse(textDecoder.decode(identity)) as { chainId?: string }).chainId;
    const encodedHead = headHash === undefined ? undefined : store.getSync(storeKeys.header(headHash));
    if (chainId === undefined || headHash === undefined || encodedHead === undefined) {
      report(`${directory} holds no chain-node chain: ${chainId === undefined ? "its chain identity" : headHash === undefined ? "its head pointer" : "its head block"} is missing`);
      return finish({ tablesRead: files.tablesRead, blocksChecked: 0n, stateNodes: 0, accounts: 0 });
    }
    const head = BlockHeader.decode(encodedHead);
    const common = createExecutionRules(BigInt(chainId));
    const total = head.number + 1n;
    let blocksChecked = 0n;
    const signerOf = (raw: Uint8Array): Uint8Array | undefined => {
      try {
        // Typed ones too: a chain made with --typed-transactions holds them.
        return decodeRawTransaction(raw, common, true).sender;
      } catch {
        return undefined;
      }
    };
    const recoverSenders = (raws: readonly Uint8Array[], senders: readonly Uint8Array[]) => {
      for (const [index, raw] of raws.entries()) {
        const isStored = (sender: Uint8Array | undefined) => sender !== undefined && Buffer.compare(sender, senders[index]!) === 0;
        // A transaction sent from an impersonated account names its sender in its stand-in signature.
        if (!isStored(signerOf(raw)) && !isStored(impersonatedSenderOf(raw))) return `the stored sender of its transaction ${index} is not the one its signature gives`;
      }
      return undefined;
    };
    const walk = findCanonicalDamage(store, {
      headHash,
      headNumber: head.number,
      lowest: 0n,
      thorough: { recoverSenders },
      onBlock: () => {
        blocksChecked++;
        if (blocksChecked % 1000n === 0n) onProgress({ phase: "blocks", done: blocksChecked, total });
      },
    });
    for (const { number, problem } of walk) report(`canonical block ${number}: ${problem}`);
    onProgress({ phase: "blocks", done: blocksChecked, total });
    if (store.getSync(storeKeys.canonicalHash(head.number + 1n)) !== undefined) report(`the canonical index names a block ${head.number + 1n}, above the head`);
    const state = walkState(store, head.fields.stateRoot, (nodes) => onProgress({ phase: "state", nodes }));
    state.problems.forEach((problem) => report(`the state of head block ${head.number} (root ${bytesToHex(head.fields.stateRoot)}): ${problem}`));
    return finish({ tablesRead: files.tablesRead, blocksChecked, stateNodes: state.nodes, accounts: state.accounts });
  } finally {
    await store.close();
  }
}
