// Compiles the test contracts with the solc npm package at its default EVM version.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export interface CompiledContract {
  abi: unknown[];
  bytecode: string;
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

const require = createRequire(import.meta.url);
const fixtures = new URL("../../../test/fixtures/", import.meta.url);

/** Compiles test/fixtures/<file> and returns `contractName`. */
export function compileFixture(file: string, contractName: string): CompiledContract {
  const solc = require("solc") as { compile(input: string): string };
  const source = readFileSync(fileURLToPath(new URL(file, fixtures)), "utf8");
  const input = { language: "Solidity", sources: { [file]: { content: source } }, settings: { outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } } };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((error) => error.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join("\n"));
  const contract = output.contracts[file]?.[contractName];
  if (contract === undefined) throw new Error(`${contractName} not found in ${file}`);
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}
