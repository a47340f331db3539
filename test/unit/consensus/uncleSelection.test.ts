import { expect } from "chai";
import type { Block } from "../../../src/chain/block.js";
import type { BlockHeader } from "../../../src/chain/header.js";
import { collectAncestors } from "../../../src/consensus/familyView.js";
import { selectUncles } from "../../../src/consensus/uncleSelection.js";
import { checkUncles } from "../../../src/consensus/uncles.js";
import { passed } from "../../../src/consensus/verdict.js";
import { BlockTree, childBlock, regtestConstants } from "../../helpers/consensusHeaders.js";

const tagOf = (header: BlockHeader) => new TextDecoder().decode(header.fields.extraData);
const limits = regtestConstants;

/** genesis - m1 - ... - m9; a new block 10 goes on m9 (its window is m3..m9). */
function mainLine() {
  const tree = new BlockTree();
  const main = tree.extend(tree.genesis, 9, "m");
  const at = (number: number): Block => (number === 0 ? tree.genesis : main[number - 1]!);
  const side = (on: Block, tag: string) => tree.add(childBlock(on.header, tag));
  return { tree, at, side };
}

describe("consensus/uncleSelection", () => {
  it("chooses the stored siblings of ancestors 1 to 6 generations back, oldest first, and the block they make passes the uncle rules", async () => {
    const { tree, at, side } = mainLine();
    side(at(8), "s9");
    side(at(3), "s4");
    side(at(5), "s6");
    side(at(2), "s3"); // a sibling of the oldest ancestor in the window: its parent is outside it
    side(at(9), "n10"); // at the new block's own height
    side(side(at(4), "s5"), "x6"); // on a side block: its parent is not an ancestor
    const family = await tree.familyOf(at(9));
    const chosen = selectUncles(10n, family, limits);
    expect(chosen.map(tagOf)).to.deep.equal(["s4", "s5", "s6", "s9"]);
    const block = childBlock(at(9).header, "b10", chosen);
    expect(checkUncles(block, family, { ownHeader: () => passed, againstParent: () => passed }, limits)).to.deep.equal(passed);
  });

  it("leaves out the uncles an ancestor in the window already included", async () => {
    const tree = new BlockTree();
    const main = tree.extend(tree.genesis, 5, "m");
    const s4 = tree.add(childBlock(main[2]!.header, "s4"));
    tree.add(childBlock(main[3]!.header, "s5"));
    const m6 = tree.add(childBlock(main[4]!.header, "m6", [s4.header]));
    const chosen = selectUncles(7n, await tree.familyOf(m6), limits);
    expect(chosen.map(tagOf)).to.deep.equal(["s5"]);
  });

  it("at most 10, the oldest first and then by hash in byte order, not in the order the store holds them", async () => {
    const { tree, at, side } = mainLine();
    const candidates = [...Array.from({ length: 6 }, (_, index) => side(at(7), `s8-${index}`)), ...Array.from({ length: 6 }, (_, index) => side(at(4), `s5-${index}`))];
    const chosen = selectUncles(10n, await tree.familyOf(at(9)), limits);
    const byHash = (blocks: Block[]) => blocks.map((block) => block.header).sort((left, right) => Buffer.compare(left.hash, right.hash));
    const expected = [...byHash(candidates.slice(6)), ...byHash(candidates.slice(0, 6)).slice(0, 4)];
    expect(chosen.map(tagOf)).to.deep.equal(expected.map(tagOf));
  });

  it("near genesis the window stops at genesis, which has no siblings to offer", async () => {
    const tree = new BlockTree();
    const [m1, m2] = tree.extend(tree.genesis, 2, "m");
    tree.add(childBlock(tree.genesis.header, "s1"));
    tree.add(childBlock(m1!.header, "s2"));
    expect(selectUncles(3n, await tree.familyOf(m2!), limits).map(tagOf)).to.deep.equal(["s1", "s2"]);
  });
});

describe("consensus/familyView collectAncestors", () => {
  it("reads the parent and its ancestors newest first, down to number − 7, or to genesis, or to a block the store lacks", async () => {
    const { tree, at } = mainLine();
    const read = async (hash: Uint8Array) => tree.get(hash);
    const numbers = (members: { header: BlockHeader }[]) => members.map((member) => Number(member.header.number));
    expect(numbers(await collectAncestors(10n, at(9).hash, 7, read))).to.deep.equal([9, 8, 7, 6, 5, 4, 3]);
    expect(numbers(await collectAncestors(4n, at(3).hash, 7, read))).to.deep.equal([3, 2, 1, 0]);
    const withoutBlock6 = async (hash: Uint8Array) => (Buffer.compare(hash, at(6).hash) === 0 ? undefined : tree.get(hash));
    expect(numbers(await collectAncestors(10n, at(9).hash, 7, withoutBlock6))).to.deep.equal([9, 8, 7]);
  });
});
