// The call worker's thread as built (make build writes this file as callWorker.js beside the CLI's
// bundle, where node/callWorkers.ts starts it): loads the worker (node/callWorker.ts and what it
// uses, one CommonJS file beside this one) through V8's code cache (cli/cachedBundle.ts). The thread
// starts shortly after the node listens, and a fresh node's first burst of calls comes some
// 200-300 ms after that: compiling its megabyte of JavaScript, and the call path function by
// function, made it ready after the burst had begun on the main thread (issue 39). Its cache is
// made at the thread's exit (the node closes it as it stops), so it holds the call path its
// warm-up compiled (node/callWorker.ts).
import { fileURLToPath } from "node:url";
import { compileCachedBundle } from "./cachedBundle.js";

compileCachedBundle(fileURLToPath(new URL("./callWorker.main.cjs", import.meta.url))).run();
