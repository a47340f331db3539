// generated/methods.ts (types: params tuples, results, the handler interface) and
// generated/methodTable.ts (runtime: parameter names and counts, validators, unsupported methods,
// hex formats).
import type { HexFormat, LoadedDocument, MethodSpec } from "./document.js";
import { patternForHexFormat } from "./document.js";
import { componentRefName, generatedBanner, paramTypeName, paramsTypeName, resultTypeName } from "./naming.js";

function jsDoc(lines: string[], indent = ""): string {
  const text = lines.flatMap((line) => line.split("\n")).map((line) => line.replaceAll("*/", "*\\/").trimEnd());
  return `${indent}/**\n${text.map((line) => `${indent} *${line ? ` ${line}` : ""}`).join("\n")}\n${indent} */\n`;
}

function namespacesOf(document: LoadedDocument): string[] {
  return [...new Set(document.methods.map((method) => method.namespace))];
}

export function emitMethodTypes(document: LoadedDocument): string {
  const typeNames = new Set<string>();
  for (const method of document.methods) {
    for (const param of method.params) typeNames.add(paramTypeName(method, param));
    typeNames.add(componentRefName(method.result.schema) ?? resultTypeName(method));
  }
  const out: string[] = [generatedBanner];
  out.push(`import type {\n${[...typeNames].sort().map((name) => `  ${name},`).join("\n")}\n} from "./types.js";\n`);

  for (const method of document.methods) out.push(methodTypes(method));

  out.push(jsDoc(["Every method of openrpc.json: its parameters tuple and its result."]));
  out.push("export interface RpcMethods {\n");
  for (const method of document.methods) {
    out.push(jsDoc([method.summary], "  "));
    out.push(`  ${JSON.stringify(method.name)}: { params: ${paramsTypeName(method)}; result: ${resultTypeName(method)} };\n`);
  }
  out.push("}\n\n");

  const namespaces = namespacesOf(document);
  const implemented = document.methods.filter((method) => method.implemented).map((method) => JSON.stringify(method.name));
  const implementedUnion = implemented.length > 0 ? implemented.join(" | ") : "never";
  out.push(`export type RpcMethodName = keyof RpcMethods;

/** The methods that have an implementation; the others answer "not implemented yet". */
export type ImplementedMethodName = ${implementedUnion};

/** The modules (method-name prefixes) of the document, in document order. */
export const rpcNamespaces = ${JSON.stringify(namespaces)} as const;
export type RpcNamespace = (typeof rpcNamespaces)[number];

/** The implemented methods of one module. */
export type NamespaceMethodName<N extends RpcNamespace> = Extract<ImplementedMethodName, \`\${N}_\${string}\`>;

/**
 * A handler receives the validated positional parameters (absent optional ones are undefined)
 * and a per-call context chosen by the server.
 */
export type RpcHandler<M extends RpcMethodName, Context> = (
  params: RpcMethods[M]["params"],
  context: Context,
) => RpcMethods[M]["result"] | Promise<RpcMethods[M]["result"]>;

/** One handler per implemented method: the compiler rejects a missing or mistyped one. */
export type RpcHandlers<Context> = { [M in ImplementedMethodName]: RpcHandler<M, Context> };

/** The handlers of one module. */
export type NamespaceHandlers<N extends RpcNamespace, Context> = Pick<RpcHandlers<Context>, NamespaceMethodName<N>>;
`);
  return out.join("");
}

function methodTypes(method: MethodSpec): string {
  const docLines = [method.summary];
  if (method.description) docLines.push("", method.description);
  const elements = method.params.map((param) => `${param.name}${param.required ? "" : "?"}: ${paramTypeName(method, param)}`);
  const result = componentRefName(method.result.schema);
  // An inline result schema is declared in types.ts under the result name: re-export it.
  const resultDeclaration = result === undefined
    ? `export type { ${resultTypeName(method)} } from "./types.js";\n`
    : `${jsDoc([`Result of ${method.name}.`])}export type ${resultTypeName(method)} = ${result};\n`;
  return jsDoc([`Parameters of ${method.name}.`]) + `export type ${paramsTypeName(method)} = [${elements.join(", ")}];\n` + resultDeclaration + "\n";
}

export function emitMethodTable(document: LoadedDocument, paramValidatorNames: Map<string, string[]>): string {
  const out: string[] = [generatedBanner];
  out.push(`import * as validators from "./validators.js";
import type { RpcMethodName, RpcNamespace } from "./methods.js";

/** An AJV error, as the generated validators report it. */
export interface SchemaError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  /** The value of the failing keyword (parameter validators are compiled verbose). */
  schema?: unknown;
  /** The schema that holds the failing keyword (verbose validators). */
  parentSchema?: unknown;
}

/** A precompiled parameter validator: true when valid, else \`errors\` tells why. */
export interface ParamValidator {
  (value: unknown): boolean;
  errors?: SchemaError[] | null;
}

export interface RpcMethodEntry {
  readonly name: RpcMethodName;
  readonly namespace: RpcNamespace;
  readonly paramNames: readonly string[];
  readonly requiredParamCount: number;
  readonly paramValidators: readonly ParamValidator[];
  /** False for a documented method whose implementation has not landed yet. */
  readonly implemented: boolean;
}

/** How a hex schema is written; lets the dispatcher say exactly what is wrong with a value. */
export type HexFormat =
  | { readonly kind: "quantity"; readonly maxBits: number }
  | { readonly kind: "data" }
  | { readonly kind: "bytes"; readonly length: number };

const v: Readonly<Record<string, ParamValidator>> = validators;

function entry(name: RpcMethodName, namespace: RpcNamespace, paramNames: string[], requiredParamCount: number, validatorNames: string[], implemented: boolean): [string, RpcMethodEntry] {
  return [name, { name, namespace, paramNames, requiredParamCount, paramValidators: validatorNames.map((validator) => v[validator]!), implemented }];
}

/** Every documented method, by wire name. */
export const rpcMethodTable: ReadonlyMap<string, RpcMethodEntry> = new Map([
`);
  for (const method of document.methods) {
    const names = method.params.map((param) => param.name);
    const required = method.params.filter((param) => param.required).length;
    out.push(
      `  entry(${JSON.stringify(method.name)}, ${JSON.stringify(method.namespace)}, ${JSON.stringify(names)}, ${required}, ${JSON.stringify(paramValidatorNames.get(method.name))}, ${method.implemented}),\n`,
    );
  }
  out.push("]);\n\n");

  out.push(jsDoc(["Methods of the reference interface this node does not offer, with the reason (the support table of the spec)."]));
  out.push("export const unsupportedMethods: ReadonlyMap<string, string> = new Map([\n");
  for (const entry of document.unsupported) out.push(`  [${JSON.stringify(entry.name)}, ${JSON.stringify(entry.reason)}],\n`);
  out.push("]);\n\n");

  out.push(jsDoc(["The hex formats of the document's schemas, by their pattern."]));
  out.push("export const hexFormatsByPattern: ReadonlyMap<string, HexFormat> = new Map([\n");
  const formats = new Map<string, HexFormat>();
  for (const schema of Object.values(document.schemas)) {
    const format = schema["x-hex"] as HexFormat | undefined;
    if (format !== undefined) formats.set(patternForHexFormat(format), format);
  }
  for (const [pattern, format] of formats) out.push(`  [${JSON.stringify(pattern)}, ${JSON.stringify(format)}],\n`);
  out.push("]);\n");
  return out.join("");
}
