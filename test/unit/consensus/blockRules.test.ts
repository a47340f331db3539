import { expect } from "chai";
import { createLegacyTx } from "@ethereumjs/tx";
import { Address } from "@ethereumjs/util";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { Block } from "../../../src/chain/block.js";
import type { HeaderFields } from "../../../src/chain/header.js";
import { indexedTrieRoot } from "../../../src/chain/indexedTrie.js";
import { decodeRawTransaction, type ChainTransaction } from "../../../src/chain/transactions.js";
import { consensusConstantsFor } from "../../../src/consensus/constants.js";
import { checkUncleOwnHeader } from "../../../src/consensus/rules/header.js";
import { checkBlockBeforeExecution, checkTransactionGasPrices, checkTransactionsRoot, type DelegatedBlockChecks } from "../../../src/consensus/rules/block.js";
import { passed, refused, type RuleVerdict } from "../../../src/consensus/verdict.js";
import { createExecutionRules } from "../../../src/execution/rules.js";
import { childHeader, makeHeader } from "../../helpers/consensusHeaders.js";

const common = createExecutionRules(31n);
const senderKey = keccak_256(new TextEncoder().encode("cow"));
const context = { constants: consensusConstantsFor({ networkId: 31 }), now: 2_000n };
const parent = makeHeader({ number: 9n, timestamp: 1_000n, minimumGasPrice: 1_000n, gasLimit: 3_000_000n });

function transaction(nonce: bigint, gasPrice: bigint): ChainTransaction {
  const unsigned = createLegacyTx({ nonce, gasPrice, gasLimit: 21_000n, to: new Address(new Uint8Array(20).fill(7)) }, { common });
  return decodeRawTransaction(unsigned.sign(senderKey).serialize(), common);
}

const transactions = [transaction(0n, 1_000n), transaction(1n, 5_000n)];

/** A block valid on `parent` (testnet profile) with `fields` changed; its transactions root matches `transactions`. */
function block(fields: Partial<HeaderFields> = {}, included = transactions): Block {
  const transactionsRoot = indexedTrieRoot(included.map((included) => included.raw));
  return new Block(childHeader(parent, "", { transactionsRoot, ...fields }, context.constants), included);
}

/** Delegated checks that pass (or answer `verdicts`) and record the order they ran in. */
function delegated(calls: string[], verdicts: Partial<Record<keyof DelegatedBlockChecks, RuleVerdict>> = {}): DelegatedBlockChecks {
  return {
    uncles: () => (calls.push("uncles"), verdicts.uncles ?? passed),
    proofOfWork: () => (calls.push("proofOfWork"), verdicts.proofOfWork ?? passed),
  };
}

const ruleOf = (candidate: Block, verdicts: Partial<Record<keyof DelegatedBlockChecks, RuleVerdict>> = {}) => {
  const verdict = checkBlockBeforeExecution(candidate, parent.fields, context, delegated([], verdicts));
  return verdict.ok ? "passed" : verdict.rule;
};

