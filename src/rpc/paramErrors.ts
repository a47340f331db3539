// Turns the errors of a generated parameter validator into one sentence that names what is wrong:
// "invalid argument 1: hex number with leading zero digits". AJV reports every failing branch of a
// oneOf; the deepest, most specific error explains the mistake best.
import { hexFormatsByPattern, type SchemaError } from "../../generated/methodTable.js";
import { describeHexProblem } from "../common/hex.js";

/** Keywords that only summarise the errors of their branches. */
const summaryKeywords = new Set(["oneOf", "anyOf", "allOf", "if", "$ref"]);

/** Among errors at the same place, the order in which they explain a mistake best. */
const keywordPreference = ["not", "additionalProperties", "required", "maxItems", "minItems", "pattern", "enum", "const", "minimum", "maximum", "minLength", "maxLength", "type"];

export function describeParamError(position: number, value: unknown, errors: readonly SchemaError[]): string {
  return `invalid argument ${position}: ${describeValueError(value, errors)}`;
}

function depthOf(instancePath: string): number {
  return instancePath === "" ? 0 : instancePath.split("/").length - 1;
}

function describeValueError(value: unknown, errors: readonly SchemaError[]): string {
  const specific = errors.filter((error) => !summaryKeywords.has(error.keyword));
  if (specific.length === 0) return errors[0]?.message ?? "invalid value";
  const deepest = Math.max(...specific.map((error) => depthOf(error.instancePath)));
  const candidates = specific.filter((error) => depthOf(error.instancePath) === deepest);
  const path = candidates[0]!.instancePath;
  const where = path === "" ? "" : `${fieldName(path)}: `;
  return where + describeAt(valueAt(value, path), candidates.filter((error) => error.instancePath === path));
}

function describeAt(value: unknown, errors: readonly SchemaError[]): string {
  const byKeyword = (keyword: string) => errors.find((error) => error.keyword === keyword);
  const pattern = byKeyword("pattern");
  const allowed = byKeyword("enum");
  if (typeof value === "string") {
    // A string that looks like hex is explained as hex, anything else against the allowed words.
    if (pattern !== undefined && (value.startsWith("0x") || value.startsWith("0X") || allowed === undefined)) {
      const regex = String(pattern.params.pattern);
      const format = hexFormatsByPattern.get(regex);
      const problem = format === undefined ? describeOtherHexProblem(value, regex) : describeHexProblem(value, format);
      return problem ?? `${quote(value)} does not match ${regex}`;
    }
    if (allowed !== undefined) {
      const words = (allowed.params.allowedValues as unknown[]).map((word) => JSON.stringify(word)).join(", ");
      return `${quote(value)} is not one of: ${words}${pattern !== undefined ? ", or a hex number" : ""}`;
    }
  }
  // A value of a type no branch takes fails a word list (enum) as well: the type is the mistake.
  const type = byKeyword("type");
  if (type !== undefined && typeof value !== "string" && errors.every((error) => error.keyword === "type" || error.keyword === "enum" || error.keyword === "const")) {
    return explain(type, value, errors);
  }
  for (const keyword of keywordPreference) {
    const error = byKeyword(keyword);
    if (error !== undefined) return explain(error, value, errors);
  }
  return errors[0]!.message ?? "invalid value";
}

function explain(error: SchemaError, value: unknown, errors: readonly SchemaError[]): string {
  switch (error.keyword) {
    case "additionalProperties":
      return describeExtraKey(String(error.params.additionalProperty), error.parentSchema);
    case "required": {
      // Branches of a oneOf may each miss a different field: name them all.
      const missing = [...new Set(errors.filter((each) => each.keyword === "required").map((each) => quote(String(each.params.missingProperty))))];
      return `missing field ${missing.join(" or ")}`;
    }
    case "maxItems":
      return `too many entries: at most ${String(error.params.limit)}`;
    case "minItems":
      return `too few entries: at least ${String(error.params.limit)}`;
    case "const":
      return `must be ${JSON.stringify(error.params.allowedValue)}`;
    case "minimum":
      return `must be at least ${String(error.params.limit)}, got ${JSON.stringify(value)}`;
    case "maximum":
      return `must be at most ${String(error.params.limit)}, got ${JSON.stringify(value)}`;
    case "minLength":
      return error.params.limit === 1 ? "must not be empty" : `must be at least ${String(error.params.limit)} characters long`;
    case "maxLength":
      return `must be at most ${String(error.params.limit)} characters long`;
    case "not":
      return describeExclusion(error.schema, value) ?? "combination of fields not allowed";
    case "type": {
      const expected = [...new Set(errors.filter((each) => each.keyword === "type").flatMap((each) => String(each.params.type).split(",")))];
      return `expected ${expected.join(" or ")}, got ${jsonTypeOf(value)}`;
    }
    default:
      return error.message ?? "invalid value";
  }
}

