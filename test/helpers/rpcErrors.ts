// Asserting JSON-RPC error answers through the generated client.
import { expect } from "chai";
import { RpcResponseError } from "../../generated/client.js";

/** Expects `call` to fail with an error answer of `code` whose message is (or matches) `message`; returns the error. */
export async function expectRpcError(call: Promise<unknown>, code: number, message: string | RegExp): Promise<RpcResponseError> {
  try {
    await call;
  } catch (error) {
    expect(error).to.be.instanceOf(RpcResponseError);
    const answer = error as RpcResponseError;
    expect(answer.code, answer.message).to.equal(code);
    if (typeof message === "string") expect(answer.message).to.equal(message);
    else expect(answer.message).to.match(message);
    return answer;
  }
  expect.fail("the call succeeded");
}
