// personal_sign and eth_signTypedData_v4 over HTTP: ethers' JsonRpcSigner signs a message and
// EIP-712 data through the node and verifyMessage / verifyTypedData recover the account; a
// passphrase opens a key-store file for one signature only; locked, unknown and (beyond loopback)
// every account refused as eth_sign refuses them; every malformed parameter answers -32602.
import { networkInterfaces } from "node:os";
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { getBytes, JsonRpcProvider, TypedDataEncoder, verifyMessage, verifyTypedData } from "ethers";
import { RpcClient } from "../../../generated/client.js";
import { expectValidResult } from "../../helpers/results.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const cow1 = "0x7986b3df570230288501eea3d890bd66948c9b79";
const stranger = "0x00000000000000000000000000000000000000aa";
const passphrase = "correct horse battery staple";

const openRpc = JSON.parse(readFileSync(new URL("../../../../openrpc.json", import.meta.url), "utf8")) as {
  methods: { name: string; examples: { params: { value: unknown }[]; result: { value: unknown } }[] }[];
};
const exampleOf = (method: string) => openRpc.methods.find((entry) => entry.name === method)!.examples[0]!;
const mail = exampleOf("eth_signTypedData_v4").params[1]!.value as {
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  domain: Record<string, unknown>;
  message: Record<string, unknown>;
};
const { EIP712Domain: _domainType, ...mailTypes } = mail.types;