/** A key of a map whose keys follow a hex pattern (storage slots, addresses) is explained as such. */
function describeExtraKey(key: string, parentSchema: unknown): string {
  const keyPatterns = Object.keys((parentSchema as { patternProperties?: object } | undefined)?.patternProperties ?? {});
  const format = keyPatterns.length === 1 ? hexFormatsByPattern.get(keyPatterns[0]!) : undefined;
  const problem = format === undefined ? undefined : describeHexProblem(key, format);
  return problem === undefined ? `unknown field ${quote(key)}` : `invalid key ${quote(key)}: ${problem}`;
}

/** A pattern's count of hex digits at its end: "[0-9a-fA-F]{64}$" or "[0-9a-fA-F]{1,64}$". */
const digitCount = /\[0-9a-fA-F\]\{(\d+)(?:,(\d+))?\}\$$/;

/** For hex patterns without an x-hex format: the prefix, the digits and their count. */
function describeOtherHexProblem(value: string, regex: string): string | undefined {
  const prefix = regex.startsWith("^0x") ? "required" : regex.startsWith("^(0x)?") ? "optional" : "refused";
  if (prefix === "refused" && !regex.includes("0-9a-fA-F")) return undefined;
  const hasPrefix = value.startsWith("0x");
  if (prefix === "required" && !hasPrefix) return "hex string without 0x prefix";
  if (prefix === "refused" && hasPrefix) return "hex string with a 0x prefix, where plain hex digits are expected";
  const digits = hasPrefix ? value.slice(2) : value;
  if (!/^[0-9a-fA-F]*$/.test(digits)) return "invalid hex string";
  // Whole bytes: "([0-9a-fA-F]{2})+$" or "*$".
  if (/\{2\}\)[+*]\$$/.test(regex) && digits.length % 2 === 1) return `odd number of hex digits (${digits.length}): two digits a byte`;
  const count = digitCount.exec(regex);
  if (count === null) return undefined;
  const least = Number(count[1]);
  const most = count[2] === undefined ? least : Number(count[2]);
  if (least === most && digits.length !== least) {
    return least % 2 === 0 && digits.length % 2 === 0 ? `wrong length: want ${least / 2} bytes, got ${digits.length / 2}` : `want ${least} hex digits, got ${digits.length}`;
  }
  if (digits.length > most) return most % 2 === 0 ? `hex number longer than ${most / 2} bytes` : `more than ${most} hex digits`;
  if (digits.length < least) return `fewer than ${least} hex digits`;
  return undefined;
}

/**
 * Explains a `not` over sets of required fields ("state and stateDiff exclude each other"): names
 * the first set whose fields the value has.
 */
function describeExclusion(notSchema: unknown, value: unknown): string | undefined {
  const schema = notSchema as { required?: string[]; anyOf?: { required?: string[] }[] } | undefined;
  const sets = schema?.required !== undefined ? [schema.required] : (schema?.anyOf ?? []).map((branch) => branch.required ?? []);
  const present = value !== null && typeof value === "object" ? new Set(Object.keys(value)) : new Set<string>();
  const hit = sets.find((fields) => fields.length > 1 && fields.every((field) => present.has(field)));
  return hit === undefined ? undefined : `fields ${hit.map((field) => quote(field)).join(" and ")} cannot be given together`;
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}

/** "/topics/1" -> "field topics[1]" */
function fieldName(instancePath: string): string {
  const parts = instancePath.split("/").slice(1).map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
  let name = "";
  for (const part of parts) name += /^\d+$/.test(part) ? `[${part}]` : name === "" ? part : `.${part}`;
  return name.startsWith("[") ? `entry ${name}` : `field ${name}`;
}

function valueAt(value: unknown, instancePath: string): unknown {
  let current = value;
  for (const part of instancePath.split("/").slice(1)) {
    current = (current as Record<string, unknown> | undefined)?.[part.replaceAll("~1", "/").replaceAll("~0", "~")];
  }
  return current;
}
