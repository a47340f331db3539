// The one import path: blocks mined on one node imported into another, the outcomes the reference
// names, a refusal for every checked field and proof-of-work rule with nothing stored changing,
// and the switch to a heavier branch.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { Block, MalformedBlockError } from "../../../src/chain/block.js";
import { BlockHeader, unclesHashOf, type HeaderFields } from "../../../src/chain/header.js";
import { bytesToHex } from "../../../src/common/hex.js";
import { compressCoinbase, encodeCompressedCoinbase, lastIndexOfBytes, mergedMiningTag } from "../../../src/consensus/compressedCoinbase.js";
import type { ImportOutcome } from "../../../src/consensus/importResult.js";
import { sha256d } from "../../../src/consensus/parentChain.js";
import { combineMerkleNodes } from "../../../src/consensus/parentMerkleBranch.js";
import { sha256MidstateAfter } from "../../../src/consensus/sha256Midstate.js";
import { ChainWriteQueue } from "../../../src/chain/writeQueue.js";
import { BlockImporter, checkProofOfWork, mergedMiningProofOf, recordBodyMatchesHeader, recordProofOfWorkCheck } from "../../../src/consensus/blockImporter.js";
import { checkMergedMiningProof } from "../../../src/consensus/mergedMiningProof.js";
import { consensusConstantsFor } from "../../../src/consensus/constants.js";
import { BlockBuilder } from "../../../src/execution/blockBuilder.js";
import { proveBlock } from "../../../src/mining/blockProof.js";
import { Common, Hardfork, Mainnet } from "@ethereumjs/common";
import { Wallet, keccak256, toUtf8Bytes } from "ethers";
import { decodeRawTransaction } from "../../../src/chain/transactions.js";
import { hexToBytes } from "../../../src/common/hex.js";
import { createLogger } from "../../../src/common/logger.js";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { importChain } from "../../../src/node/chainTransfer.js";
import type { ChainServices } from "../../../src/node/index.js";
import { asReceived, mineBlocks, openTestChain, signedTransfer } from "../../helpers/chainPair.js";
import { commitmentTo, createCoinbaseTransaction, solveParentHeader, unsolvedParentHeader } from "../../helpers/parentChainProofs.js";

const recipient = "0x00000000000000000000000000000000000000aa";
const payToPubkey = Uint8Array.from([0x21, 0x03, ...new Uint8Array(32).fill(5), 0xac]);