describe("personal_sign and eth_signTypedData_v4", function () {
  this.timeout(30_000);
  let node: TestNode;
  beforeEach(async () => (node = await startTestNode()));
  afterEach(() => node.stop());

  it("signs through ethers' JsonRpcSigner: verifyMessage and verifyTypedData recover the account", async () => {
    const provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true });
    const signer = await provider.getSigner(cow1);
    const messageSignature = await signer.signMessage("Hello from ethers");
    expect(verifyMessage("Hello from ethers", messageSignature).toLowerCase()).to.equal(cow1);
    // JsonRpcSigner sends the typed data as JSON text.
    const typedSignature = await signer.signTypedData(mail.domain, mailTypes, mail.message);
    expect(verifyTypedData(mail.domain, mailTypes, mail.message, typedSignature).toLowerCase()).to.equal(cow1);
    provider.destroy();
  });

  it("gives the openrpc.json examples' signatures, personal_sign the same as eth_sign", async () => {
    const typed = exampleOf("eth_signTypedData_v4");
    const signature = await node.client.eth_signTypedData_v4(cow, mail);
    expect(signature).to.equal(typed.result.value);
    expectValidResult("eth_signTypedData_v4", signature);
    expect(verifyTypedData(mail.domain, mailTypes, mail.message, signature).toLowerCase()).to.equal(cow);
    expect(await node.client.eth_signTypedData_v4(cow, JSON.stringify(mail))).to.equal(signature);
    const personal = exampleOf("personal_sign");
    const [message, address] = personal.params.map((param) => param.value as string);
    expect(await node.client.personal_sign(message!, address!)).to.equal(personal.result.value);
    expect(await node.client.eth_sign(address!, message!)).to.equal(personal.result.value);
    expect(TypedDataEncoder.hash(mail.domain, mailTypes, mail.message)).to.have.length(66);
  });

  it("with a passphrase opens the key-store file for that signature only", async () => {
    const created = await node.client.personal_newAccount(passphrase);
    expect(await node.client.personal_lockAccount(created)).to.equal(true);
    const signature = await node.client.personal_sign("0x68656c6c6f", created, passphrase);
    expect(verifyMessage(getBytes("0x68656c6c6f"), signature).toLowerCase()).to.equal(created);
    // Still locked.
    await expectRpcError(node.client.personal_sign("0x68656c6c6f", created), -32602, "Account not found");
    await expectRpcError(node.client.eth_signTypedData_v4(created, mail), -32602, "Account not found");
    await expectRpcError(node.client.personal_sign("0x68656c6c6f", created, "wrong"), -32000, "could not decrypt key with given passphrase");
    // A development account has no key-store file to open.
    await expectRpcError(node.client.personal_sign("0x68656c6c6f", cow, passphrase), -32001, `unknown account ${cow}`);
    await expectRpcError(node.client.personal_sign("0x68656c6c6f", stranger, passphrase), -32001, `unknown account ${stranger}`);
  });

  it("refuses unknown and locked accounts as eth_sign does, changing nothing", async () => {
    await expectRpcError(node.client.personal_sign("0x01", stranger), -32602, "Account not found");
    await expectRpcError(node.client.eth_signTypedData_v4(stranger, mail), -32602, "Account not found");
    expect(await node.client.personal_lockAccount(cow1)).to.equal(true);
    await expectRpcError(node.client.personal_sign("0x01", cow1), -32602, "Account not found");
    await expectRpcError(node.client.eth_signTypedData_v4(cow1, mail), -32602, "Account not found");
    expect(await node.client.eth_blockNumber()).to.equal("0x0");
    expect(verifyMessage(getBytes("0x01"), await node.client.personal_sign("0x01", cow)).toLowerCase()).to.equal(cow);
  });

  it("refuses malformed parameters with -32602 naming the argument and the fault", async () => {
    const client = node.client as unknown as Record<string, (...params: unknown[]) => Promise<unknown>>;
    await expectRpcError(client.personal_sign!("0x1", cow), -32602, /^invalid argument 0: /);
    await expectRpcError(client.personal_sign!("0x01", "0x1234"), -32602, /^invalid argument 1: /);
    await expectRpcError(client.personal_sign!("0x01", cow, 7), -32602, /^invalid argument 2: /);
    await expectRpcError(client.eth_signTypedData_v4!("0x1234", mail), -32602, /^invalid argument 0: /);
    await expectRpcError(client.eth_signTypedData_v4!(cow, 7), -32602, /^invalid argument 1: /);
    await expectRpcError(client.eth_signTypedData_v4!(cow, { ...mail, primaryType: undefined }), -32602, /^invalid argument 1: /);
    await expectRpcError(client.eth_signTypedData_v4!(cow, "{not json"), -32602, "invalid argument 1: typed data given as a string must be JSON text");
    await expectRpcError(client.eth_signTypedData_v4!(cow, "[".repeat(200) + "]".repeat(200)), -32602, "invalid argument 1: typed data nested deeper than 128 levels");
    await expectRpcError(client.eth_signTypedData_v4!(cow, { ...mail, primaryType: "Letter" }), -32602, 'invalid argument 1: typed data: primaryType: "Letter" is not one of the struct types');
    const badWallet = { ...mail, message: { ...mail.message, to: { name: "Bob", wallet: "0x12" } } };
    await expectRpcError(client.eth_signTypedData_v4!(cow, badWallet), -32602, 'invalid argument 1: typed data: message.to.wallet: expected a 20-byte 0x-hex address, got "0x12"');
    await expectRpcError(client.eth_signTypedData_v4!(cow, JSON.stringify(badWallet)), -32602, 'invalid argument 1: typed data: message.to.wallet: expected a 20-byte 0x-hex address, got "0x12"');
  });
});

describe("personal_sign and eth_signTypedData_v4 on a bind beyond loopback", function () {
  this.timeout(30_000);
  const machine = Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .find((entry) => entry.family === "IPv4" && !entry.internal)?.address;
  let node: TestNode | undefined;
  afterEach(() => node?.stop());

  it("signs with no unlocked key, only with a passphrase for one signature", async () => {
    node = await startTestNode({ rpc: { host: "0.0.0.0", modules: "eth,personal", allowInsecureUnlock: false } });
    const client = new RpcClient(`http://${machine ?? "127.0.0.1"}:${new URL(node.url).port}`, { timeoutMs: 10_000 });
    const created = await client.personal_newAccount(passphrase);
    for (const account of [cow, created]) {
      await expectRpcError(client.personal_sign("0x01", account), -32602, "Account not found");
      await expectRpcError(client.eth_signTypedData_v4(account, mail), -32602, "Account not found");
    }
    const signature = await client.personal_sign("0x01", created, passphrase);
    expect(verifyMessage(getBytes("0x01"), signature).toLowerCase()).to.equal(created);
    await expectRpcError(client.eth_sign(created, "0x01"), -32602, "Account not found");
  });
});
