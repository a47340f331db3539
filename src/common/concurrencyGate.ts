// At most N pieces of work at once; the others wait their turn in arrival order, each until its own
// deadline at most.

/** Thrown to a waiter whose deadline passed before its turn came. */
export class GateWaitTimeoutError extends Error {
  constructor() {
    super("no turn before the deadline");
    this.name = "GateWaitTimeoutError";
  }
}

export class ConcurrencyGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly maxRunning: number) {}

  /** Runs `work` once fewer than maxRunning others run; rejects with GateWaitTimeoutError if that is not before `deadline` (performance.now()). */
  async run<T>(deadline: number, work: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxRunning) await this.turn(deadline);
    else this.running++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter: `running` stays counted for it.
      if (next !== undefined) next();
      else this.running--;
    }
  }

  private turn(deadline: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const take = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        reject(new GateWaitTimeoutError());
      }, Math.max(0, deadline - performance.now()));
      this.waiting.push(take);
    });
  }
}
