// eth_signTypedData_v4's typed data as clients send it: an object (geth, viem), or that object as
// JSON text (ethers' JsonRpcSigner, MetaMask's convention). The text is checked for its nesting
// and size as a request body is (jsonShape.ts) before it is parsed: the body's own check skipped
// it as one string.
import { typedDataHash, TypedDataError } from "../accounts/typedData.js";
import { invalidParamsError } from "./errors.js";
import { jsonShapeExcess } from "./jsonShape.js";
import type { RequestWorkLimits } from "./options.js";

/** The EIP-712 digest of the parameter at `position`; -32602 naming the fault otherwise. */
export function typedDataParameterHash(parameter: unknown, position: number, limits: RequestWorkLimits): Uint8Array {
  let typedData = parameter;
  if (typeof parameter === "string") {
    const excess = jsonShapeExcess(parameter, { maxDepth: limits.jsonDepthLimit, maxValues: limits.jsonValueLimit });
    if (excess === "depth") throw invalidParamsError(`invalid argument ${position}: typed data nested deeper than ${limits.jsonDepthLimit} levels`);
    if (excess === "values") throw invalidParamsError(`invalid argument ${position}: typed data with more than ${limits.jsonValueLimit} elements and members`);
    try {
      typedData = JSON.parse(parameter) as unknown;
    } catch {
      throw invalidParamsError(`invalid argument ${position}: typed data given as a string must be JSON text`);
    }
  }
  try {
    return typedDataHash(typedData);
  } catch (error) {
    if (error instanceof TypedDataError) throw invalidParamsError(`invalid argument ${position}: typed data: ${error.message}`);
    throw error;
  }
}
