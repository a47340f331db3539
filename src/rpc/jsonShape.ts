// A linear look at a request body before JSON.parse gets it: how deep its arrays and objects nest
// and how many elements and members they hold. JSON.parse runs on the main thread in one go and
// its time is not set by the bytes alone: 5 MB of "[" took 0.7-1.7 s here (an array object per
// byte), 5 MB of one-member objects with distinct keys about 1 s (a new hidden class per key, some
// 1.7 µs each), where 5 MB of one hex string takes 10-50 ms. This pass walks the text once, skips
// strings with indexOf (native), keeps no stack, and stops at the first limit passed, so a refused
// body costs a few microseconds and an accepted one a few milliseconds at most.

export interface JsonShapeLimits {
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
  /** Most array elements and object members, all levels together. */
  maxValues: number;
}

/** Which limit a body passes, or undefined when it keeps within both. */
export type JsonShapeExcess = "depth" | "values" | undefined;

const quote = 0x22;
const backslash = 0x5c;
const comma = 0x2c;
const openArray = 0x5b;
const closeArray = 0x5d;
const openObject = 0x7b;
const closeObject = 0x7d;

/** Index of the quote closing the string opened at `start`; the text's length when there is none. */
function closingQuote(text: string, start: number): number {
  let at = text.indexOf('"', start + 1);
  while (at > 0) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === backslash) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}

/** Whether the container opened at `start` closes before anything else but white space. */
function isEmptyContainer(text: string, start: number): boolean {
  for (let index = start + 1; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === closeArray || code === closeObject) return true;
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return false;
  }
  return true;
}

/**
 * Checks a JSON text's nesting and size against `limits` without parsing it. A malformed text is
 * measured as far as it goes: JSON.parse reports what is wrong with it afterwards.
 */
export function jsonShapeExcess(text: string, limits: JsonShapeLimits): JsonShapeExcess {
  let depth = 0;
  let values = 0;
  for (let index = 0; index < text.length; index++) {
    switch (text.charCodeAt(index)) {
      case quote:
        index = closingQuote(text, index);
        break;
      case openArray:
      case openObject:
        if (++depth > limits.maxDepth) return "depth";
        // The first element or member; each further one follows a comma.
        if (!isEmptyContainer(text, index) && ++values > limits.maxValues) return "values";
        break;
      case closeArray:
      case closeObject:
        depth--;
        break;
      case comma:
        if (++values > limits.maxValues) return "values";
        break;
    }
  }
  return undefined;
}
