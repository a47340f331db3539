// The batch-check thread (started by node/batchChecks.ts): each message is a batch of signatures to
// recover or of proofs of work to check, answered in one message (batchChecksWire.ts).
import { parentPort } from "node:worker_threads";
import { recoverSignerKeyIfAny } from "../common/signatures.js";
import { checkMergedMiningProof } from "../consensus/mergedMiningProof.js";
import { packSignerKeys, unpackSignatures, type BatchCheckReply, type BatchCheckRequest } from "./batchChecksWire.js";

if (parentPort !== null) {
  const port = parentPort;
  port.on("message", (request: BatchCheckRequest) => {
    if (request.kind === "signatures") {
      const output = packSignerKeys(unpackSignatures(new Uint8Array(request.input)).map(recoverSignerKeyIfAny));
      port.postMessage({ kind: "signatures", id: request.id, output: output.buffer } satisfies BatchCheckReply, [output.buffer]);
    } else {
      port.postMessage({ kind: "proofs", id: request.id, checks: request.proofs.map(checkMergedMiningProof) } satisfies BatchCheckReply);
    }
  });
}
