// The greeting a person sees when the node starts on a terminal: what runs where, and the
// development accounts with their keys, as Anvil and Hardhat print theirs. Not shown when the
// output is not a terminal, or with --log-format json: operators and tests read JSON lines.
import type { MiningMode, RunningNode } from "../node/index.js";

const weiPerEther = 10n ** 18n;

function miningDescription(mining: MiningMode): string {
  if (mining.kind === "auto") return "automine (each transaction mined into its own block as it arrives)";
  if (mining.kind === "interval") return `every ${mining.blockTimeSeconds} s (the pending transactions in one block)`;
  return "off (blocks come from evm_mine and the other dev methods)";
}

/** A balance in whole ether with the fraction, as the tools print it ("1000000000000.000000000000000000"). */
function etherText(wei: bigint): string {
  return `${wei / weiPerEther}.${(wei % weiPerEther).toString().padStart(18, "0")}`;
}

export async function formatBanner(node: RunningNode, details: { version: string; mining: MiningMode }): Promise<string> {
  const accounts = await node.developmentAccounts();
  const lines = [
    "",
    details.version,
    "",
    `Network          ${node.network.name} (network id ${node.network.networkId}, chain id ${node.network.chainId}, 0x${node.network.chainId.toString(16)})`,
    `JSON-RPC         ${node.url}`,
    `WebSocket        ${node.url.replace(/^http:/, "ws:")} (the same port)`,
    `Mining           ${miningDescription(details.mining)}`,
    `Chain            ${node.location}`,
    "",
  ];
  if (accounts.length > 0) {
    const locked = accounts.some((account) => !account.unlocked);
    lines.push(`Development accounts${locked ? " (locked: the node is bound beyond loopback without --allow-insecure-unlock)" : ""}`, "==================");
    accounts.forEach((account, index) => lines.push(`(${index}) ${account.address} (${etherText(account.balance)} ETH)`));
    lines.push("", "Private keys", "==================");
    accounts.forEach((account, index) => lines.push(`(${index}) ${account.privateKey}`));
    lines.push("", "WARNING: these keys are public (keccak-256 of \"cow\", \"cow1\", ...). Anything sent to them on another network can be taken by anyone.");
  }
  lines.push("", "Logs follow; --log-format json for JSON lines.", "");
  return lines.join("\n");
}
