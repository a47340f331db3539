// openrpc.json: a valid OpenRPC document covering the spec's surface, whose examples validate.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { expect } from "chai";
import { openRpcDocumentJson } from "../../generated/discover.js";
import { rpcMethodTable, unsupportedMethods } from "../../generated/methodTable.js";
import { resultValidatorFor } from "../helpers/results.js";
import { startTestNode } from "../helpers/testNode.js";

const documentPath = new URL("../../../openrpc.json", import.meta.url);
const document = JSON.parse(readFileSync(documentPath, "utf8")) as {
  methods: { name: string; params: unknown[]; errors?: { $ref?: string; code?: number }[]; examples?: unknown[] }[];
  components: Record<string, Record<string, unknown>>;
};
const { validateOpenRPCDocument } = createRequire(import.meta.url)("@open-rpc/schema-utils-js") as {
  validateOpenRPCDocument(document: unknown): true | Error;
};

/** The support table of the spec (section 4.2), YES or PARTIALLY, plus the four stated-shape methods. */
const supportedBySpec = `web3_clientVersion web3_sha3 net_version net_peerCount net_peerList net_listening eth_chainId
eth_protocolVersion eth_syncing eth_coinbase eth_mining eth_hashrate eth_gasPrice eth_accounts eth_blockNumber eth_getBalance
eth_getStorageAt eth_getTransactionCount eth_getBlockTransactionCountByHash eth_getBlockTransactionCountByNumber
eth_getUncleCountByBlockHash eth_getUncleCountByBlockNumber eth_getCode eth_getBlockByNumber
eth_getTransactionByBlockNumberAndIndex eth_getUncleByBlockNumberAndIndex eth_sign eth_sendTransaction eth_sendRawTransaction
eth_call eth_estimateGas eth_getBlockByHash eth_getTransactionByHash eth_getTransactionByBlockHashAndIndex
eth_getTransactionReceipt eth_pendingTransactions eth_getUncleByBlockHashAndIndex eth_newFilter eth_newBlockFilter
eth_newPendingTransactionFilter eth_uninstallFilter eth_getFilterChanges eth_getFilterLogs eth_getLogs eth_bridgeState
eth_netHashrate debug_traceTransaction debug_traceBlockByHash debug_wireProtocolQueueSize evm_increaseTime evm_mine evm_reset
evm_revert evm_snapshot evm_startMining evm_stopMining mnr_submitParentBlock mnr_submitParentBlockTransactions
mnr_submitParentBlockPartialMerkle mnr_getWork personal_dumpRawKey personal_importRawKey personal_listAccounts
personal_lockAccount personal_newAccountWithSeed personal_newAccount personal_sendTransaction personal_unlockAccount
ext_getRawTransactionReceiptByHash ext_getTransactionReceiptNodesByHash ext_getRawBlockHeaderByHash
ext_getRawBlockHeaderByNumber ext_protocolVersion trace_transaction trace_block trace_filter txpool_content txpool_inspect
txpool_status sco_banAddress sco_unbanAddress sco_peerList sco_bannedAddresses sco_reputationSummary
eth_getWork eth_submitWork eth_submitHashrate eth_getProof`.split(/\s+/);

/** Methods beyond the spec's table that issue 36 adds: fees (item 2), signing (item 3) and reads (item 5). */
const addedByIssue36Signing = "personal_sign eth_signTypedData_v4 eth_getBlockReceipts eth_createAccessList debug_traceCall eth_feeHistory eth_maxPriorityFeePerGas".split(" ");
/** Issue 36, item 1: subscriptions over WebSocket. */
const subscriptionMethods = ["eth_subscribe", "eth_unsubscribe"];
/** Issue 36, item 4: the test helpers under the names Anvil's, Hardhat's and viem's tools call. */
const devHelperMethods = ["evm_setNextBlockTimestamp", "evm_setAutomine", "evm_setIntervalMining"].concat(
  ..."mine setBalance setCode setStorageAt setNonce impersonateAccount stopImpersonatingAccount getAutomine setCoinbase dropTransaction"
    .split(" ")
    .map((name) => [`anvil_${name}`, `hardhat_${name}`]),
);

const unsupportedBySpec = `eth_getCompilers eth_compileLLL eth_compileSolidity eth_compileSerpent db_putString db_getString
db_putHex db_getHex shh_post shh_version shh_newIdentity shh_hasIdentity shh_newGroup shh_addToGroup shh_newFilter
shh_uninstallFilter shh_getFilterChanges shh_getMessages`.split(/\s+/);

