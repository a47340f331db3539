// The one queue every change of the chain goes through: blocks the miner builds, blocks imported
// from a file or a peer, reorganisations, and the dev methods that cut or edit the chain (revert,
// reset, account edits). One job runs at a time, in the order asked for, so a block is never built
// on a tip that an import is moving, and a revert never cuts under a block being built.
//
// A long run of jobs (10,000 automined blocks, a chain import) gives the event loop a turn once it
// has held it for a slice, so requests and signals are still served meanwhile.
import { nextEventLoopTurn } from "../common/eventLoop.js";

/** Longest the queue runs jobs in a row before the event loop gets a turn (default 10 ms). */
const defaultSliceMs = 10;

export class ChainWriteQueue {
  private tail: Promise<unknown> = Promise.resolve();
  /** Jobs in the queue, the running one included. */
  private jobsQueued = 0;
  /** When the jobs last gave the event loop a turn. */
  private sliceStartedMs = performance.now();

  constructor(private readonly sliceMs = defaultSliceMs) {}

  /** Runs `work` once every job queued before it has settled; answers what it answers. */
  run<T>(work: () => Promise<T>): Promise<T> {
    this.jobsQueued++;
    const start = () => {
      // The first job after an idle spell came from a request: the event loop just had its turn.
      if (this.jobsQueued === 1) this.sliceStartedMs = performance.now();
      let running: Promise<T>;
      try {
        running = work();
      } catch (error) {
        running = Promise.reject(error);
      }
      return running.finally(() => this.jobsQueued--);
    };
    const run = this.tail.then(start, start);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Inside a job: gives the event loop a turn when the jobs have held it for a slice. */
  async yieldIfDue(): Promise<void> {
    if (performance.now() - this.sliceStartedMs < this.sliceMs) return;
    await nextEventLoopTurn();
    this.sliceStartedMs = performance.now();
  }

  /** Settles once every job queued so far has. */
  whenIdle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
