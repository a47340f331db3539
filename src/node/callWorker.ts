// The call worker's thread (started by node/callWorkers.ts): a CallService of its own on the same
// LevelDB, opened for reading, that runs the calls and estimates the main thread hands it, and the
// trace replays (tracing/replayPlan.ts) of stored blocks it reads from LevelDB. Both only read
// tries (never changed once written), blocks and canonical hashes; the main thread hands work over
// only while LevelDB holds every block it has answered.
import { parentPort, workerData } from "node:worker_threads";
import { BlockHeader } from "../chain/header.js";
import { bytesToUnprefixedHex } from "../common/hex.js";
import { Block } from "../chain/block.js";
import { codeCacheUse } from "../common/codeCache.js";
import { installFastRlp } from "../common/rlp.js";
import { CallService, EstimateRevertedError, GasEstimationError } from "../execution/callService.js";
import { ExecutionTimeoutError } from "../execution/engine.js";
import { CallNotExecutableError, type MessageCallResult, type StateOverrides } from "../execution/messageCall.js";
import { createExecutionRules } from "../execution/rules.js";
import { runOnCode } from "../execution/synchronousCalls.js";
import { ReplayFailedError, ReplayStateMissingError, replayOutputsToWire, runReplayPlan, StructLogTooLargeError, transferablesOf, type ReplayDependencies, type ReplayOutputOnWire } from "../tracing/index.js";
import { StateDatabase } from "../state/stateDatabase.js";
import { storeKeys } from "../storage/keys.js";
import { openLevelReader } from "../storage/levelStore.js";
import { isPlainResult, PlainResultWriter, readPlainCalls } from "./callWire.js";
import type { BlockReference, CallWorkerData, CallWorkerFailure, CallWorkerReply, CallWorkerRequest } from "./callWorkers.js";

/**
 * The worker's trie-node cache: calls read the few paths of recent roots, and the main thread's
 * cache (12 MiB) already holds what blocks wrote; a second thread's heap costs resident memory.
 * Each new head brings new nodes on the paths calls read, so the cache fills over minutes of
 * steady work: at 8 MiB the worker's heap grew from 24 to 31-35 MiB in bench-long's 10 minutes.
 */
const workerNodeCacheBytes = 2 * 1024 * 1024;

/** Decoded headers kept, by block hash. */
const recentBlockCount = 16;
/**
 * Decoded blocks (with their transactions) kept for replays, by hash: traces come in runs on the
 * same few blocks, and the block and its parent are read for each.
 */
const replayedBlockCount = 8;

/**
 * Calls the worker runs on its own when the node starts (CallWorkers.startAndWarm): enough for V8
 * to compile the call path (the interpreter loop, the frames, the state reads, the result) before
 * the first burst, one at a time, each after the messages waiting (work that comes meanwhile is not
 * held up). The code is a token's balanceOf in miniature: the dispatcher's selector test and jump,
 * the memory pointer, a mapping slot hashed and read, the word returned.
 */
const warmUpCallCount = 400;
/** The synchronous warm-up's runs between two turns of the event loop. */
const warmUpSlice = 50;
/** How long the engine's warm-up waits after real work came, before it looks again. */
const warmUpPauseMs = 50;
const warmUpTarget = new Uint8Array(20).fill(0xca);
const warmUpCode = (() => {
  const head = "6080604052" + "60003560e01c" + "6370a08231" + "14" + "60__57" + "fe"; // memory pointer; selector == balanceOf ? jump : invalid
  const body = "5b" + "600435600052" + "6001602052" + "60406000" + "20" + "54" + "604051" + "52" + "60206040" + "51" + "f3"; // mapping slot, SLOAD, returned
  const jumpDestination = (head.length / 2).toString(16).padStart(2, "0");
  return Uint8Array.from(Buffer.from(head.replace("__", jumpDestination) + body, "hex"));
})();
const warmUpContext = { number: 1n, coinbase: new Uint8Array(20), timestamp: 1n, gasLimit: 30_000_000n, baseFee: 0n, difficulty: 0n };
const warmUpData = Uint8Array.from(Buffer.from(`70a08231${"00".repeat(12)}${"ca".repeat(20)}`, "hex"));

/** The block to replay is not in LevelDB (removed since the main thread read it): the main thread replays it. */
class BlockNotStoredError extends Error {}