function resolve(value: unknown): Record<string, unknown> {
  const ref = (value as { $ref?: string }).$ref;
  if (ref === undefined) return value as Record<string, unknown>;
  let target: unknown = document;
  for (const part of ref.slice(2).split("/")) target = (target as Record<string, unknown>)[part];
  return resolve(target);
}

describe("openrpc.json", () => {
  it("is a valid OpenRPC document", () => {
    const verdict = validateOpenRPCDocument(structuredClone(document));
    expect(verdict === true ? true : verdict.message).to.equal(true);
  });

  it("documents every supported method of the spec, the methods issue 36 adds, and nothing else", () => {
    expect(document.methods.map((method) => method.name).sort()).to.deep.equal([...supportedBySpec, ...addedByIssue36Signing, ...devHelperMethods, ...subscriptionMethods].sort());
  });

  it("lists every unsupported method of the spec, with a reason", () => {
    expect([...unsupportedMethods.keys()].sort()).to.deep.equal([...unsupportedBySpec].sort());
    for (const [method, reason] of unsupportedMethods) expect(reason.length, method).to.be.greaterThan(10);
  });

  it("declares errors on every method that takes parameters, InvalidParams among them", () => {
    for (const method of document.methods) {
      if (method.params.length === 0) continue;
      const codes = (method.errors ?? []).map((error) => resolve(error).code);
      expect(codes, method.name).to.include(-32602);
    }
  });

  it("has examples whose parameters and results validate against the schemas", () => {
    let checked = 0;
    for (const method of document.methods) {
      const entry = rpcMethodTable.get(method.name)!;
      expect(method.examples?.length ?? 0, `${method.name} has an example`).to.be.greaterThan(0);
      for (const pairing of (method.examples ?? []).map(resolve)) {
        const params = (pairing.params as unknown[]).map((param) => resolve(param).value);
        expect(params.length, `${method.name} ${String(pairing.name)}: parameter count`).to.be.within(entry.requiredParamCount, entry.paramNames.length);
        params.forEach((value, index) => {
          const validate = entry.paramValidators[index]!;
          expect(validate(value), `${method.name} ${String(pairing.name)} param ${index}: ${JSON.stringify(validate.errors)}`).to.equal(true);
        });
        const result = resolve(pairing.result).value;
        const validateResult = resultValidatorFor(method.name);
        expect(validateResult(result), `${method.name} ${String(pairing.name)} result: ${JSON.stringify(validateResult.errors)}`).to.equal(true);
        checked++;
      }
    }
    expect(checked).to.be.greaterThanOrEqual(document.methods.length);
  });

  it("has no pattern whose check of a long near-miss grows with the square of its length (a request could stall the node)", () => {
    const patterns = new Set<string>();
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (value !== null && typeof value === "object") {
        for (const [key, inner] of Object.entries(value)) {
          if (key === "pattern" && typeof inner === "string") patterns.add(inner);
          else collect(inner);
        }
      }
    };
    collect(document);
    expect(patterns.size).to.be.greaterThan(10);
    // Runs of each kind of character the patterns accept, alone and after a valid-looking start,
    // ended by a character none accepts. A linear check of 40,000 characters takes well under a
    // millisecond here; the quadratic one this guards against took 3.5 s.
    const hash = "a".repeat(64);
    const runLength = 40_000;
    const nearMisses = [" ", "\t", "a", "0", "1", "0x", "a "].flatMap((unit) => {
      const run = unit.repeat(runLength / unit.length);
      return [`${run}!`, `0x${run}!`, `${hash}${run}!`, ` ${hash}${run}!`, `${run}${hash}!`];
    });
    for (const pattern of patterns) {
      // AJV compiles patterns with the u flag.
      const expression = new RegExp(pattern, "u");
      const started = performance.now();
      for (const input of nearMisses) expression.test(input);
      expect(performance.now() - started, pattern).to.be.below(1_000);
    }
  });

  it("is what rpc.discover answers, byte for byte", async () => {
    const node = await startTestNode();
    try {
      const response = await fetch(node.url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"jsonrpc":"2.0","id":1,"method":"rpc.discover","params":[]}' });
      const text = await response.text();
      expect(text).to.equal(`{"jsonrpc":"2.0","id":1,"result":${openRpcDocumentJson}}`);
      expect(JSON.parse(openRpcDocumentJson)).to.deep.equal(document);
      const discovered = await node.client.rpcDiscover();
      expect(validateOpenRPCDocument(structuredClone(discovered))).to.equal(true);
    } finally {
      await node.stop();
    }
  });
});
