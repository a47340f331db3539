// viem's testClient against a node on 127.0.0.1, in mode "anvil" and in mode "hardhat": every
// action of the dev helpers (issue 36, item 4) runs through viem's own requests, and its effect is
// read back through viem's public actions. Sending from an impersonated account goes through
// viem's wallet actions (eth_sendTransaction with a JSON-RPC account).
import { expect } from "chai";
import { createTestClient, defineChain, http, publicActions, walletActions, type Address } from "viem";
import { startTestNode, type TestNode } from "../../helpers/testNode.js";

const regtest = defineChain({ id: 33, name: "regtest", nativeCurrency: { name: "RBTC", symbol: "RBTC", decimals: 18 }, rpcUrls: { default: { http: ["http://127.0.0.1:4444"] } } });
const stranger: Address = "0x00000000000000000000000000000000000000aa";
const other: Address = "0x00000000000000000000000000000000000000bb";
const cow: Address = "0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826";

for (const mode of ["anvil", "hardhat"] as const) {
  describe(`viem testClient in mode "${mode}"`, function () {
    this.timeout(60_000);
    let node: TestNode;
    const client = () => createTestClient({ mode, chain: regtest, transport: http(node.url), cacheTime: 0 }).extend(publicActions).extend(walletActions);

    beforeEach(async () => {
      node = await startTestNode();
    });
    afterEach(async () => {
      await node.stop();
    });

    it("sets balance, code, storage and nonce, seen at once", async () => {
      const test = client();
      await test.setBalance({ address: stranger, value: 10n ** 18n });
      await test.setCode({ address: stranger, bytecode: "0x600160005260206000f3" });
      await test.setStorageAt({ address: stranger, index: 2, value: `0x${"69".padStart(64, "0")}` });
      await test.setNonce({ address: stranger, nonce: 7 });
      expect(await test.getBalance({ address: stranger })).to.equal(10n ** 18n);
      expect(await test.getCode({ address: stranger })).to.equal("0x600160005260206000f3");
      expect(await test.getStorageAt({ address: stranger, slot: "0x2" })).to.equal(`0x${"69".padStart(64, "0")}`);
      expect(await test.getTransactionCount({ address: stranger })).to.equal(7);
    });

    it("mines, switches automine and interval mining, sets the next timestamp and the coinbase", async () => {
      const test = client();
      const start = await test.getBlockNumber();
      await test.mine({ blocks: 5 });
      expect(await test.getBlockNumber()).to.equal(start + 5n);
      await test.mine({ blocks: 2, interval: 30 });
      const [first, second] = [await test.getBlock({ blockNumber: start + 6n }), await test.getBlock({ blockNumber: start + 7n })];
      expect(second.timestamp - first.timestamp).to.equal(30n);

      expect(await test.getAutomine()).to.equal(true);
      await test.setAutomine(false);
      expect(await test.getAutomine()).to.equal(false);
      const hash = await test.sendTransaction({ account: cow, to: stranger, value: 1n, gas: 21_000n, gasPrice: 0n, chain: regtest });
      await test.dropTransaction({ hash });
      expect(await node.client.txpool_status()).to.deep.equal({ pending: 0, queued: 0 });
      await test.setAutomine(true);

      // viem sends seconds in mode anvil, milliseconds (seconds * 1000) in mode hardhat; the node takes seconds.
      await test.setIntervalMining({ interval: 1 });
      expect(await test.request({ method: "eth_mining" } as never)).to.equal(true);
      await test.setIntervalMining({ interval: 0 });

      const at = (await test.getBlock()).timestamp + 1_000n;
      await test.setNextBlockTimestamp({ timestamp: at });
      await test.mine({ blocks: 1 });
      expect((await test.getBlock()).timestamp).to.equal(at);

      await test.setCoinbase({ address: other });
      await test.mine({ blocks: 1 });
      expect((await test.getBlock()).miner).to.equal(other);
    });

    it("sends from an impersonated account, then stops", async () => {
      const test = client();
      await test.setBalance({ address: stranger, value: 10n ** 18n });
      await test.impersonateAccount({ address: stranger });
      const hash = await test.sendTransaction({ account: stranger, to: other, value: 5n, gas: 21_000n, gasPrice: 0n, chain: regtest });
      const receipt = await test.getTransactionReceipt({ hash });
      expect(receipt.from).to.equal(stranger);
      expect(receipt.status).to.equal("success");
      expect(await test.getBalance({ address: other })).to.equal(5n);
      await test.stopImpersonatingAccount({ address: stranger });
      let refused: unknown;
      try {
        await test.sendTransaction({ account: stranger, to: other, value: 5n, gas: 21_000n, gasPrice: 0n, chain: regtest });
      } catch (error) {
        refused = error;
      }
      expect(String(refused)).to.match(/Could not find account/);
    });
  });
}
