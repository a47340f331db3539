// Progress of a long command on standard error: on a terminal one line redrawn in place, with a bar
// when the fraction done is known; otherwise (a pipe, a log file) a plain line every few seconds,
// so that a log holds a few lines, not thousands.
const barWidth = 30;
const defaultPlainIntervalMs = 5000;
/** A terminal line is redrawn at most this often: a command may report every block. */
const terminalIntervalMs = 100;

export interface ProgressLine {
  /** Shows `line`; `fraction` (0..1) draws the bar. `always` writes a plain line even between intervals. */
  update(line: string, fraction?: number, always?: boolean): void;
  /** Clears the redrawn line (on a terminal), so that what follows starts on a clean line. */
  clear(): void;
}

export function progressLine(prefix: string, { terminal = process.stderr.isTTY === true, plainIntervalMs = defaultPlainIntervalMs, output = process.stderr as NodeJS.WritableStream } = {}): ProgressLine {
  const started = Date.now();
  let lastPlainLine = 0;
  let lastDrawn = 0;
  let drawn = false;
  return {
    update(line, fraction, always = false) {
      if (terminal) {
        if (!always && Date.now() - lastDrawn < terminalIntervalMs) return;
        lastDrawn = Date.now();
        const filled = fraction === undefined ? 0 : Math.round(Math.min(1, Math.max(0, fraction)) * barWidth);
        const bar = fraction === undefined ? "" : `[${"#".repeat(filled)}${".".repeat(barWidth - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% `;
        output.write(`\r\x1b[K${bar}${line}`);
        drawn = true;
      } else if (always || Date.now() - lastPlainLine >= plainIntervalMs) {
        lastPlainLine = Date.now();
        output.write(`${prefix}: ${line} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
      }
    },
    clear() {
      if (terminal && drawn) output.write("\r\x1b[K");
      drawn = false;
    },
  };
}

/** "1h02m", "3m05s", "12s": a duration for a person. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const whole = Math.max(0, Math.round(seconds));
  const [hours, minutes, rest] = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
  if (hours > 0) return `${hours}h${String(minutes).padStart(2, "0")}m`;
  if (minutes > 0) return `${minutes}m${String(rest).padStart(2, "0")}s`;
  return `${rest}s`;
}
