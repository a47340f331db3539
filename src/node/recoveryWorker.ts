// The sender-recovery thread (started by node/recoveryOffload.ts): recovers the signatures the main
// thread submits into the shared channel until told to stop. It posts one message, once: that it is
// serving (or why it cannot).
import { parentPort, workerData } from "node:worker_threads";
import { recoverSignerKey } from "../common/signatures.js";
import { RecoveryChannel } from "./recoveryChannel.js";

export type RecoveryWorkerReply = { serving: true } | { failed: string };

if (parentPort !== null) {
  const port = parentPort;
  let channel: RecoveryChannel;
  try {
    channel = new RecoveryChannel(workerData as SharedArrayBuffer);
  } catch (error) {
    port.postMessage({ failed: (error as Error).message } satisfies RecoveryWorkerReply);
    throw error;
  }
  port.postMessage({ serving: true } satisfies RecoveryWorkerReply);
  // Blocks this thread between submissions (Atomics.wait): it has nothing else to do.
  channel.serve(recoverSignerKey);
  port.close();
}
