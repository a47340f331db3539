// eth_getProof: account and storage proofs checked by an independent verifier (@ethereumjs/mpt's
// proof verification) against the stateRoot of the block header fetched over RPC, at the head,
// at an older block and at genesis; absence proofs for accounts and slots that do not exist.
import { expect } from "chai";
import { verifyMerkleProof } from "@ethereumjs/mpt";
import { AbiCoder, ContractFactory, decodeRlp, getBytes, keccak256, toBeHex, zeroPadValue } from "ethers";
import { postJson } from "../../helpers/http.js";
import { expectRpcError } from "../../helpers/rpcErrors.js";
import { expectValidResult } from "../../helpers/results.js";
import { compileFixture } from "../../helpers/solidity.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cow = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";
const cow1 = "0x7986b3df570230288501eea3d890bd66948c9b79";
const stranger = "0x00000000000000000000000000000000000000aa";
const supply = 1_000_000n * 10n ** 18n;
const emptyCodeHash = keccak256("0x");
const emptyTrieRoot = keccak256("0x80");

type ProofResult = NonNullable<Awaited<ReturnType<TestNode["client"]["eth_getProof"]>>>;

/** Storage slot of balanceOf[holder] (mapping at slot 0). */
function balanceSlot(holder: string): string {
  return keccak256(AbiCoder.defaultAbiCoder().encode(["address", "uint256"], [holder, 0]));
}

function quantity(bytes: string): bigint {
  return bytes === "0x" ? 0n : BigInt(bytes);
}

/**
 * Verifies `proof` as a light client would: the account against the state root of `block`'s header,
 * its fields against the proven account RLP, each slot against the proven storageHash.
 */
async function verifyProof(node: TestNode, proof: ProofResult, block: string, slots: string[]): Promise<void> {
  expectValidResult("eth_getProof", proof);
  const header = (await node.client.eth_getBlockByNumber(block, false))!;
  const stateRoot = getBytes(header.stateRoot);
  const accountProof = proof.accountProof.map((node) => getBytes(node));
  expect(keccak256(accountProof[0]!)).to.equal(header.stateRoot);
  const accountRlp = await verifyMerkleProof(getBytes(proof.address), accountProof, { useKeyHashing: true, root: stateRoot });
  if (accountRlp === null) {
    expect(proof).to.include({ balance: "0x0", nonce: "0x0", codeHash: emptyCodeHash, storageHash: emptyTrieRoot });
  } else {
    const [nonce, balance, storageRoot, codeHash] = decodeRlp(accountRlp) as string[];
    expect(BigInt(proof.nonce)).to.equal(quantity(nonce!));
    expect(BigInt(proof.balance)).to.equal(quantity(balance!));
    expect(proof.storageHash).to.equal(storageRoot);
    expect(proof.codeHash).to.equal(codeHash);
  }
  expect(proof.codeHash).to.equal(keccak256(await node.client.eth_getCode(proof.address, block)));
  expect(proof.storageProof.map((entry) => BigInt(entry.key))).to.deep.equal(slots.map((slot) => BigInt(slot)));
  for (const [index, entry] of proof.storageProof.entries()) {
    const slot = slots[index]!;
    expect(BigInt(entry.value)).to.equal(BigInt(await node.client.eth_getStorageAt(proof.address, slot, block)));
    if (proof.storageHash === emptyTrieRoot) {
      expect(entry.proof).to.deep.equal([]);
      expect(entry.value).to.equal("0x0");
      continue;
    }
    const storageProof = entry.proof.map((node) => getBytes(node));
    expect(keccak256(storageProof[0]!)).to.equal(proof.storageHash);
    const valueRlp = await verifyMerkleProof(getBytes(slot), storageProof, { useKeyHashing: true, root: getBytes(proof.storageHash) });
    expect(valueRlp === null ? 0n : quantity(decodeRlp(valueRlp) as string)).to.equal(BigInt(entry.value));
  }
}

