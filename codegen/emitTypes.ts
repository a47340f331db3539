// generated/types.ts: one TypeScript declaration per component schema, plus one per inline
// parameter or result schema, through json-schema-to-typescript.
import { compile } from "json-schema-to-typescript";
import type { JsonSchema, LoadedDocument } from "./document.js";
import { componentRefName, generatedBanner, inlineParamTypeName, resultTypeName } from "./naming.js";

const rootName = "GeneratedTypesRoot";

export async function emitTypes(document: LoadedDocument): Promise<string> {
  const definitions: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(document.schemas)) definitions[name] = schema;
  for (const method of document.methods) {
    for (const param of method.params) {
      if (componentRefName(param.schema) === undefined) definitions[inlineParamTypeName(method, param)] = param.schema;
    }
    if (componentRefName(method.result.schema) === undefined) definitions[resultTypeName(method)] = method.result.schema;
  }

  const root = { title: rootName, type: "object", additionalProperties: false, definitions: prepareForTypes(definitions) };
  const source = await compile(root as never, rootName, {
    bannerComment: "",
    unreachableDefinitions: true,
    declareExternallyReferenced: true,
    additionalProperties: false,
    unknownAny: true,
    strictIndexSignatures: false,
    format: true,
    customName: (_schema, keyNameFromDefinition) => keyNameFromDefinition,
  });
  return `${generatedBanner}/* eslint-disable */\n\n${dropDefinitionNotes(dropRootDeclaration(source))}`;
}

/** Removes the "referenced by the root schema" notes the compiler adds, and the comments they leave empty. */
function dropDefinitionNotes(source: string): string {
  return source
    .replace(new RegExp(` \\*( \\n \\*)? This interface was referenced by \`${rootName}\`'s JSON-Schema\\n \\* via the \`definition\` "\\w+"\\.\\n`, "g"), "")
    .replace(/\/\*\*\n \*\/\n/g, "")
    .replace(/\n \*\n \*\//g, "\n */");
}

/**
 * Rewrites component references to local definitions and removes what would make
 * json-schema-to-typescript invent names: titles, and siblings of `$ref`.
 */
function prepareForTypes(node: unknown): never {
  if (Array.isArray(node)) return node.map(prepareForTypes) as never;
  if (node === null || typeof node !== "object") return node as never;
  const object = node as Record<string, unknown>;
  if (typeof object.$ref === "string") {
    return { $ref: object.$ref.replace("#/components/schemas/", "#/definitions/") } as never;
  }
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    if (key === "title" || key === "x-hex" || key === "examples") continue;
    copy[key] = key === "properties" || key === "patternProperties" || key === "definitions"
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, schema]) => [name, prepareForTypes(schema)]))
      : prepareForTypes(value);
  }
  return copy as never;
}

function dropRootDeclaration(source: string): string {
  return source.replace(new RegExp(`export interface ${rootName} \\{\\}\\n*`), "").trimStart();
}
