// Keys on a node bound beyond loopback, over real sockets on a non-loopback address of this
// machine: nothing is unlocked (development, new and imported accounts alike) unless the node runs
// with --allow-insecure-unlock, signing from a locked account answers the reference's errors, and
// personal_dumpRawKey is refused in any case. The start-up log says who can use which account.
import { expect } from "chai";
import { networkInterfaces } from "node:os";
import { RpcClient } from "../../../generated/client.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const recipient = "0x00000000000000000000000000000000000000bb";
const importedKey = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
const passphrase = "pw";
const unlockForbidden = "account unlock with HTTP access is forbidden";
const exportForbidden = "private key export is forbidden on a node bound beyond loopback";

/**
 * An IPv4 address of this machine outside loopback, to bind and call through. Without one, the
 * node binds the wildcard and is called on 127.0.0.1: the node judges its bind, not the caller.
 */
function machineAddress(): string | undefined {
  const addresses = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []);
  return addresses.find((entry) => entry.family === "IPv4" && !entry.internal)?.address;
}

/** A node bound to `bindHost` beyond loopback and a client that reaches it through `callHost`. */
async function startExposedNode(bindHost: string, callHost: string, allowInsecureUnlock: boolean): Promise<{ node: TestNode; client: RpcClient; port: string }> {
  const node = await startTestNode({ rpc: { host: bindHost, modules: "eth,personal", allowInsecureUnlock } });
  const port = new URL(node.url).port;
  return { node, client: new RpcClient(`http://${callHost}:${port}`, { timeoutMs: 10_000 }), port };
}

function logLines(node: TestNode, level: number): string[] {
  return node.logs.filter((record) => record.level === level).map((record) => String(record.msg));
}

describe("personal_ and signing on a bind beyond loopback", function () {
  this.timeout(30_000);
  const address = machineAddress();
  let exposed: { node: TestNode; client: RpcClient; port: string } | undefined;
  afterEach(async () => {
    await exposed?.node.stop();
    exposed = undefined;
  });

  it("unlocks nothing: listing works, signing and sending from any account answer the reference's errors, nothing changes", async () => {
    exposed = await startExposedNode("0.0.0.0", address ?? "127.0.0.1", false);
    const { client, node } = exposed;
    const development = await client.eth_accounts();
    expect(development).to.have.length(11);
    expect(development[0]).to.equal(cow);
    const blockBefore = await client.eth_blockNumber();

    const created = await client.personal_newAccount(passphrase);
    const imported = await client.personal_importRawKey(importedKey, passphrase);
    expect(await client.personal_listAccounts()).to.deep.equal([...development, created, imported]);
    for (const from of [cow, development[10]!, created, imported]) {
      await expectRpcError(client.eth_sendTransaction({ from, to: recipient, value: "0x1" }), -32602, `Could not find account for address: ${from}`);
      await expectRpcError(client.eth_sign(from, "0x68656c6c6f"), -32602, "Account not found");
      await expectRpcError(client.personal_dumpRawKey(from), -32000, exportForbidden);
      await expectRpcError(client.personal_unlockAccount(from, passphrase), -32000, unlockForbidden);
      // Nothing was unlocked to lock.
      expect(await client.personal_lockAccount(from)).to.equal(false);
    }
    await expectRpcError(client.personal_newAccountWithSeed("a seed"), -32000, unlockForbidden);

    expect(await client.eth_accounts()).to.deep.equal([...development, created, imported]);
    expect(await client.eth_blockNumber()).to.equal(blockBefore);
    expect(await client.eth_getTransactionCount(cow, "latest")).to.equal("0x0");
    expect(logLines(node, 50).filter((message) => message.includes("unlocked"))).to.deep.equal([]);
    expect(logLines(node, 30).some((message) => message.startsWith("bound beyond loopback: every account is locked"))).to.equal(true);
  });

  it("still sends with a passphrase given for one transaction, and the account stays locked", async () => {
    exposed = await startExposedNode("0.0.0.0", address ?? "127.0.0.1", false);
    const { client } = exposed;
    const created = await client.personal_newAccount(passphrase);
    const hash = await client.personal_sendTransaction({ from: created, to: recipient, gas: "0x5208" }, passphrase);
    expect((await client.eth_getTransactionByHash(hash))!.from).to.equal(created);
    await expectRpcError(client.eth_sendTransaction({ from: created, to: recipient }), -32602, `Could not find account for address: ${created}`);
  });

  it("with --allow-insecure-unlock keeps the old behaviour, dumpRawKey aside, and warns who can sign from which accounts", async () => {
    const bindHost = address ?? "0.0.0.0";
    exposed = await startExposedNode(bindHost, address ?? "127.0.0.1", true);
    const { client, node, port } = exposed;
    const development = await client.eth_accounts();

    const sent = await client.eth_sendTransaction({ from: cow, to: recipient, value: "0x1" });
    expect((await client.eth_getTransactionByHash(sent))!.from).to.equal(cow);
    const created = await client.personal_newAccount(passphrase);
    expect(await client.eth_sign(created, "0x68656c6c6f")).to.match(/^0x[0-9a-f]{130}$/);
    expect(await client.personal_lockAccount(created)).to.equal(true);
    expect(await client.personal_unlockAccount(created, passphrase)).to.equal(true);
    expect(await client.personal_newAccountWithSeed("a seed")).to.match(/^0x[0-9a-f]{40}$/);
    for (const account of [cow, created]) await expectRpcError(client.personal_dumpRawKey(account), -32000, exportForbidden);

    const warning = node.logs.find((record) => record.level === 40 && String(record.msg).startsWith("bound beyond loopback with --allow-insecure-unlock"));
    expect(warning, "the start-up warning").to.not.equal(undefined);
    expect(warning!.unlockedAccounts).to.deep.equal(development);
    const reachedBy = address === undefined ? `any machine that reaches port ${port} on any address of this machine` : `any machine that reaches ${address}:${port}`;
    expect(String(warning!.msg)).to.contain(`${reachedBy} can sign and send`);
  });
});
