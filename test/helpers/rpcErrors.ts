// Asserts that a client call fails with a given JSON-RPC error.
import { expect } from "chai";
import { RpcResponseError } from "../../generated/client.js";

export async function expectRpcError(call: Promise<unknown>, code: number, message: string | RegExp): Promise<void> {
  try {
    await call;
  } catch (error) {
    expect(error).to.be.instanceOf(RpcResponseError);
    const { code: actualCode, message: actualMessage } = error as RpcResponseError;
    expect(actualCode, actualMessage).to.equal(code);
    if (typeof message === "string") expect(actualMessage).to.equal(message);
    else expect(actualMessage).to.match(message);
    return;
  }
  expect.fail("the call succeeded");
}
