// Run by test/unit/node/lazyEngine.test.ts in a child process started with
// --import moduleLoads.js: starts an in-memory node, asks eth_blockNumber, then makes a call, and
// prints which of the EVM's modules had loaded after each step (JSON on one line).
import { modulesLoadedSoFar } from "./moduleLoads.js";
import { startTestNode } from "./testNode.js";

const engineModule = /\/@ethereumjs\/(evm|vm)\/|\/execution\/interpreterFastPaths\.js$/;

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return ((await response.json()) as { result?: unknown }).result;
}

const node = await startTestNode();
try {
  const blockNumber = await rpc(node.url, "eth_blockNumber", []);
  const afterFirstAnswer = (await modulesLoadedSoFar()).filter((url) => engineModule.test(url));
  const callResult = await rpc(node.url, "eth_call", [{ to: "0x0000000000000000000000000000000000000004", data: "0x1234" }, "latest"]);
  const afterCall = (await modulesLoadedSoFar()).filter((url) => engineModule.test(url));
  console.log(JSON.stringify({ blockNumber, afterFirstAnswer, callResult, afterCall }));
} finally {
  await node.stop();
}
