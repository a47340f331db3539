// The batch-check thread (started by node/batchChecks.ts): each message is a batch of signatures to
// recover or of proofs of work to check, answered in one message (batchChecksWire.ts).
//
// It leaves when the main thread raises the shared closing flag (workerData), checked between any
// two items of a batch: a thread terminated from outside in the middle of a native signature
// recovery can abort the whole process (the binding throws a C++ exception it cannot deliver).
import { parentPort, workerData } from "node:worker_threads";
import { recoverSignerKeyIfAny } from "../common/signatures.js";
import { checkMergedMiningProof } from "../consensus/mergedMiningProof.js";
import { packSignerKeys, unpackSignatures, type BatchCheckReply, type BatchCheckRequest } from "./batchChecksWire.js";

if (parentPort !== null) {
  const port = parentPort;
  const closing = new Int32Array(workerData as SharedArrayBuffer);
  const leave = () => {
    // Nothing else holds the thread: it ends once the port is closed.
    port.close();
    return undefined;
  };
  /** Each item's answer, or undefined once the main thread asked the thread to leave. */
  const each = <T, U>(items: readonly T[], check: (item: T) => U): U[] | undefined => {
    const answers: U[] = [];
    for (const item of items) {
      if (Atomics.load(closing, 0) !== 0) return leave();
      answers.push(check(item));
    }
    return answers;
  };
  port.on("message", (request: BatchCheckRequest) => {
    // A close comes with the flag raised (node/batchChecks.ts close()).
    if (request.kind === "close" || Atomics.load(closing, 0) !== 0) return leave();
    if (request.kind === "signatures") {
      const keys = each(unpackSignatures(new Uint8Array(request.input)), recoverSignerKeyIfAny);
      if (keys === undefined) return;
      const output = packSignerKeys(keys);
      port.postMessage({ kind: "signatures", id: request.id, output: output.buffer } satisfies BatchCheckReply, [output.buffer]);
    } else {
      const checks = each(request.proofs, checkMergedMiningProof);
      if (checks === undefined) return;
      port.postMessage({ kind: "proofs", id: request.id, checks } satisfies BatchCheckReply);
    }
  });
}
