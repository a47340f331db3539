// How make bench-long judges whether resident memory stays flat (bench/longRun.ts): the readings are
// cut into windows of the warm-up's length, the first window (the warm-up) is left out, and the
// highest reading of each later window is compared with the highest of the first of them.

/** The node's resident memory, read `atMs` after the run started. */
export interface RssReading {
  readonly atMs: number;
  readonly rssMiB: number;
}

/** The highest reading of one window, which starts `fromMs` after the run started. */
export interface WindowPeak {
  readonly fromMs: number;
  readonly peakMiB: number;
}

/**
 * The highest reading of each window of `windowMs` after the first one (the warm-up), in order; a
 * last window shorter than half of `windowMs` is left out (fewer readings, a lower peak). Windows
 * without a reading are missing.
 */
export function peaksPerWindow(readings: readonly RssReading[], windowMs: number): WindowPeak[] {
  const lastAtMs = readings[readings.length - 1]?.atMs ?? 0;
  const lastWindow = Math.floor(lastAtMs / windowMs);
  const lastWindowIsShort = lastAtMs - lastWindow * windowMs < windowMs / 2;
  const peaks = new Map<number, number>();
  for (const reading of readings) {
    const window = Math.floor(reading.atMs / windowMs);
    if (window === 0 || (window === lastWindow && lastWindowIsShort)) continue;
    peaks.set(window, Math.max(peaks.get(window) ?? 0, reading.rssMiB));
  }
  return [...peaks].sort(([a], [b]) => a - b).map(([window, peakMiB]) => ({ fromMs: window * windowMs, peakMiB }));
}

/** How far `rssMiB` is from `referenceMiB`, up or down, as a fraction of it. */
export function driftFrom(referenceMiB: number, rssMiB: number): number {
  return Math.abs(rssMiB - referenceMiB) / referenceMiB;
}

/**
 * The largest drift of a window's peak from the first window's (peaksPerWindow), with that first
 * window; undefined when there are fewer than two windows to compare.
 */
export function largestPeakDrift(windows: readonly WindowPeak[]): { reference: WindowPeak; drift: number } | undefined {
  const [reference, ...later] = windows;
  if (reference === undefined || later.length === 0) return undefined;
  return { reference, drift: Math.max(...later.map((window) => driftFrom(reference.peakMiB, window.peakMiB))) };
}
