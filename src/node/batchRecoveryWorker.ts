// The batch sender-recovery thread (started by node/batchRecovery.ts): each message is a batch of
// packed signatures, answered with their signer keys in one message (batchRecoveryWire.ts).
import { parentPort } from "node:worker_threads";
import { recoverSignerKeyIfAny } from "../common/signatures.js";
import { packSignerKeys, unpackSignatures } from "./batchRecoveryWire.js";

if (parentPort !== null) {
  const port = parentPort;
  port.on("message", ({ id, input }: { id: number; input: ArrayBuffer }) => {
    const output = packSignerKeys(unpackSignatures(new Uint8Array(input)).map(recoverSignerKeyIfAny));
    port.postMessage({ id, output: output.buffer }, [output.buffer]);
  });
}
