// Counts the turns the event loop takes while work runs: each turn schedules the next with
// setImmediate, so work that never yields leaves the count at zero. Tests of code that must give
// the event loop turns (long executions, answers written in pieces, long runs of blocks).

export interface EventLoopTurnCounter {
  /** Stops counting; answers the turns counted. */
  stop(): number;
}

export function countEventLoopTurns(): EventLoopTurnCounter {
  let turns = 0;
  let counting = true;
  const countTurn = () => {
    if (!counting) return;
    turns++;
    setImmediate(countTurn);
  };
  setImmediate(countTurn);
  return {
    stop() {
      counting = false;
      return turns;
    },
  };
}
