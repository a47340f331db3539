import { expect } from "chai";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { Block } from "../../../src/chain/block.js";
import { emptyListHash, unclesHashOf, type BlockHeader } from "../../../src/chain/header.js";
import { checkUncles, type UncleHeaderChecks } from "../../../src/consensus/uncles.js";
import { checkHeaderAgainstParent } from "../../../src/consensus/rules/parent.js";
import { checkUncleOwnHeader } from "../../../src/consensus/rules/header.js";
import { passed, refused } from "../../../src/consensus/verdict.js";
import { BlockTree, childBlock, childHeader, regtestConstants } from "../../helpers/consensusHeaders.js";

/**
 * genesis - m1 - ... - m9 (the block under check is number 10, on m9; its window is m3..m9), m7
 * including s5 as an uncle. Side blocks: s3 on m2, s4 on m3, s5 on m4, s9 on m8, n10 on m9, x6 on s5.
 */
function sampleTree() {
  const tree = new BlockTree();
  const main = tree.extend(tree.genesis, 6, "m");
  const at = (number: number) => (number === 0 ? tree.genesis : main[number - 1]!);
  const s5 = tree.add(childBlock(at(4).header, "s5"));
  main.push(tree.add(childBlock(at(6).header, "m7", [s5.header])));
  main.push(...tree.extend(main[6]!, 2, "m"));
  const side = (on: Block, tag: string) => tree.add(childBlock(on.header, tag)).header;
  return { tree, at, parent: at(9), s3: side(at(2), "s3"), s4: side(at(3), "s4"), s5: s5.header, s9: side(at(8), "s9"), n10: side(at(9), "n10"), x6: side(s5, "x6") };
}

const acceptAll: UncleHeaderChecks = { ownHeader: () => passed, againstParent: () => passed };
const limits = regtestConstants;

async function check(sample: ReturnType<typeof sampleTree>, uncles: BlockHeader[], checks = acceptAll, unclesHash = unclesHashOf(uncles)) {
  const block = new Block(childHeader(sample.parent.header, "b10", { unclesHash, uncleCount: uncles.length }), [], uncles);
  return checkUncles(block, await sample.tree.familyOf(sample.parent), checks, limits);
}

