// The node's name and version, read once from package.json.
import { readFileSync } from "node:fs";

const packageJson = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  name: string;
  version: string;
};

export const clientName = packageJson.name;
export const clientVersion = packageJson.version;

/** web3_clientVersion: <name>/<version>/<platform>/node<major>, e.g. chain-node/0.1.0/linux-x64/node20. */
export function clientVersionString(): string {
  const nodeMajor = process.versions.node.split(".")[0];
  return `${clientName}/${clientVersion}/${process.platform}-${process.arch}/node${nodeMajor}`;
}
