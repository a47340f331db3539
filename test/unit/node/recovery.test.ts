// A crash between the write-ahead log and LevelDB: the data directory is copied at the moment a
// send call's block is in the log but LevelDB has not been given it yet (LevelDB gets a batch one
// turn of the event loop after the send answers). The copy is what a kill -9 at that moment leaves
// on disk; a node opened on it must have the block, its transaction and its state.
import { expect } from "chai";
import { cpSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet, getBytes, keccak256, toUtf8Bytes } from "ethers";
import { findNetworkProfile } from "../../../src/chain/networks.js";
import { decodeRawTransaction } from "../../../src/chain/transactions.js";
import { createLogger } from "../../../src/common/logger.js";
import { openChainServices, type ChainServices } from "../../../src/node/chainServices.js";
import { defaultNodeOptions } from "../../../src/node/options.js";
import { writeAheadLogFileName } from "../../../src/storage/levelStore.js";
import { decodeLogRecords } from "../../../src/storage/writeAheadLog.js";

describe("node: recovery from the write-ahead log", function () {
  this.timeout(30_000);
  const network = findNetworkProfile(33)!;
  const options = { ...defaultNodeOptions.chain, callWorker: false };
  const sender = new Wallet(keccak256(toUtf8Bytes("cow")));
  const recipient = "0x00000000000000000000000000000000000000bb";
  let directory: string;
  let services: ChainServices | undefined;
  let recovered: ChainServices | undefined;
  before(async () => (directory = await mkdtemp(join(tmpdir(), "chain-node-recovery-"))));
  after(async () => {
    await services?.close();
    await recovered?.close();
    await rm(directory, { recursive: true, force: true });
  });

  it("opens a copy taken before LevelDB had the last blocks with those blocks in it", async () => {
    const live = join(directory, "live");
    const copy = join(directory, "copy");
    services = await openChainServices(network, { dataDir: live, inMemory: false }, options, createLogger("silent"));
    expect(services.callWorkers, "callWorker: false starts no call worker").to.equal(undefined);
    const send = async (nonce: number) => {
      const raw = await sender.signTransaction({ type: 0, chainId: 33n, nonce, gasPrice: 0n, gasLimit: 21_000n, to: recipient, value: 1n });
      const transaction = decodeRawTransaction(getBytes(raw), services!.common);
      await services!.pool.add(transaction);
      return { transaction, outcome: await services!.miner.mineUntilIncluded(transaction) };
    };
    for (let nonce = 0; nonce < 4; nonce++) await send(nonce);
    // Signed before the last send: nothing between its answer and the copy may leave this turn.
    const lastRaw = await sender.signTransaction({ type: 0, chainId: 33n, nonce: 4, gasPrice: 0n, gasLimit: 21_000n, to: recipient, value: 1n });
    const last = decodeRawTransaction(getBytes(lastRaw), services.common);
    await services.pool.add(last);
    const outcome = await services.miner.mineUntilIncluded(last);
    cpSync(live, copy, { recursive: true });
    expect(outcome.kind).to.equal("mined");
    const lastBlock = (outcome as { block: { number: bigint; hash: Uint8Array } }).block;
    // The copy's log holds the last block's batch (else this test would not test recovery).
    const logged = decodeLogRecords(readFileSync(join(copy, writeAheadLogFileName))).batches;
    expect(logged.length, "batches in the copied log").to.be.greaterThan(0);

    recovered = await openChainServices(network, { dataDir: copy, inMemory: false }, options, createLogger("silent"));
    expect(recovered.chain.head.number).to.equal(lastBlock.number);
    expect(Buffer.from(recovered.chain.head.hash).equals(Buffer.from(lastBlock.hash))).to.equal(true);
    expect(await recovered.chain.getTransactionLocation(last.hash)).to.not.equal(undefined);
    const account = await recovered.state.readAccount(recovered.chain.head.header.fields.stateRoot, getBytes(recipient));
    expect(account?.balance).to.equal(5n);
    expect(readFileSync(join(copy, writeAheadLogFileName)).length, "log emptied once applied").to.equal(0);
  });
});
