// Loads openrpc.json, checks it (OpenRPC meta-schema plus the project's own rules) and turns it
// into the normalised method list every emitter works from.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

// Loaded untyped: the package's declarations pull in TypeScript sources of @open-rpc/spec-types
// that do not compile under this project's strict settings.
const { validateOpenRPCDocument } = createRequire(import.meta.url)("@open-rpc/schema-utils-js") as {
  validateOpenRPCDocument(document: unknown): true | Error;
};

export type JsonSchema = Record<string, unknown>;

/** How a hex schema is written on the wire; drives the -32602 messages of the dispatcher. */
export type HexFormat =
  | { kind: "quantity"; maxBits: number }
  | { kind: "data" }
  | { kind: "bytes"; length: number };

export interface ParamSpec {
  name: string;
  description: string;
  required: boolean;
  schema: JsonSchema;
}

export interface MethodSpec {
  name: string;
  namespace: string;
  summary: string;
  description: string;
  params: ParamSpec[];
  result: { name: string; schema: JsonSchema };
  errors: { code: number; message: string }[];
  examples: { name: string; params: unknown[]; result: unknown }[];
  /** False while the method carries `"x-not-implemented-yet": true`: it answers a clear error. */
  implemented: boolean;
}

export interface UnsupportedMethod {
  name: string;
  reason: string;
}

export interface LoadedDocument {
  /** The document exactly as written, served by rpc.discover. */
  raw: Record<string, unknown>;
  methods: MethodSpec[];
  schemas: Record<string, JsonSchema>;
  unsupported: UnsupportedMethod[];
}

export class DocumentError extends Error {
  constructor(readonly problems: string[]) {
    super(`openrpc.json has ${problems.length} problem(s):\n  ${problems.join("\n  ")}`);
  }
}

