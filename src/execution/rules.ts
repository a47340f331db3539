// The execution rule set: the closest @ethereumjs/common configuration to the reference network's
// rules (facts section 13). Shanghai gives PUSH0, CREATE2, CHAINID, SELFBALANCE, EXTCODEHASH, the
// 0xEF code rejection (EIP-3541) and the initcode limit (EIP-3860); EIP-1153 adds TLOAD/TSTORE and
// EIP-5656 MCOPY. Cancun is not used: its blob opcodes and EIP-6780 SELFDESTRUCT are not the
// reference's. EIP-1559 stays on only so that BASEFEE exists: every block's base fee is its minimum
// gas price, and the block builder pays that part of the fee to the miner instead of burning it.
// Where gas accounting still differs from the reference is listed in docs/design.md.
import { paramsBlock } from "@ethereumjs/block";
import { Common, Hardfork, Mainnet, type CustomCrypto, type ParamsDict } from "@ethereumjs/common";
import { paramsTx } from "@ethereumjs/tx";
import { keccak256 } from "../common/crypto.js";
import { recoverPublicKey, signRecoverable } from "../common/signatures.js";

export const executionHardfork = Hardfork.Shanghai;
export const extraEips = [1153, 5656] as const;

/** Native keccak-256, signature recovery and signing (src/common/crypto.ts) for the tries, transactions, the EVM and the wallet. */
const nativeCrypto: CustomCrypto = {
  keccak256,
  ecrecover: recoverPublicKey,
  ecsign: signRecoverable as unknown as CustomCrypto["ecsign"],
};

/**
 * The engine copies its Common into every transaction and block header it constructs, and each
 * copy merges the package's parameter table again (a JSON round trip and a cache rebuild: about a
 * fifth of the CPU of a one-transaction block). Copies are shallow, so they share the merged
 * table: a table merged once is not merged again, and a copy rebuilds its parameter cache only
 * when the shared table changed after its cache was built.
 * Copies share the activated-EIP array too until one rebuilds it; each keeps a set of its own.
 */
class ExecutionRules extends Common {
  /** Shared by every copy: the tables merged so far and a count of changes to the merged table. */
  private merged: { tables: WeakSet<ParamsDict>; version: number } | undefined;
  /** The `merged.version` this instance's parameter cache was built from. */
  private cacheVersion = -1;

  override updateParams(params: ParamsDict): void {
    this.merged ??= { tables: new WeakSet(), version: 0 };
    if (!this.merged.tables.has(params)) {
      this.merged.tables.add(params);
      this.merged.version++;
      super.updateParams(params);
    } else if (this.cacheVersion !== this.merged.version) {
      this._buildParamsCache();
    }
  }

  /** The activated EIPs as a set, for the array the package last built. */
  private activatedEips: { source: number[]; set: Set<number> } | undefined;

  /** The interpreter asks this for every step: a set lookup instead of the package's array search. */
  override isActivatedEIP(eip: number): boolean {
    const source = this._activatedEIPsCache;
    if (this.activatedEips?.source !== source) this.activatedEips = { source, set: new Set(source) };
    return this.activatedEips.set.has(eip);
  }

  protected override _buildParamsCache(): void {
    super._buildParamsCache();
    this.cacheVersion = this.merged?.version ?? -1;
  }
}

export function createExecutionRules(chainId: bigint): Common {
  const rules = new ExecutionRules({
    chain: { ...Mainnet, chainId: Number(chainId), name: `chain-${chainId}` },
    hardfork: executionHardfork,
    eips: [...extraEips],
    customCrypto: nativeCrypto,
  });
  // Merged here, on the instance every copy comes from, so that no copy has to rebuild its cache.
  // The EVM's and the VM's tables join with the first engine (execution/engine.ts): importing them
  // here would load the EVM at start (issue 39).
  for (const table of [paramsTx, paramsBlock]) rules.updateParams(table);
  return rules;
}
