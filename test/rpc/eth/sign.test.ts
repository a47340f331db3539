// eth_sign: EIP-191 personal-message signatures that ethers' verifyMessage recovers; unknown and
// locked accounts refused with AccountNotFound, changing nothing.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { getBytes, hexlify, toUtf8Bytes, verifyMessage } from "ethers";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { expectValidResult } from "../../helpers/results.js";
import { startManualNode, type ManualNode } from "../../helpers/manualNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const cow1 = "0x7986b3df570230288501eea3d890bd66948c9b79";
const stranger = "0x00000000000000000000000000000000000000aa";

describe("eth_sign", () => {
  let node: ManualNode;
  beforeEach(async () => (node = await startManualNode()));
  afterEach(() => node.stop());

  it("signs so that ethers' verifyMessage recovers the signer, for empty, text and binary messages", async () => {
    for (const [account, message] of [
      [cow, "0x"],
      [cow, hexlify(toUtf8Bytes("Hello, chain-node!"))],
      [cow1, `0x${"00ff".repeat(100)}`],
    ] as const) {
      const signature = await node.client.eth_sign(account, message);
      expectValidResult("eth_sign", signature);
      expect(Number.parseInt(signature.slice(-2), 16)).to.be.oneOf([27, 28]);
      expect(verifyMessage(getBytes(message), signature).toLowerCase()).to.equal(account);
    }
  });

  it("gives the signature of the openrpc.json example", async () => {
    const document = JSON.parse(readFileSync(new URL("../../../../openrpc.json", import.meta.url), "utf8")) as {
      methods: { name: string; examples: { params: { value: unknown }[]; result: { value: unknown } }[] }[];
    };
    const example = document.methods.find((entry) => entry.name === "eth_sign")!.examples[0]!;
    const [address, message] = example.params.map((param) => param.value as string);
    expect(await node.client.eth_sign(address!, message!)).to.equal(example.result.value);
  });

  it("refuses an account the node does not hold, and a locked one, with AccountNotFound", async () => {
    const blockBefore = await node.client.eth_blockNumber();
    await expectRpcError(node.client.eth_sign(stranger, "0x01"), -32602, "Account not found");
    expect(node.services.wallet.lock(getBytes(cow1))).to.equal(true);
    await expectRpcError(node.client.eth_sign(cow1, "0x01"), -32602, "Account not found");
    // Nothing changed: no block, no pool entry, the other accounts still sign.
    expect(await node.client.eth_blockNumber()).to.equal(blockBefore);
    expect(await node.client.txpool_status()).to.deep.equal({ pending: 0, queued: 0 });
    expect(verifyMessage(getBytes("0x01"), await node.client.eth_sign(cow, "0x01")).toLowerCase()).to.equal(cow);
  });

  it("refuses malformed parameters with -32602", async () => {
    await expectRpcError(node.client.eth_sign(cow, "0x1"), -32602, /^invalid argument 1: /);
    await expectRpcError(node.client.eth_sign("0x1234", "0x01"), -32602, /^invalid argument 0: /);
  });
});
