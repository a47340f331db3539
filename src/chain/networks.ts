// Network profiles: the network ids of the spec and what each fixes. These are profiles for
// private networks with those ids; the node does not join the public networks.

export interface NetworkProfile {
  /** Network id of the spec: net_version answers it in decimal. */
  readonly networkId: number;
  /** EIP-155 chain id: eth_chainId answers it in hex. */
  readonly chainId: bigint;
  readonly name: string;
  readonly aliases: readonly string[];
  readonly description: string;
}

export const networkProfiles: readonly NetworkProfile[] = [
  { networkId: 30, chainId: 30n, name: "mainnet", aliases: ["main"], description: "private network with the main chain's id" },
  { networkId: 31, chainId: 31n, name: "testnet", aliases: ["test"], description: "private network with the test chain's id" },
  { networkId: 32, chainId: 32n, name: "devnet", aliases: ["dev"], description: "private network with the developer chain's id" },
  { networkId: 33, chainId: 33n, name: "regtest", aliases: ["local"], description: "locally created network (the default)" },
];

export const defaultNetworkId = 33;

/** Finds a profile by id ("33") or name ("regtest", "local"). */
export function findNetworkProfile(selector: string | number): NetworkProfile | undefined {
  const key = String(selector).trim().toLowerCase();
  return networkProfiles.find((profile) => String(profile.networkId) === key || profile.name === key || profile.aliases.includes(key));
}
