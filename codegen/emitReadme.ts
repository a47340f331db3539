// The method support table of README.md, between two marker lines, generated from openrpc.json.
import type { LoadedDocument } from "./document.js";

export const readmeTableStart = "<!-- methods:start (generated from openrpc.json by `make gen`) -->";
export const readmeTableEnd = "<!-- methods:end -->";

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

/** Replaces the text between the markers; throws when the markers are missing. */
export function updateReadme(readme: string, document: LoadedDocument): string {
  const start = readme.indexOf(readmeTableStart);
  const end = readme.indexOf(readmeTableEnd);
  if (start < 0 || end < start) throw new Error(`README.md lacks the marker lines ${readmeTableStart} ... ${readmeTableEnd}`);
  const rows = [
    "| Method | Module | Status | Summary |",
    "|---|---|---|---|",
    ...document.methods.map((method) => {
      const status = method.implemented ? "available" : "documented, not implemented yet";
      return `| \`${method.name}\` | ${method.namespace} | ${status} | ${cell(method.summary)} |`;
    }),
    ...document.unsupported.map((entry) => `| \`${entry.name}\` | ${entry.name.split("_")[0]} | not supported | ${cell(entry.reason)} |`),
  ];
  return `${readme.slice(0, start)}${readmeTableStart}\n${rows.join("\n")}\n${readme.slice(end)}`;
}