describe("consensus/rules/block", () => {
  it("a valid block passes, the uncles and proof-of-work checks each run once in their place", () => {
    const calls: string[] = [];
    expect(checkBlockBeforeExecution(block(), parent.fields, context, delegated(calls))).to.deep.equal(passed);
    expect(calls).to.deep.equal(["uncles", "proofOfWork"]);
  });

  it("every transaction pays at least the block's minimum gas price: 1000 passes, 999 does not", () => {
    expect(checkTransactionGasPrices([transaction(0n, 1_000n)], 1_000n, 100n)).to.deep.equal(passed);
    const underpaid = transaction(1n, 999n);
    expect(checkTransactionGasPrices([transaction(0n, 1_000n), underpaid], 1_000n, 100n)).to.deep.include({ ok: false, rule: "transactionMinimumGasPrice" });
    expect(ruleOf(block({}, [underpaid]))).to.equal("transactionMinimumGasPrice");
  });

  it("at most 100 × the minimum gas price (RSKIP252): 100,000 passes over 1000, 100,001 does not; no cap over a minimum of 0", () => {
    expect(checkTransactionGasPrices([transaction(0n, 100_000n)], 1_000n, 100n)).to.deep.equal(passed);
    expect(checkTransactionGasPrices([transaction(0n, 100_001n)], 1_000n, 100n)).to.include({ ok: false, rule: "transactionGasPriceCap" });
    expect(checkTransactionGasPrices([transaction(0n, 10n ** 18n)], 0n, 100n)).to.deep.equal(passed);
    // The minimum rule runs over every transaction first, as the reference's two rules do.
    expect(checkTransactionGasPrices([transaction(0n, 100_001n), transaction(1n, 999n)], 1_000n, 100n)).to.include({ rule: "transactionMinimumGasPrice" });
  });

  it("the transactions root matches the transactions in their order", () => {
    expect(checkTransactionsRoot(block())).to.deep.equal(passed);
    const reordered = new Block(block().header, [...transactions].reverse());
    expect(checkTransactionsRoot(reordered)).to.include({ ok: false, rule: "transactionsRoot" });
  });

  it("timestamp at most 540 s past the local clock on testnet: now + 540 passes, now + 541 does not", () => {
    // 1,540 s after the parent: the difficulty falls to the minimum, so the child helper computes it.
    expect(ruleOf(block({ timestamp: context.now + 540n }))).to.equal("passed");
    expect(ruleOf(block({ timestamp: context.now + 541n }))).to.equal("futureTimestamp");
  });

  it("gas limit at least 3,000,000: 3,000,000 passes, 2,999,999 does not", () => {
    expect(ruleOf(block({ gasLimit: 3_000_000n }))).to.equal("passed");
    expect(ruleOf(block({ gasLimit: 2_999_999n }))).to.equal("minimumGasLimit");
  });

  it("extra data of 32 bytes passes, 33 do not", () => {
    expect(ruleOf(block({ extraData: new Uint8Array(32) }))).to.equal("passed");
    expect(ruleOf(block({ extraData: new Uint8Array(33) }))).to.equal("extraData");
  });

  it("gas used up to the gas limit passes, one more does not", () => {
    expect(ruleOf(block({ gasUsed: 3_000_000n }))).to.equal("passed");
    expect(ruleOf(block({ gasUsed: 3_000_001n }))).to.equal("gasUsed");
  });

  it("reports the first broken rule in the reference's order; delegated checks after it do not run", () => {
    const broken = { minimumGasPrice: 5_000n, timestamp: 9_000n, gasLimit: 2_999_999n, extraData: new Uint8Array(33), gasUsed: 4_000_000n, transactionsRoot: new Uint8Array(32) };
    const underpaid = [transaction(0n, 999n)];
    const unclesRefused = { uncles: refused("uncleIsAncestor", "uncle 0x.. is an ancestor of the block") };
    const powRefused = { proofOfWork: refused("proofOfWork", "hash above target") };
    const calls: string[] = [];
    expect(checkBlockBeforeExecution(block(broken, underpaid), parent.fields, context, delegated(calls))).to.include({ rule: "minimumGasPrice" });
    expect(calls).to.deep.equal([]);
    const { minimumGasPrice: _first, ...afterParentRules } = broken;
    expect(ruleOf(block(afterParentRules, underpaid), unclesRefused)).to.equal("transactionMinimumGasPrice");
    expect(ruleOf(block(afterParentRules), unclesRefused)).to.equal("uncleIsAncestor");
    expect(ruleOf(block(afterParentRules), powRefused)).to.equal("transactionsRoot");
    const { transactionsRoot: _second, ...afterRoot } = afterParentRules;
    expect(ruleOf(block(afterRoot), powRefused)).to.equal("proofOfWork");
    expect(ruleOf(block(afterRoot))).to.equal("futureTimestamp");
    const { timestamp: _third, ...afterTimestamp } = afterRoot;
    expect(ruleOf(block(afterTimestamp))).to.equal("minimumGasLimit");
    expect(ruleOf(block({ extraData: broken.extraData, gasUsed: broken.gasUsed }))).to.equal("extraData");
  });
});

describe("consensus/rules/header: an uncle's own rules", () => {
  it("refuses a timestamp too far past the clock and gas used above the gas limit, the proof of work left to the caller", () => {
    expect(checkUncleOwnHeader(childHeader(parent, "", { timestamp: context.now + 540n }, context.constants).fields, context)).to.deep.equal(passed);
    expect(checkUncleOwnHeader(childHeader(parent, "", { timestamp: context.now + 541n }, context.constants).fields, context)).to.include({ rule: "futureTimestamp" });
    expect(checkUncleOwnHeader(childHeader(parent, "", { gasUsed: 3_000_001n }, context.constants).fields, context)).to.include({ rule: "gasUsed" });
    // Its gas limit and extra data are not its own header rules in the reference (only the block's).
    expect(checkUncleOwnHeader(childHeader(parent, "", { gasLimit: 1n, extraData: new Uint8Array(40) }, context.constants).fields, context)).to.deep.equal(passed);
  });
});