describe("consensus/blockImporter", function () {
  this.timeout(30_000);
  let source: ChainServices;
  let target: ChainServices;

  beforeEach(async () => {
    source = await openTestChain();
    target = await openTestChain();
  });

  afterEach(async () => {
    await source.close();
    await target.close();
  });

  /** What the target stores that an import could change: head, its total difficulty, the number of stored entries by prefix. */
  async function storedSummary(services: ChainServices): Promise<string> {
    const head = services.chain.head;
    return JSON.stringify({ head: bytesToHex(head.hash), tip: bytesToHex(services.chain.tip.hash), td: String(await services.chain.getTotalDifficulty(head.hash)), pool: services.pool.size });
  }

  function expectStatus(outcome: ImportOutcome, status: ImportOutcome["status"], rule?: string): void {
    expect(outcome.status, JSON.stringify(outcome.status === "INVALID_BLOCK" ? { rule: outcome.rule, reason: outcome.reason } : outcome.status)).to.equal(status);
    if (rule !== undefined && outcome.status === "INVALID_BLOCK") expect(outcome.rule, outcome.reason).to.equal(rule);
  }

  it("imports another node's blocks in order: the same head, state and balances; EXIST and NO_PARENT change nothing", async () => {
    let nonce = 0;
    const blocks = await mineBlocks(source, 6, async (index) => Promise.all(Array.from({ length: index % 3 }, () => signedTransfer(source, "cow", nonce++, recipient))));
    // The fifth block first: its parent is unknown.
    expectStatus(await target.importer.importBlock(asReceived(blocks[4]!, target), "file"), "NO_PARENT");
    for (const block of blocks) expectStatus(await target.importer.importBlock(asReceived(block, target), "file"), "IMPORTED_BEST");
    await target.chain.whenTipWritten();
    expect(bytesToHex(target.chain.head.hash)).to.equal(bytesToHex(source.chain.head.hash));
    expect(bytesToHex(target.chain.head.header.fields.stateRoot)).to.equal(bytesToHex(source.chain.head.header.fields.stateRoot));
    for (const block of blocks) {
      const [stored, receipts] = [await target.chain.getBlockByNumber(block.number), await target.chain.getReceipts(block.hash)];
      expect(bytesToHex(stored!.hash)).to.equal(bytesToHex(block.hash));
      expect(receipts).to.deep.equal(await source.chain.getReceipts(block.hash));
    }
    const before = await storedSummary(target);
    expectStatus(await target.importer.importBlock(asReceived(blocks[2]!, target), "file"), "EXIST");
    expect(await storedSummary(target)).to.equal(before);
  });

  describe("refuses a block tampered in a checked field, and nothing stored changes", () => {
    /** The source's next block with a transfer, then `change` applied to its header and the proof of work made again. */
    async function tamperedBlock(change: (fields: HeaderFields) => Partial<HeaderFields>, transactions?: (block: Block) => Block["transactions"]): Promise<Block> {
      const [honest] = await mineBlocks(source, 1, async () => [await signedTransfer(source, "cow", 0, recipient)]);
      const fields = { ...honest!.header.fields, mergedMiningHeader: new Uint8Array(), mergedMiningMerkleProof: new Uint8Array(), mergedMiningCoinbaseTransaction: new Uint8Array() };
      const unproven = new Block(new BlockHeader({ ...fields, ...change(fields) }), transactions?.(honest!) ?? honest!.transactions);
      return proveBlock(unproven);
    }

    const cases: [string, string, (fields: HeaderFields) => Partial<HeaderFields>][] = [
      ["state root", "stateRoot", () => ({ stateRoot: new Uint8Array(32).fill(1) })],
      ["receipts root", "receiptsRoot", () => ({ receiptsRoot: new Uint8Array(32).fill(2) })],
      ["logs bloom", "logsBloom", () => ({ logsBloom: new Uint8Array(256).fill(3) })],
      ["gas used", "gasUsed", (fields) => ({ gasUsed: fields.gasUsed + 1n })],
      ["fees paid", "paidFees", (fields) => ({ paidFees: fields.paidFees + 1n })],
      ["transactions root", "transactionsRoot", () => ({ transactionsRoot: new Uint8Array(32).fill(4) })],
      ["difficulty", "difficulty", (fields) => ({ difficulty: fields.difficulty + 1n })],
      ["number", "parentNumber", (fields) => ({ number: fields.number + 1n })],
      ["gas limit", "parentGasLimit", (fields) => ({ gasLimit: fields.gasLimit * 2n })],
      ["minimum gas price", "minimumGasPrice", (fields) => ({ minimumGasPrice: fields.minimumGasPrice + 1_000_000n })],
      ["extra data", "extraData", () => ({ extraData: new Uint8Array(33) })],
      ["uncles hash", "unclesHash", () => ({ unclesHash: new Uint8Array(32).fill(5) })],
      ["gas used above the gas limit", "gasUsed", (fields) => ({ gasUsed: fields.gasLimit + 1n })],
    ];
    for (const [name, rule, change] of cases) {
      it(name, async () => {
        const block = await tamperedBlock(change);
        const before = await storedSummary(target);
        const outcome = await target.importer.importBlock(asReceived(block, target), "peer");
        expectStatus(outcome, "INVALID_BLOCK", rule);
        expect(await storedSummary(target)).to.equal(before);
        expect(target.chain.hasBlock(block.hash)).to.equal(false);
      });
    }

    it("a transaction the parent's state cannot run (a nonce already used)", async () => {
      const block = await tamperedBlock(() => ({}));
      // The same transfer again in the next block: its nonce is spent.
      expectStatus(await target.importer.importBlock(asReceived(block, target), "peer"), "IMPORTED_BEST");
      const replay = proveBlock(new Block(new BlockHeader({ ...block.header.fields, parentHash: block.hash, number: block.number + 1n, mergedMiningHeader: new Uint8Array(), mergedMiningMerkleProof: new Uint8Array(), mergedMiningCoinbaseTransaction: new Uint8Array() }), block.transactions));
      const outcome = await target.importer.importBlock(asReceived(replay, target), "peer");
      expectStatus(outcome, "INVALID_BLOCK", "transactionExecution");
      expect(outcome.status === "INVALID_BLOCK" && outcome.reason).to.match(/nonce/i);
      expect(target.chain.head.number).to.equal(block.number);
    });

    it("a block that is not proven (no merged-mining fields)", async () => {
      const [honest] = await mineBlocks(source, 1);
      const bare = new Block(new BlockHeader({ ...honest!.header.fields, mergedMiningHeader: new Uint8Array(), mergedMiningMerkleProof: new Uint8Array(), mergedMiningCoinbaseTransaction: new Uint8Array() }), []);
      expectStatus(await target.importer.importBlock(bare, "peer"), "INVALID_BLOCK", "coinbaseStateMissing");
      expect(target.chain.head.number).to.equal(0n);
    });
  });

  describe("refuses every break of the proof-of-work rule, and nothing stored changes", () => {
    /** The source's next block, with merged-mining fields made from `coinbase` by `shape`. */
    async function withProof(shape: (hashForMergedMining: Uint8Array, difficulty: bigint) => Pick<HeaderFields, "mergedMiningHeader" | "mergedMiningMerkleProof" | "mergedMiningCoinbaseTransaction">): Promise<Block> {
      const [honest] = await mineBlocks(source, 1);
      const base = new BlockHeader({ ...honest!.header.fields, mergedMiningHeader: new Uint8Array(), mergedMiningMerkleProof: new Uint8Array(), mergedMiningCoinbaseTransaction: new Uint8Array() });
      return new Block(base.withMergedMining(shape(base.hashForMergedMining, base.fields.difficulty)), []);
    }

    function coinbaseCommitting(hash: Uint8Array, options: { scriptSigLength?: number; suffix?: Uint8Array } = {}): Uint8Array {
      const script = Uint8Array.from([...commitmentTo(hash), ...(options.suffix ?? [])]);
      const scriptSig = Uint8Array.from({ length: options.scriptSigLength ?? 8 }, (_, index) => index + 1);
      return createCoinbaseTransaction({ scriptSig, outputScripts: [payToPubkey, script] }).toBuffer();
    }

    const proofOf = (coinbase: Uint8Array, difficulty: bigint, merkleProof = new Uint8Array(0), compressed = compressCoinbase(coinbase)) => ({
      mergedMiningHeader: solveParentHeader(sha256d(coinbase), difficulty),
      mergedMiningMerkleProof: merkleProof,
      mergedMiningCoinbaseTransaction: compressed,
    });
    /** A script-sig length that puts the tag at a 64-byte boundary of the coinbase. */
    const tagAtBoundary = (hash: Uint8Array) => {
      let scriptSigLength = 0;
      while (lastIndexOfBytes(coinbaseCommitting(hash, { scriptSigLength }), mergedMiningTag) % 64 !== 0) scriptSigLength++;
      return scriptSigLength;
    };

    const cases: [string, string, Parameters<typeof withProof>[0]][] = [
      ["the tag missing (the coinbase commits to another hash)", "tagMissing", (_, difficulty) => proofOf(coinbaseCommitting(new Uint8Array(32).fill(9)), difficulty)],
      [
        "the tag at byte 64 or more of the coinbase's tail",
        "tagNotInFirstBlock",
        (hash, difficulty) => {
          const late = coinbaseCommitting(hash, { scriptSigLength: tagAtBoundary(hash) });
          const cut = lastIndexOfBytes(late, mergedMiningTag) - 64;
          return proofOf(late, difficulty, undefined, encodeCompressedCoinbase({ byteCountBefore: BigInt(cut), midstate: sha256MidstateAfter(late.subarray(0, cut)), tail: late.subarray(cut) }));
        },
      ],
      [
        "a second tag after the block's",
        "tagNotLast",
        (hash, difficulty) => {
          const secondTag = Uint8Array.from([...mergedMiningTag, ...new Uint8Array(32).fill(7)]);
          return proofOf(coinbaseCommitting(hash, { scriptSigLength: tagAtBoundary(hash), suffix: secondTag }), difficulty);
        },
      ],
      ["more than 128 bytes after the hash", "tooManyBytesAfterHash", (hash, difficulty) => proofOf(coinbaseCommitting(hash, { suffix: new Uint8Array(125).fill(0x61) }), difficulty)],
      ["a coinbase of 64 bytes or less", "coinbaseTooShort", (hash, difficulty) => proofOf(Uint8Array.from([...new Uint8Array(23).fill(1), ...commitmentTo(hash)]), difficulty)],
      ["a merkle proof not a multiple of 32 bytes", "merkleProofNotWholeHashes", (hash, difficulty) => proofOf(coinbaseCommitting(hash), difficulty, new Uint8Array(33))],
      ["a merkle proof over 960 bytes", "merkleProofTooLong", (hash, difficulty) => proofOf(coinbaseCommitting(hash), difficulty, new Uint8Array(992))],
      [
        "merkle nodes that parse as a 64-byte transaction",
        "merkleNodesFormTransaction",
        (hash, difficulty) => {
          let scriptSigLength = 1;
          while (sha256d(coinbaseCommitting(hash, { scriptSigLength })).slice().reverse()[4] !== 1) scriptSigLength++;
          const shaped = coinbaseCommitting(hash, { scriptSigLength });
          const secondHalf = Uint8Array.from([...new Uint8Array(5), 0, 0, 0, 0, 2, 0x51, 0x51, 0xff, 0xff, 0xff, 0xff, 1, 0xe8, 3, 0, 0, 0, 0, 0, 0, 2, 0x51, 0x51, 0, 0, 0, 0]);
          const sibling = secondHalf.slice().reverse();
          return { ...proofOf(shaped, difficulty, sibling), mergedMiningHeader: solveParentHeader(combineMerkleNodes(sha256d(shaped), sibling), difficulty) };
        },
      ],
      ["a parent header whose hash is above the target", "parentHashAboveTarget", (hash, difficulty) => ({ ...proofOf(coinbaseCommitting(hash), difficulty), mergedMiningHeader: unsolvedParentHeader(sha256d(coinbaseCommitting(hash)), difficulty) })],
    ];
    for (const [name, rule, shape] of cases) {
      it(name, async () => {
        const block = await withProof(shape);
        const before = await storedSummary(target);
        expectStatus(await target.importer.importBlock(asReceived(block, target), "peer"), "INVALID_BLOCK", rule);
        expect(await storedSummary(target)).to.equal(before);
        expect(target.chain.hasBlock(block.hash)).to.equal(false);
      });
    }

    it("and takes the same block with a proof a pool would make (a coinbase of its own, the tag in an output)", async () => {
      const block = await withProof((hash, difficulty) => proofOf(coinbaseCommitting(hash), difficulty));
      expectStatus(await target.importer.importBlock(asReceived(block, target), "mergedMiner"), "IMPORTED_BEST");
    });
  });

  it("takes typed transactions in a block only where --typed-transactions is on, as a send", async () => {
    const typedSource = await openTestChain({ typedTransactions: true });
    const typedTarget = await openTestChain({ typedTransactions: true });
    try {
      const wallet = new Wallet(keccak256(toUtf8Bytes("cow")));
      const raw = await wallet.signTransaction({ type: 2, chainId: 33n, nonce: 0, gasLimit: 21_000n, maxFeePerGas: 10n, maxPriorityFeePerGas: 1n, to: recipient, value: 3n });
      const [block] = await mineBlocks(typedSource, 1, async () => [decodeRawTransaction(hexToBytes(raw), typedSource.common, true)]);
      expect(block!.transactions.length).to.equal(1);
      expect(() => Block.decode(block!.encode(), target.common)).to.throw(MalformedBlockError, /transaction 0: typed transactions/);
      const received = asReceived(block!, typedTarget);
      expect(received.size).to.equal(block!.encode().length);
      expectStatus(await typedTarget.importer.importBlock(received, "peer"), "IMPORTED_BEST");
      expect(bytesToHex(typedTarget.chain.tip.header.fields.stateRoot)).to.equal(bytesToHex(block!.header.fields.stateRoot));
    } finally {
      await typedSource.close();
      await typedTarget.close();
    }
  });

  describe("--verify-imports-with-reference-engine", () => {
    /** An importer on the target's chain whose second execution runs on `referenceRules`' engine. */
    function importerCheckedBy(referenceRules: Common): BlockImporter {
      const { chain, state, common } = target;
      return new BlockImporter(chain, state, {
        constants: consensusConstantsFor({ networkId: 33 }),
        now: () => BigInt(Math.floor(Date.now() / 1000)),
        writeQueue: new ChainWriteQueue(),
        createBuilder: (canonicalHash) => BlockBuilder.create(common, state.at(chain.tip.header.fields.stateRoot), canonicalHash),
        createReferenceBuilder: (canonicalHash) => BlockBuilder.create(referenceRules, state.at(chain.tip.header.fields.stateRoot), canonicalHash, { plainTransfers: false, leanCalls: false }),
      });
    }

    it("imports blocks both executions agree on", async () => {
      let nonce = 0;
      const blocks = await mineBlocks(source, 4, async (index) => Promise.all(Array.from({ length: index }, () => signedTransfer(source, "cow", nonce++, recipient))));
      const importer = importerCheckedBy(target.common);
      for (const block of blocks) expectStatus(await importer.importBlock(asReceived(block, target), "file"), "IMPORTED_BEST");
      expect(bytesToHex(target.chain.tip.hash)).to.equal(bytesToHex(blocks.at(-1)!.hash));
    });

    it("refuses a block the two engines run differently, and nothing stored changes", async () => {
      // A creation whose init code reads a cold account's balance: 2,600 gas under Berlin's rules, 700 under Istanbul's.
      const initCode = `0x73${"ab".repeat(20)}315000`;
      const raw = await new Wallet(keccak256(toUtf8Bytes("cow"))).signTransaction({ type: 0, chainId: 33n, nonce: 0, gasLimit: 100_000n, gasPrice: 0n, data: initCode });
      const blocks = await mineBlocks(source, 1, async () => [decodeRawTransaction(hexToBytes(raw), source.common)]);
      const istanbul = new Common({ chain: { ...Mainnet, chainId: 33 }, hardfork: Hardfork.Istanbul });
      const before = await storedSummary(target);
      const outcome = await importerCheckedBy(istanbul).importBlock(asReceived(blocks[0]!, target), "file");
      expectStatus(outcome, "INVALID_BLOCK", "referenceEngineDisagrees");
      expect(await storedSummary(target)).to.equal(before);
    });
  });

  describe("branches", () => {
    it("keeps a lighter branch as side blocks, and switches to it once it is heavier, in one step, with the pool following", async () => {
      // Both nodes share genesis; the target mines two blocks with cow1's transfer, the source three with cow's.
      const targetOwn = await mineBlocks(target, 2, async (index) => (index === 0 ? [await signedTransfer(target, "cow1", 0, recipient, 7n)] : []));
      const sourceBlocks = await mineBlocks(source, 3, async (index) => (index === 1 ? [await signedTransfer(source, "cow", 0, recipient, 9n)] : []));
      await target.chain.whenTipWritten();
      const removedSeen: bigint[] = [];
      const addedSeen: bigint[] = [];
      let reorganisations = 0;
      target.chain.subscribeHead(
        {
          blocksAdded: (blocks) => addedSeen.push(...blocks.map(({ block }) => block.number)),
          blocksRemoved: (blocks) => removedSeen.push(...blocks.map(({ block }) => block.number)),
          reorganised: () => {
            reorganisations++;
          },
        },
        (error) => {
          throw error;
        },
      );
      expectStatus(await target.importer.importBlock(asReceived(sourceBlocks[0]!, target), "peer"), "IMPORTED_NOT_BEST");
      // Equal weight, equal fees (none): the head stays (the reference's tie rule).
      expectStatus(await target.importer.importBlock(asReceived(sourceBlocks[1]!, target), "peer"), "IMPORTED_NOT_BEST");
      expect(bytesToHex(target.chain.head.hash)).to.equal(bytesToHex(targetOwn[1]!.hash));
      expect(addedSeen).to.deep.equal([]);
      expectStatus(await target.importer.importBlock(asReceived(sourceBlocks[2]!, target), "peer"), "IMPORTED_BEST");

      expect(bytesToHex(target.chain.head.hash)).to.equal(bytesToHex(sourceBlocks[2]!.hash));
      expect(removedSeen).to.deep.equal([2n, 1n]);
      expect(addedSeen).to.deep.equal([1n, 2n, 3n]);
      expect(reorganisations).to.equal(1);
      for (const block of sourceBlocks) expect(bytesToHex((await target.chain.getCanonicalHash(block.number))!)).to.equal(bytesToHex(block.hash));
      // The old branch's blocks are kept, as side blocks at their heights.
      expect(target.chain.hasBlock(targetOwn[0]!.hash)).to.equal(true);
      expect((await target.chain.headersAt(1n)).map((header) => bytesToHex(header.hash)).sort()).to.deep.equal([sourceBlocks[0]!, targetOwn[0]!].map((block) => bytesToHex(block.hash)).sort());
      // cow1's transfer is back in the pool; cow's, mined on the new branch, has a location in it.
      const returned = targetOwn[0]!.transactions[0]!;
      expect(target.pool.get(returned.hash)).to.not.equal(undefined);
      expect(await target.chain.getTransactionLocation(returned.hash)).to.equal(undefined);
      const mined = sourceBlocks[1]!.transactions[0]!;
      expect(bytesToHex((await target.chain.getTransactionLocation(mined.hash))!.blockHash)).to.equal(bytesToHex(sourceBlocks[1]!.hash));
      // The next mined block builds on the new head and takes the returned transaction.
      const next = await target.miner.mineBlock(target.pool.pending());
      expect(next.number).to.equal(4n);
      expect(next.transactions.map((transaction) => bytesToHex(transaction.hash))).to.deep.equal([bytesToHex(returned.hash)]);
      // It includes the old branch's first block as an uncle (the second's parent is not an ancestor).
      expect(next.uncles.map((uncle) => bytesToHex(uncle.hash))).to.deep.equal([bytesToHex(targetOwn[0]!.hash)]);
      await target.chain.whenTipWritten();
      const parentWeight = (await target.chain.getTotalDifficulty(sourceBlocks[2]!.hash))!;
      expect(await target.chain.getTotalDifficulty(next.hash)).to.equal(parentWeight + next.header.fields.difficulty + targetOwn[0]!.header.fields.difficulty);
      // The source, which never saw the uncle, takes the block: the uncle's parent is its ancestor.
      expectStatus(await source.importer.importBlock(asReceived(next, source), "peer"), "IMPORTED_BEST");
      // A block that includes the same uncle again, one generation on, is refused.
      const again = await target.miner.mineBlock([]);
      expect(again.uncles).to.deep.equal([]);
    });

    it("refuses uncles that are ancestors, too old, included twice, already used or whose parent is not an ancestor", async () => {
      const sourceBlocks = await mineBlocks(source, 9);
      for (const block of sourceBlocks) expectStatus(await target.importer.importBlock(asReceived(block, target), "peer"), "IMPORTED_BEST");
      // A third node: one block of its own on genesis, then source's first four blocks and two of its own on them.
      const third = await openTestChain();
      let sideBlocks: Block[];
      try {
        const [early] = await mineBlocks(third, 1, async () => [await signedTransfer(third, "cow2", 0, recipient)]);
        await third.devChain.reset();
        for (const block of sourceBlocks.slice(0, 4)) expectStatus(await third.importer.importBlock(asReceived(block, third), "peer"), "IMPORTED_BEST");
        const [fifth, sixth] = await mineBlocks(third, 2, async (index) => [await signedTransfer(third, "cow3", index, recipient)]);
        sideBlocks = [early!, fifth!, sixth!];
      } finally {
        await third.close();
      }
      const [tooOld, sibling, nephew] = sideBlocks.map((block) => block.header);
      const blockWith = (parent: Block, uncles: BlockHeader[]) => {
        const fields = { ...parent.header.fields, parentHash: parent.hash, number: parent.number + 1n, unclesHash: unclesHashOf(uncles), uncleCount: uncles.length, gasUsed: 0n, paidFees: 0n };
        return proveBlock(new Block(new BlockHeader({ ...fields, mergedMiningHeader: new Uint8Array(), mergedMiningMerkleProof: new Uint8Array(), mergedMiningCoinbaseTransaction: new Uint8Array() }), [], uncles));
      };
      const tip = sourceBlocks.at(-1)!;
      // Block 10 may take uncles numbered 3 to 9 whose parent is among its ancestors 3..9.
      const cases: [BlockHeader[], string][] = [
        [[sourceBlocks[7]!.header], "uncleIsAncestor"],
        [[tooOld!], "uncleTooOld"],
        [[sibling!, sibling!], "duplicateUncle"],
        [[nephew!], "uncleParentNotAncestor"],
      ];
      for (const [uncles, rule] of cases) {
        const before = await storedSummary(target);
        expectStatus(await target.importer.importBlock(blockWith(tip, uncles), "peer"), "INVALID_BLOCK", rule);
        expect(await storedSummary(target)).to.equal(before);
      }
      const tenth = blockWith(tip, [sibling!]);
      expectStatus(await target.importer.importBlock(tenth, "peer"), "IMPORTED_BEST");
      expectStatus(await target.importer.importBlock(blockWith(tenth, [sibling!]), "peer"), "INVALID_BLOCK", "uncleAlreadyUsed");
    });
  });

  describe("a body checked against its header elsewhere (the long sync's)", () => {
    const ruleOf = (outcome: ImportOutcome) => (outcome.status === "INVALID_BLOCK" ? outcome.rule : outcome.status);

    it("a block recorded so passes the uncles-hash and transactions-root rules without them; one made anew of the same header, as gossip, RPC and a file make blocks, is checked in full", async () => {
      const [honest] = await mineBlocks(source, 1, async () => [await signedTransfer(source, "cow", 0, recipient)]);
      const received = asReceived(honest!, target);
      recordBodyMatchesHeader(received);
      // Made anew of the recorded block's header object: the record is the block's, not the header's.
      expect(ruleOf(await target.importer.importBlock(new Block(received.header, [], received.uncles), "peer"))).to.equal("transactionsRoot");
      expect(ruleOf(await target.importer.importBlock(new Block(received.header, received.transactions, [target.chain.head.header]), "peer"))).to.equal("unclesHash");
      // The record is what the importer goes by: a recorded block whose transactions are not its
      // header's gets past those rules, to the execution, which refuses it on what they give.
      expect(ruleOf(await target.importer.importBlock(recordBodyMatchesHeader(new Block(received.header, [], received.uncles)), "peer"))).to.equal("stateRoot");
      expect(target.chain.head.number).to.equal(0n);
      expect(ruleOf(await target.importer.importBlock(received, "peer"))).to.equal("IMPORTED_BEST");
    });

    it("a file import checks every body against its header: a block holding other transactions or an uncle its header does not commit to stops it", async () => {
      const blocks = await mineBlocks(source, 2, async (index) => (index === 1 ? [await signedTransfer(source, "cow", 0, recipient)] : []));
      const [first, second] = blocks as [Block, Block];
      // The honest block 2 (the source's object) recorded as a long sync would: the blocks the file import decodes are objects of their own.
      recordBodyMatchesHeader(second);
      const directory = await mkdtemp(join(tmpdir(), "chain-node-body-check-"));
      try {
        const cases: [string, Block, string][] = [
          ["other transactions", new Block(second.header, [], []), "transactionsRoot"],
          ["a foreign uncle", new Block(second.header, second.transactions, [first.header]), "unclesHash"],
        ];
        for (const [name, tampered, rule] of cases) {
          const file = join(directory, `${rule}.rlp`);
          await writeFile(file, Buffer.concat([first.encode(), tampered.encode()]));
          const report = await importChain({ network: findNetworkProfile(33)!, dataDir: join(directory, rule), genesisFile: undefined, file }, createLogger("silent"));
          expect(report.imported, name).to.equal(1);
          expect(report.stop?.kind, name).to.equal("invalid");
          expect(report.stop?.reason, name).to.match(new RegExp(`\\(rule ${rule}\\)$`));
        }
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    });
  });
});

describe("consensus: a proof of work checked elsewhere", () => {
  it("recordProofOfWorkCheck's verdict is what checkProofOfWork answers for that header object, and for no other", async () => {
    const services = await openTestChain();
    try {
      const [block] = await mineBlocks(services, 1);
      const header = block!.header;
      const refusal = { ok: false as const, rule: "merkleRootMismatch" as const, reason: "recorded elsewhere" };
      // A refusal recorded for a valid header wins over checking it again: the check is a lookup.
      const recorded = recordProofOfWorkCheck(header, refusal);
      expect(recorded).to.deep.include({ ok: false, reason: "recorded elsewhere" });
      expect(checkProofOfWork(header)).to.equal(recorded);
      // The same header decoded again is another object: checked on its own, valid.
      expect(checkProofOfWork(BlockHeader.decode(header.encoded)).ok).to.equal(true);
      expect(checkMergedMiningProof(mergedMiningProofOf(header)).ok).to.equal(true);
    } finally {
      await services.close();
    }
  });
});

