// eth_blockNumber's latencies measured from a thread of its own (bench/heavyRequests.ts): the
// thread that sends the heavy requests and reads their answers does not delay the probe's own.
import { parentPort, workerData } from "node:worker_threads";
import { runLoad, type LoadOptions } from "./loadClient.js";

parentPort!.postMessage(await runLoad(workerData as LoadOptions));