// The name after the module may hold underscores too (eth_signTypedData_v4, as the wallets name it).
const methodNamePattern = /^([a-z0-9]+)_[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*$/;
const identifierPattern = /^[a-z][A-Za-z0-9]*$/;

/** The pattern a hex schema must carry for its `x-hex` annotation. */
export function patternForHexFormat(format: HexFormat): string {
  switch (format.kind) {
    case "quantity":
      return `^0x(0|[1-9a-fA-F][0-9a-fA-F]{0,${format.maxBits / 4 - 1}})$`;
    case "data":
      return "^0x([0-9a-fA-F]{2})*$";
    case "bytes":
      return `^0x[0-9a-fA-F]{${format.length * 2}}$`;
  }
}

export async function loadDocument(path: string): Promise<LoadedDocument> {
  const raw = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
  const problems: string[] = [];

  // schema-utils-js mutates what it is given: hand it a copy.
  const verdict = validateOpenRPCDocument(structuredClone(raw));
  if (verdict !== true) problems.push(`OpenRPC meta-schema: ${verdict.message}`);

  const resolver = createRefResolver(raw, problems);
  checkAllRefsResolve(raw, resolver);

  const components = (raw.components ?? {}) as Record<string, Record<string, unknown>>;
  const schemas = (components.schemas ?? {}) as Record<string, JsonSchema>;
  checkHexAnnotations(schemas, problems);
  checkObjectsAreClosedOrOpenOnPurpose(raw, problems);
  for (const [name, error] of Object.entries((components.errors ?? {}) as Record<string, { code?: unknown; message?: unknown }>)) {
    const problem = errorCodeProblem(error.code);
    if (problem !== undefined) problems.push(`error ${name}: ${problem}`);
    if (typeof error.message !== "string" || error.message === "") problems.push(`error ${name}: no message`);
  }

  const methods = ((raw.methods ?? []) as Record<string, unknown>[]).map((method) =>
    normaliseMethod(method, resolver, problems),
  );
  const seen = new Set<string>();
  for (const method of methods) {
    if (seen.has(method.name)) problems.push(`method ${method.name} is declared twice`);
    seen.add(method.name);
  }

  const unsupported = (raw["x-unsupported-methods"] ?? []) as UnsupportedMethod[];
  for (const entry of unsupported) {
    if (!methodNamePattern.test(entry.name) || !entry.reason) problems.push(`x-unsupported-methods: bad entry ${JSON.stringify(entry)}`);
    if (seen.has(entry.name)) problems.push(`${entry.name} is both a method and listed as unsupported`);
  }

  if (problems.length > 0) throw new DocumentError(problems);
  return { raw, methods, schemas, unsupported };
}

type RefResolver = (value: unknown) => Record<string, unknown>;

function createRefResolver(doc: Record<string, unknown>, problems: string[]): RefResolver {
  const resolve = (value: unknown, depth = 0): Record<string, unknown> => {
    const object = value as Record<string, unknown>;
    if (typeof object?.$ref !== "string") return object;
    const ref = object.$ref;
    if (!ref.startsWith("#/") || depth > 16) {
      problems.push(`unsupported or circular $ref ${ref}`);
      return {};
    }
    let target: unknown = doc;
    for (const part of ref.slice(2).split("/")) target = (target as Record<string, unknown> | undefined)?.[part];
    if (target === undefined) {
      problems.push(`unresolved $ref ${ref}`);
      return {};
    }
    return resolve(target, depth + 1);
  };
  return resolve;
}

function checkAllRefsResolve(node: unknown, resolve: RefResolver): void {
  if (Array.isArray(node)) {
    for (const item of node) checkAllRefsResolve(item, resolve);
  } else if (node !== null && typeof node === "object") {
    if (typeof (node as { $ref?: unknown }).$ref === "string") resolve(node);
    for (const child of Object.values(node)) checkAllRefsResolve(child, resolve);
  }
}

function checkHexAnnotations(schemas: Record<string, JsonSchema>, problems: string[]): void {
  for (const [name, schema] of Object.entries(schemas)) {
    const format = schema["x-hex"] as HexFormat | undefined;
    if (format === undefined) continue;
    const expected = patternForHexFormat(format);
    if (schema.pattern !== expected) {
      problems.push(`schema ${name}: x-hex ${JSON.stringify(format)} requires pattern ${expected}`);
    }
  }
}

/**
 * Every object schema with properties says whether other keys are allowed: a forgotten
 * `additionalProperties` would let a misspelt field pass validation.
 */
function checkObjectsAreClosedOrOpenOnPurpose(node: unknown, problems: string[], path = "#"): void {
  if (Array.isArray(node)) {
    node.forEach((item, index) => checkObjectsAreClosedOrOpenOnPurpose(item, problems, `${path}/${index}`));
    return;
  }
  if (node === null || typeof node !== "object") return;
  const object = node as Record<string, unknown>;
  if (object.properties !== undefined && !("additionalProperties" in object)) {
    problems.push(`${path}: an object schema with properties must state additionalProperties`);
  }
  for (const [key, child] of Object.entries(object)) {
    if (key === "examples" || key === "value") continue;
    checkObjectsAreClosedOrOpenOnPurpose(child, problems, `${path}/${key}`);
  }
}

const standardErrorCodes = new Set([-32700, -32600, -32601, -32602, -32603]);

/** JSON-RPC reserves -32768..-32000: only its own codes and the server range -32099..-32000 may be used. */
function errorCodeProblem(code: unknown): string | undefined {
  if (typeof code !== "number" || !Number.isInteger(code)) return "the code is not an integer";
  if (code >= -32768 && code <= -32000 && !standardErrorCodes.has(code) && code < -32099) {
    return `code ${code} lies in the range JSON-RPC reserves (-32768..-32100)`;
  }
  return undefined;
}

function normaliseMethod(method: Record<string, unknown>, resolve: RefResolver, problems: string[]): MethodSpec {
  const name = String(method.name);
  const namespace = methodNamePattern.exec(name)?.[1];
  if (namespace === undefined) problems.push(`method name ${name} is not <module>_<name>`);
  if (!method.summary) problems.push(`${name}: no summary`);

  let optionalSeen = false;
  const params = ((method.params ?? []) as unknown[]).map((param, index): ParamSpec => {
    const descriptor = resolve(param);
    const paramName = String(descriptor.name);
    if (!identifierPattern.test(paramName)) problems.push(`${name}: parameter ${index} name "${paramName}" is not a camelCase identifier`);
    const required = descriptor.required === true;
    if (required && optionalSeen) problems.push(`${name}: required parameter ${paramName} follows an optional one`);
    optionalSeen ||= !required;
    return { name: paramName, description: String(descriptor.description ?? ""), required, schema: descriptor.schema as JsonSchema };
  });
  const paramNames = new Set(params.map((param) => param.name));
  if (paramNames.size !== params.length) problems.push(`${name}: duplicate parameter names`);

  const result = resolve(method.result);
  if (!result?.schema) problems.push(`${name}: no result`);

  const errors = ((method.errors ?? []) as unknown[]).map((error) => {
    const resolved = resolve(error);
    return { code: Number(resolved.code), message: String(resolved.message) };
  });

  const examples = ((method.examples ?? []) as unknown[]).map((example) => {
    const pairing = resolve(example);
    return {
      name: String(pairing.name),
      params: ((pairing.params ?? []) as unknown[]).map((param) => resolve(param).value),
      result: pairing.result === undefined ? undefined : resolve(pairing.result).value,
    };
  });
  if (examples.length === 0) problems.push(`${name}: no example`);

  return {
    name,
    namespace: namespace ?? "",
    summary: String(method.summary ?? ""),
    description: String(method.description ?? ""),
    params,
    result: { name: String(result?.name ?? "result"), schema: (result?.schema ?? {}) as JsonSchema },
    errors,
    examples,
    implemented: method["x-not-implemented-yet"] !== true,
  };
}