describe("eth_getProof", function () {
  this.timeout(60_000);
  let node: TestNode;
  let token: string;
  let deployBlock: string;
  before(async () => {
    node = await startTestNode();
    const compiled = compileFixture("Token.sol", "Token");
    const deployment = await new ContractFactory(compiled.abi as never, compiled.bytecode).getDeployTransaction("Proof Token", "PT", supply);
    const deployHash = await node.client.eth_sendTransaction({ from: cow, data: deployment.data, gas: "0x2dc6c0" });
    const receipt = (await node.client.eth_getTransactionReceipt(deployHash))!;
    token = receipt.contractAddress!;
    deployBlock = receipt.blockNumber;
    // transfer(cow1, 1234): changes two balance slots in a later block.
    const transfer = `0xa9059cbb${zeroPadValue(cow1, 32).slice(2)}${toBeHex(1234n, 32).slice(2)}`;
    await node.client.eth_sendTransaction({ from: cow, to: token, data: transfer, gas: "0x186a0" });
  });
  after(() => node.stop());

  it("proves a contract and its storage slots (set and unset) against the head's stateRoot", async () => {
    const slots = [balanceSlot(cow), balanceSlot(cow1), balanceSlot(stranger), toBeHex(2n, 32)];
    const proof = await node.client.eth_getProof(token, slots, "latest");
    await verifyProof(node, proof, "latest", slots);
    expect(proof.address).to.equal(token);
    expect(proof.nonce).to.equal("0x1");
    expect(proof.storageHash).to.not.equal(emptyTrieRoot);
    expect(proof.storageProof.map((entry) => BigInt(entry.value))).to.deep.equal([supply - 1234n, 1234n, 0n, supply]);
    expect(proof.storageProof[2]!.proof.length).to.be.greaterThan(0);
    // A short key is the same slot, left-padded (as geth reads it).
    const short = await node.client.eth_getProof(token, ["0x2", "0x02"], "latest");
    expect(short.storageProof.map((entry) => [entry.key, entry.value])).to.deep.equal([
      ["0x2", proof.storageProof[3]!.value],
      ["0x2", proof.storageProof[3]!.value],
    ]);
    expect(short.storageProof[0]!.proof).to.deep.equal(proof.storageProof[3]!.proof);
  });

  it("answers the text JSON.stringify makes of the proof object, members in the order of the spec", async () => {
    // The answer is written as text, in parts: it must read as the object form would have been written.
    const slots = [balanceSlot(cow), toBeHex(2n, 32), balanceSlot(stranger)];
    const answer = await postJson(node.url, { jsonrpc: "2.0", id: 7, method: "eth_getProof", params: [token, slots, "latest"] });
    const parsed = answer.json as { result: ProofResult };
    expect(answer.text).to.equal(JSON.stringify(parsed));
    expect(Object.keys(parsed.result)).to.deep.equal(["address", "balance", "codeHash", "nonce", "storageHash", "accountProof", "storageProof"]);
    for (const entry of parsed.result.storageProof) expect(Object.keys(entry)).to.deep.equal(["key", "value", "proof"]);
    expect(parsed.result.storageProof.map((entry) => entry.key)).to.deep.equal([BigInt(slots[0]!), 2n, BigInt(slots[2]!)].map((key) => `0x${key.toString(16)}`));
    await verifyProof(node, parsed.result, "latest", slots);
    const none = await postJson(node.url, { jsonrpc: "2.0", id: 8, method: "eth_getProof", params: [token, [], "latest"] });
    expect(none.text).to.equal(JSON.stringify(none.json));
    expect((none.json as { result: ProofResult }).result.storageProof).to.deep.equal([]);
  });

  it("proves the state of an older block and of genesis, which kept their own roots", async () => {
    const slots = [balanceSlot(cow), balanceSlot(cow1)];
    const atDeploy = await node.client.eth_getProof(token, slots, deployBlock);
    await verifyProof(node, atDeploy, deployBlock, slots);
    expect(atDeploy.storageProof.map((entry) => BigInt(entry.value))).to.deep.equal([supply, 0n]);

    const atGenesis = await node.client.eth_getProof(cow, [], "earliest");
    await verifyProof(node, atGenesis, "earliest", []);
    expect(atGenesis).to.include({ nonce: "0x0", balance: await node.client.eth_getBalance(cow, "earliest") });
    const cowNow = await node.client.eth_getProof(cow, [], "latest");
    await verifyProof(node, cowNow, "latest", []);
    expect(cowNow.nonce).to.equal("0x2");

    // A proof does not verify against another block's root.
    const latestRoot = getBytes((await node.client.eth_getBlockByNumber("latest", false))!.stateRoot);
    let refused = false;
    await verifyMerkleProof(getBytes(token), atDeploy.accountProof.map((node) => getBytes(node)), { useKeyHashing: true, root: latestRoot }).catch(() => (refused = true));
    expect(refused).to.equal(true);
  });

  it("gives absence proofs for an account that does not exist, with one entry per requested slot", async () => {
    const slots = [toBeHex(0n, 32), balanceSlot(cow)];
    const proof = await node.client.eth_getProof(stranger, slots, "latest");
    await verifyProof(node, proof, "latest", slots);
    expect(await verifyMerkleProof(getBytes(stranger), proof.accountProof.map((node) => getBytes(node)), { useKeyHashing: true, root: getBytes((await node.client.eth_getBlockByNumber("latest", false))!.stateRoot) })).to.equal(null);
    expect(proof.storageProof).to.deep.equal([
      { key: "0x0", value: "0x0", proof: [] },
      { key: toBeHex(BigInt(balanceSlot(cow))), value: "0x0", proof: [] },
    ]);
  });

  it("refuses pending, blocks beyond the head and malformed keys", async () => {
    await expectRpcError(node.client.eth_getProof(cow, [], "pending" as "latest"), -32602, 'invalid argument 2: "pending" is not one of: "latest", "earliest", or a hex number');
    await expectRpcError(node.client.eth_getProof(cow, [], "0x99"), -32600, "Block 0x99 not found");
    await expectRpcError(node.client.eth_getProof(cow, [`0x${"1".repeat(65)}`], "latest"), -32602, /^invalid argument 1: /);
    await expectRpcError(node.client.eth_getProof(cow, ["0x"], "latest"), -32602, /^invalid argument 1: /);
  });
});
