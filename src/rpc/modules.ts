// Which modules (method prefixes) answer: the default set, the flag that changes it, and the
// exposure rule for non-loopback binds.
import { rpcNamespaces, type RpcNamespace } from "../../generated/methods.js";

/**
 * Modules that hold keys, control the node or the peers, replay blocks at length, or show what
 * others have sent before it is mined: off on a non-loopback bind unless named.
 */
export const loopbackOnlyModules: readonly RpcNamespace[] = ["personal", "evm", "anvil", "hardhat", "debug", "trace", "txpool", "sco"];

export class ModuleSelectionError extends Error {}

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare);
}

function isModule(name: string): name is RpcNamespace {
  return (rpcNamespaces as readonly string[]).includes(name);
}

/**
 * Resolves --rpc-modules against the bind host.
 *
 * - No selection: every module on a loopback bind; on any other bind every module but
 *   personal, evm, anvil, hardhat, debug, trace, txpool and sco.
 * - A list of names ("eth,net,web3"): exactly those modules, wherever bound.
 * - "all": every module the bind allows without naming; personal, evm, anvil, hardhat, debug,
 *   trace, txpool and sco on a non-loopback bind still have to be named one by one.
 * - Entries with a sign ("-debug,+sco") change the default set; they may follow plain names too.
 */
export function resolveEnabledModules(selection: string | undefined, host: string): Set<RpcNamespace> {
  const defaults = rpcNamespaces.filter((name) => isLoopbackHost(host) || !loopbackOnlyModules.includes(name));
  const entries = (selection ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0);
  const plain = entries.filter((entry) => !entry.startsWith("+") && !entry.startsWith("-"));
  const enabled = new Set<RpcNamespace>(plain.length > 0 ? [] : defaults);
  for (const entry of entries) {
    const sign = entry.startsWith("-") ? "-" : "+";
    const name = entry.replace(/^[+-]/, "");
    if (name === "all") {
      for (const module of sign === "+" ? defaults : rpcNamespaces) sign === "+" ? enabled.add(module) : enabled.delete(module);
      continue;
    }
    if (!isModule(name)) {
      throw new ModuleSelectionError(`unknown RPC module "${name}" (modules: ${rpcNamespaces.join(", ")}, or all)`);
    }
    if (sign === "+") enabled.add(name);
    else enabled.delete(name);
  }
  return enabled;
}
