// The acceptance walk of a new user: deploy an ERC-20 compiled by solc, transfer tokens, read
// balances, receipts and Transfer logs, fetch blocks; with ethers v6 and web3.js v4, each value
// checked against what the client computed.
import { expect } from "chai";
import { AbiCoder, ContractFactory, Interface, JsonRpcProvider, NonceManager, Wallet, getCreateAddress, keccak256, toUtf8Bytes, zeroPadValue, type Contract } from "ethers";
import { Web3 } from "web3";
import { expectValidResult } from "../../helpers/results.js";
import { compileFixture, type CompiledContract } from "../../helpers/solidity.js";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const cowKey = keccak256(toUtf8Bytes("cow"));
const cow1 = "0x7986b3df570230288501eea3d890bd66948c9b79";
const supply = 1_000_000n * 10n ** 18n;

/** Storage slot of balanceOf[holder] (mapping at slot 0). */
function balanceSlot(holder: string): string {
  return keccak256(AbiCoder.defaultAbiCoder().encode(["address", "uint256"], [holder, 0]));
}

describe("chain: an ERC-20 through ethers and web3.js", function () {
  this.timeout(60_000);
  let node: TestNode;
  let token: CompiledContract;
  before(async () => {
    token = compileFixture("Token.sol", "Token");
    node = await startTestNode();
  });
  after(() => node.stop());

  it("deploys and transfers with ethers v6; receipts, logs, balances and blocks match", async () => {
    const provider = new JsonRpcProvider(node.url, 33, { staticNetwork: true });
    provider.pollingInterval = 20;
    const wallet = new Wallet(cowKey, provider);
    // ethers caches identical reads for 250 ms, so a nonce read right after a mined send can be
    // stale; NonceManager counts nonces locally, as ethers advises for fast-mining nodes.
    const signer = new NonceManager(wallet);
    const factory = new ContractFactory(token.abi as never, token.bytecode, signer);
    const deployNonce = await provider.getTransactionCount(wallet.address, "pending");
    const deployed = (await factory.deploy("Test Token", "TT", supply, { gasLimit: 3_000_000n })) as Contract;
    await deployed.waitForDeployment();
    const tokenAddress = await deployed.getAddress();
    expect(tokenAddress).to.equal(getCreateAddress({ from: wallet.address, nonce: deployNonce }));
    const deployReceipt = await provider.getTransactionReceipt(deployed.deploymentTransaction()!.hash);
    expect(deployReceipt!.contractAddress).to.equal(tokenAddress);
    expect(deployReceipt!.status).to.equal(1);
    expect((await provider.getCode(tokenAddress)).length).to.be.greaterThan(2);

    const transfer = await deployed.getFunction("transfer")(cow1, 1234n, { gasLimit: 100_000n });
    const receipt = await transfer.wait();
    expect(receipt!.status).to.equal(1);
    const rawReceipt = await node.client.eth_getTransactionReceipt(transfer.hash);
    expectValidResult("eth_getTransactionReceipt", rawReceipt);
    const iface = new Interface(token.abi as never);
    const transferTopic = iface.getEvent("Transfer")!.topicHash;
    expect(rawReceipt!.logs).to.have.length(1);
    const [log] = rawReceipt!.logs;
    expect(log!.address).to.equal(tokenAddress.toLowerCase());
    expect(log!.topics).to.deep.equal([transferTopic, zeroPadValue(wallet.address, 32).toLowerCase(), zeroPadValue(cow1, 32).toLowerCase()]);
    expect(BigInt(log!.data)).to.equal(1234n);
    expect(log!.logIndex).to.equal("0x0");
    expect(BigInt(rawReceipt!.gasUsed)).to.equal(receipt!.gasUsed);
    expect(Number(rawReceipt!.gasUsed)).to.be.greaterThan(21_000).and.lessThan(100_000);

    expect(BigInt(await provider.getStorage(tokenAddress, balanceSlot(cow1)))).to.equal(1234n);
    expect(BigInt(await provider.getStorage(tokenAddress, balanceSlot(wallet.address)))).to.equal(supply - 1234n);

    const block = await provider.getBlock(receipt!.blockNumber);
    expect(block!.hash).to.equal(receipt!.blockHash);
    expect(block!.transactions).to.deep.equal([transfer.hash]);
    const byHash = await provider.getBlock(receipt!.blockHash);
    expect(byHash!.number).to.equal(receipt!.blockNumber);
    expect(byHash!.parentHash).to.equal((await provider.getBlock(receipt!.blockNumber - 1))!.hash);
    provider.destroy();
  });

  it("transfers with web3.js v4 from an unlocked node account", async () => {
    const web3 = new Web3(node.url);
    web3.eth.transactionPollingInterval = 20;
    const [, from, recipient] = (await web3.eth.getAccounts()) as [string, string, string];
    const contract = new web3.eth.Contract(token.abi as never);
    const deployed = await contract.deploy({ data: token.bytecode, arguments: ["Web3 Token", "W3", supply] as never }).send({ from, gas: "3000000", gasPrice: "0" });
    const tokenAddress = deployed.options.address!;
    const receipt = await (deployed.methods as never as { transfer(to: string, value: bigint): { send(options: object): Promise<{ status: bigint; blockHash: string; blockNumber: bigint; logs: { topics: string[] }[]; transactionHash: string }> } })
      .transfer(recipient, 99n)
      .send({ from, gas: "100000", gasPrice: "0" });
    expect(receipt.status).to.equal(1n);
    expect(receipt.logs[0]!.topics[0]).to.equal(keccak256(toUtf8Bytes("Transfer(address,address,uint256)")));
    expect(BigInt(await web3.eth.getStorageAt(tokenAddress, balanceSlot(recipient)))).to.equal(99n);
    expect(BigInt(await web3.eth.getStorageAt(tokenAddress, balanceSlot(from)))).to.equal(supply - 99n);
    const block = await web3.eth.getBlock(receipt.blockNumber);
    expect(block.hash).to.equal(receipt.blockHash);
    expect(block.transactions).to.deep.equal([receipt.transactionHash]);
  });

  it("sends from a web3.js v4 wallet account, whose estimate carries web3's own fields (chain, hardfork, networkId)", async () => {
    const web3 = new Web3(node.url);
    web3.eth.transactionPollingInterval = 20;
    // Legacy transactions: the chain's blocks have no base fee (see the README).
    web3.defaultTransactionType = "0x0";
    const account = web3.eth.accounts.privateKeyToAccount(keccak256(toUtf8Bytes("cow3")));
    web3.eth.accounts.wallet.add(account);
    const recipient = "0x00000000000000000000000000000000000000c3";
    const receipt = await web3.eth.sendTransaction({ from: account.address, to: recipient, value: 5n, gasPrice: 0n });
    expect(receipt.status).to.equal(1n);
    expect(receipt.gasUsed).to.equal(21_000n);
    expect(await web3.eth.getBalance(recipient)).to.equal(5n);
  });
});