function describeFailure(error: unknown): CallWorkerFailure {
  const message = (error as Error)?.message ?? String(error);
  if (error instanceof ExecutionTimeoutError) return { kind: "timeout", message };
  if (error instanceof EstimateRevertedError) return { kind: "estimateReverted", message, payload: error.payload };
  if (error instanceof GasEstimationError) return { kind: "estimation", message };
  if (error instanceof CallNotExecutableError) return { kind: "notExecutable", message };
  if (error instanceof BlockNotStoredError) return { kind: "blockNotStored", message };
  if (error instanceof ReplayStateMissingError) return { kind: "replayStateMissing", message, payload: error.blockHash };
  if (error instanceof ReplayFailedError) return { kind: "replayFailed", message };
  if (error instanceof StructLogTooLargeError) return { kind: "structLogTooLarge", message, limitBytes: error.limitBytes, limitFlag: error.flag };
  return { kind: "internal", message, stack: (error as Error)?.stack };
}

async function serve(port: NonNullable<typeof parentPort>, data: CallWorkerData): Promise<void> {
  installFastRlp();
  const store = await openLevelReader(data.directory);
  const common = createExecutionRules(data.chainId);
  const state = new StateDatabase(store, common, workerNodeCacheBytes);
  const canonicalHash = async (blockNumber: bigint) => store.getSync(storeKeys.canonicalHash(blockNumber));
  const calls = new CallService(
    common,
    state,
    canonicalHash,
    {
      execute: () => Promise.reject(new Error("the call worker does not run the pending block")),
    },
    data.limits,
    data.synchronousCalls ? "all" : "none",
  );

  // Calls come on the head, mostly: its header is decoded once, not per call.
  const recentBlocks = new Map<string, Block>();
  const blockOf = (reference: BlockReference): Block => {
    let block = recentBlocks.get(reference.hash);
    if (block === undefined) {
      block = new Block(BlockHeader.decode(reference.header), []);
      recentBlocks.set(reference.hash, block);
      if (recentBlocks.size > recentBlockCount) recentBlocks.delete(recentBlocks.keys().next().value!);
    }
    return block;
  };

  const replayedBlocks = new Map<string, Block>();
  /** A stored block by hash, as the main thread's chain reads it (undefined when not stored). */
  const storedBlock = (hash: Uint8Array): Block | undefined => {
    const key = bytesToUnprefixedHex(hash);
    let block = replayedBlocks.get(key);
    if (block !== undefined) return block;
    const encodedHeader = store.getSync(storeKeys.header(hash));
    const encodedBody = encodedHeader === undefined ? undefined : store.getSync(storeKeys.body(hash));
    if (encodedHeader === undefined || encodedBody === undefined) return undefined;
    block = Block.decodeBody(BlockHeader.decode(encodedHeader), encodedBody, common);
    replayedBlocks.set(key, block);
    if (replayedBlocks.size > replayedBlockCount) replayedBlocks.delete(replayedBlocks.keys().next().value!);
    return block;
  };
  const replays: ReplayDependencies = { common, state, getBlockByHash: async (hash) => storedBlock(hash), canonicalHash };
  const replay = async (request: Extract<CallWorkerRequest, { kind: "replay" }>) => {
    const deadline = performance.now() + request.timeLeftMs;
    const block = storedBlock(request.blockHash);
    if (block === undefined) throw new BlockNotStoredError(`block 0x${bytesToUnprefixedHex(request.blockHash)} is not in LevelDB`);
    return replayOutputsToWire(request.plan.tracer, await runReplayPlan(replays, block, request.plan, deadline));
  };

  // The answers of calls and estimates go together at the end of the turn of the event loop in
  // which they were found: under load a turn finishes several, and each message costs both threads
  // a structured clone and an event dispatch. The results of plain calls go packed as bytes
  // (node/callWire.ts). A struct-log trace's chunks go at once, moved to the main thread rather
  // than copied.
  let answers: CallWorkerReply[] = [];
  const plainResults = new PlainResultWriter();
  let answersScheduled = false;
  const sendAnswers = (): void => {
    answersScheduled = false;
    const batch = answers;
    answers = [];
    const transfer: ArrayBuffer[] = [];
    if (!plainResults.empty) {
      const results = plainResults.take();
      batch.push({ results });
      transfer.push(results.buffer as ArrayBuffer);
    }
    port.postMessage(batch, transfer);
  };
  const reply = (id: number, result: unknown, failure?: CallWorkerFailure, transfer: ArrayBuffer[] = []): void => {
    if (transfer.length > 0) {
      port.postMessage([{ id, result: result as ReplayOutputOnWire[] }] satisfies CallWorkerReply[], transfer);
      return;
    }
    if (!answersScheduled) {
      answersScheduled = true;
      setImmediate(sendAnswers);
    }
    if (failure !== undefined) answers.push({ id, failure });
    else if (isPlainResult(result)) plainResults.add(id, result);
    else answers.push({ id, result: result as MessageCallResult | bigint });
  };
  const run = (request: Exclude<CallWorkerRequest, { kind: "close" | "warm" | "calls" }>, synchronousTried = false): void => {
    const work = (async () => {
      if (request.kind === "replay") return replay(request);
      const block = blockOf(request.block);
      return request.kind === "call" ? calls.call({ kind: "block", block }, request.call, request.overrides, synchronousTried) : calls.estimateGas({ kind: "block", block }, request.call);
    })();
    work.then(
      (result) => reply(request.id, result, undefined, request.kind === "replay" ? transferablesOf(result as ReplayOutputOnWire[]) : []),
      (error: unknown) => reply(request.id, undefined, describeFailure(error)),
    );
  };
  let closing = false;
  /** Messages of real work taken (calls, estimates, replays): the warm-up's engine runs make way for it. */
  let realWork = 0;
  const warmUp = async (reference: BlockReference): Promise<void> => {
    const target = { kind: "block", block: blockOf(reference) } as const;
    const call = { from: new Uint8Array(20), to: warmUpTarget, gasLimit: 100_000n, gasPrice: 0n, value: 0n, data: warmUpData };
    const overrides: StateOverrides = [[warmUpTarget, { code: warmUpCode }]];
    // The synchronous path first, when the worker runs it (what plain calls take): on the same
    // code, held in memory, a slice at a time.
    for (let count = 0; data.synchronousCalls && count < warmUpCallCount && !closing; count++) {
      if (count % warmUpSlice === 0) await new Promise((resolve) => setImmediate(resolve));
      runOnCode(warmUpCode, warmUpContext, call, common);
    }
    let succeeded = 0;
    let seen = realWork;
    for (let count = 0; count < warmUpCallCount && !closing; count++) {
      await new Promise((resolve) => setImmediate(resolve));
      // Real work warms its own path: the engine's runs (for estimates and calls with overrides)
      // wait until it stops, rather than take a fresh node's first burst's CPU, theirs and V8's.
      while (!closing && realWork !== seen) {
        seen = realWork;
        await new Promise((resolve) => setTimeout(resolve, warmUpPauseMs));
      }
      if (closing) return;
      if ((await calls.call(target, call, overrides)).kind === "success") succeeded++;
    }
    if (!closing) port.postMessage([{ warmed: succeeded }] satisfies CallWorkerReply[]);
  };
  port.on("message", (requests: CallWorkerRequest[]) => {
    realWork++;
    for (const request of requests) {
      if (request.kind === "warm") {
        // A failure here is the next real call's to report.
        warmUp(request.block).catch(() => undefined);
        continue;
      }
      if (request.kind === "calls") {
        readPlainCalls(request.packed, (id, blockIndex, call) => {
          const reference = request.blocks[blockIndex]!;
          let result: MessageCallResult | undefined;
          try {
            result = calls.callAtOnce(blockOf(reference), call);
          } catch (error) {
            // What call() would answer: it runs the synchronous path first, which fails the same way.
            return reply(id, undefined, describeFailure(error));
          }
          if (result === undefined) return run({ id, kind: "call", block: reference, call, overrides: undefined }, true);
          reply(id, result);
        });
        continue;
      }
      if (request.kind !== "close") {
        run(request);
        continue;
      }
      closing = true;
      port.close();
      store.close().catch(() => undefined);
      return;
    }
  });
  port.postMessage([{ ready: true, codeCache: codeCacheUse() }] satisfies CallWorkerReply[]);
  // A failure here is the next real call's to report.
  if (data.warmOn !== undefined) warmUp(data.warmOn).catch(() => undefined);
}

if (parentPort !== null) {
  const port = parentPort;
  serve(port, workerData as CallWorkerData).catch((error: unknown) => {
    port.postMessage([{ failed: (error as Error)?.message ?? String(error) }] satisfies CallWorkerReply[]);
    port.close();
  });
}
