// Network profiles: the network ids of the spec and what each fixes (chain id, genesis, defaults).
// These are profiles for private networks with those ids; the node does not join the public networks.
import type { GenesisSpec } from "./genesis.js";

export interface DevelopmentAccount {
  /** The private key is keccak-256 of this UTF-8 seed (the reference node's regtest accounts). */
  readonly seed: string;
  /** Its address, lower-case hex without 0x (a test derives it from the seed). */
  readonly address: string;
}

export interface NetworkProfile {
  /** Network id of the spec: net_version answers it in decimal. */
  readonly networkId: number;
  /** EIP-155 chain id: eth_chainId answers it in hex. */
  readonly chainId: bigint;
  readonly name: string;
  readonly aliases: readonly string[];
  readonly description: string;
  readonly genesis: GenesisSpec;
  /** Funded at genesis and held unlocked by the node. */
  readonly developmentAccounts: readonly DevelopmentAccount[];
  /**
   * The reference node's miner account on this network: held unlocked and listed after the
   * development accounts while it is the coinbase (not funded; it earns the fees of mined blocks).
   */
  readonly minerAccount?: DevelopmentAccount;
  /** The peer-to-peer network id peers must share (the reference's `peer.networkId`, facts section 12). */
  readonly p2pNetworkId: number;
  /** The reference's default peer-to-peer port on this network (`peer.port`). */
  readonly p2pPort: number;
}

/** The ten well-known development accounts of the reference node's regtest (facts section 12). */
export const regtestDevelopmentAccounts: readonly DevelopmentAccount[] = [
  { seed: "cow", address: "cd2a3d9f938e13cd947ec05abc7fe734df8dd826" },
  { seed: "cow1", address: "7986b3df570230288501eea3d890bd66948c9b79" },
  { seed: "cow2", address: "0a3aa774752ec2042c46548456c094a76c7f3a79" },
  { seed: "cow3", address: "cf7cdbbb5f7ba79d3ffe74a0bba13fc0295f6036" },
  { seed: "cow4", address: "39b12c05e8503356e3a7df0b7b33efa4c054c409" },
  { seed: "cow5", address: "c354d97642faa06781b76ffb6786f72cd7746c97" },
  { seed: "cow6", address: "debe71e1de41fc77c44df4b6db940026e31b0e71" },
  { seed: "cow7", address: "7857288e171c6159c5576d1bd9ac40c0c48a771c" },
  { seed: "cow8", address: "a4dea4d5c954f5fd9e87f0e9752911e83a3d18b3" },
  { seed: "cow9", address: "09a1eda29f664ac8f68106f6567276df0c65d859" },
];

/** The reference's regtest miner: key = keccak-256 of its miner.coinbase.secret (facts section 12). */
export const regtestMinerAccount: DevelopmentAccount = { seed: "regtest_miner_secret_please_change", address: "ec4ddeb4380ad69b3e509baad9f158cdf4e4681d" };

const developmentAccountBalance = 10n ** 30n;

/** Genesis fields shared by the profiles (the reference's regtest values: gas limit 10,000,000, difficulty 1). */
function genesisWith(alloc: GenesisSpec["alloc"], extraData: string): GenesisSpec {
  return {
    alloc,
    gasLimit: 10_000_000n,
    timestamp: 0n,
    difficulty: 1n,
    extraData: new TextEncoder().encode(extraData),
    coinbase: new Uint8Array(20).fill(0x33),
    minimumGasPrice: 0n,
  };
}

function privateNetwork(networkId: number, name: string, aliases: string[], description: string, p2p: { p2pNetworkId: number; p2pPort: number }): NetworkProfile {
  return { networkId, chainId: BigInt(networkId), name, aliases, description, genesis: genesisWith(new Map(), name), developmentAccounts: [], ...p2p };
}

export const networkProfiles: readonly NetworkProfile[] = [
  privateNetwork(30, "mainnet", ["main"], "private network with the main chain's id (accounts from --genesis)", { p2pNetworkId: 775, p2pPort: 5050 }),
  privateNetwork(31, "testnet", ["test"], "private network with the test chain's id (accounts from --genesis)", { p2pNetworkId: 8100, p2pPort: 50505 }),
  privateNetwork(32, "devnet", ["dev"], "private network with the developer chain's id (accounts from --genesis)", { p2pNetworkId: 44444444, p2pPort: 50505 }),
  {
    networkId: 33,
    chainId: 33n,
    name: "regtest",
    aliases: ["local"],
    description: "locally created network with ten funded, unlocked development accounts (the default)",
    genesis: genesisWith(new Map(regtestDevelopmentAccounts.map((account) => [account.address, { balance: developmentAccountBalance }])), "horse"),
    developmentAccounts: regtestDevelopmentAccounts,
    minerAccount: regtestMinerAccount,
    p2pNetworkId: 7771,
    p2pPort: 50501,
  },
];

export const defaultNetworkId = 33;

/** Finds a profile by id ("33") or name ("regtest", "local"). */
export function findNetworkProfile(selector: string | number): NetworkProfile | undefined {
  const key = String(selector).trim().toLowerCase();
  return networkProfiles.find((profile) => String(profile.networkId) === key || profile.name === key || profile.aliases.includes(key));
}