describe("consensus/uncles", () => {
  it("accepts siblings of ancestors from 1 to 6 generations back, each checked with its own header rules and against its own parent", async () => {
    const sample = sampleTree();
    const calls: string[] = [];
    const name = (header: BlockHeader) => new TextDecoder().decode(header.fields.extraData);
    const context = { constants: regtestConstants, now: 0n };
    const recording: UncleHeaderChecks = {
      ownHeader: (uncle) => (calls.push(`own ${name(uncle)}`), checkUncleOwnHeader(uncle.fields, context)),
      againstParent: (uncle, parent) => (calls.push(`${name(uncle)} on ${name(parent)}`), checkHeaderAgainstParent(uncle.fields, parent.fields, context)),
    };
    expect(await check(sample, [sample.s9, sample.s4], recording)).to.deep.equal(passed);
    expect(calls).to.deep.equal(["own s9", "s9 on m8", "own s4", "s4 on m3"]);
  });

  it("no uncles: passes with the empty list's hash, refused with another", async () => {
    const sample = sampleTree();
    expect(await check(sample, [], acceptAll, emptyListHash)).to.deep.equal(passed);
    expect(await check(sample, [], acceptAll, unclesHashOf([sample.s4]))).to.include({ ok: false, rule: "unclesHash" });
  });

  it("the uncles hash is keccak of the RLP list of the full headers, checked before anything else", async () => {
    const sample = sampleTree();
    // The list's payload is the two encodings as they are (not wrapped as byte strings): prefix 0xf9 and a 2-byte length.
    const payload = Buffer.concat([sample.s4.encoded, sample.s9.encoded]);
    const list = Buffer.concat([Buffer.from([0xf9, payload.length >> 8, payload.length & 0xff]), payload]);
    expect(Buffer.from(unclesHashOf([sample.s4, sample.s9])).toString("hex")).to.equal(Buffer.from(keccak_256(list)).toString("hex"));
    expect(await check(sample, [sample.s4, sample.s9], acceptAll, unclesHashOf([sample.s9, sample.s4]))).to.include({ rule: "unclesHash" });
    expect(await check(sample, [sample.n10], acceptAll, emptyListHash)).to.include({ rule: "unclesHash" });
  });

  it("at most 10 uncles: 10 siblings pass, 11 are refused", async () => {
    const sample = sampleTree();
    const siblings = Array.from({ length: 11 }, (_, index) => sample.tree.add(childBlock(sample.at(3).header, `s4-${index}`)).header);
    expect(await check(sample, siblings.slice(0, 10))).to.deep.equal(passed);
    expect(await check(sample, siblings)).to.deep.include({ ok: false, rule: "uncleListLimit", reason: "11 uncles, at most 10 allowed" });
  });

  it("an uncle failing its own header rules is refused, the inner rule named", async () => {
    const sample = sampleTree();
    const powFails: UncleHeaderChecks = { ...acceptAll, ownHeader: () => refused("proofOfWork", "hash above target") };
    const verdict = await check(sample, [sample.s4], powFails);
    expect(verdict).to.include({ ok: false, rule: "uncleHeader" });
    expect(verdict.ok ? "" : verdict.reason).to.match(/fails its header rules: proofOfWork: hash above target$/);
  });

  it("an uncle at the block's number (a sibling) is refused; one below (number 9) passes", async () => {
    const sample = sampleTree();
    expect(await check(sample, [sample.n10])).to.include({ rule: "uncleNotOlderThanBlock" });
    expect(await check(sample, [sample.s9])).to.deep.equal(passed);
  });

  it("an uncle whose parent is 7 generations below passes (number 4); 8 below is too old (number 3)", async () => {
    const sample = sampleTree();
    expect(await check(sample, [sample.s4])).to.deep.equal(passed);
    expect(await check(sample, [sample.s3])).to.include({ rule: "uncleTooOld" });
  });

  it("the same uncle twice is refused", async () => {
    const sample = sampleTree();
    expect(await check(sample, [sample.s4, sample.s9, sample.s4])).to.include({ rule: "duplicateUncle" });
  });

  it("an ancestor is refused as an uncle", async () => {
    const sample = sampleTree();
    expect(await check(sample, [sample.at(5).header])).to.include({ rule: "uncleIsAncestor" });
  });

  it("an uncle an ancestor already included is refused", async () => {
    const sample = sampleTree();
    expect(await check(sample, [sample.s5])).to.include({ rule: "uncleAlreadyUsed" });
  });

  it("an uncle whose parent is not an ancestor (a nephew on a side branch) is refused", async () => {
    const sample = sampleTree();
    expect(await check(sample, [sample.x6])).to.include({ rule: "uncleParentNotAncestor" });
  });

  it("an uncle failing the rules against its parent is refused, the inner rule named", async () => {
    const sample = sampleTree();
    const good = sample.tree.add(childBlock(sample.at(3).header, "good")).header;
    const computed = good.fields.difficulty;
    const wrong = sample.tree.add(new Block(childHeader(sample.at(3).header, "wrong", { difficulty: computed + 1n }), [])).header;
    const context = { constants: regtestConstants, now: 0n };
    const realParentRules: UncleHeaderChecks = { ...acceptAll, againstParent: (uncle, parent) => checkHeaderAgainstParent(uncle.fields, parent.fields, context) };
    expect(await check(sample, [good], realParentRules)).to.deep.equal(passed);
    const verdict = await check(sample, [wrong], realParentRules);
    expect(verdict).to.include({ ok: false, rule: "uncleAgainstParent" });
    expect(verdict.ok ? "" : verdict.reason).to.have.string(`fails the rules against its parent: difficulty: difficulty ${computed + 1n} is not the computed ${computed}`);
  });
});
