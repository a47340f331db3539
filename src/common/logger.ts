// Structured logging through pino: one root logger, a child per module.
import { Writable } from "node:stream";
import { pino, type Logger as PinoLogger } from "pino";

export type Logger = PinoLogger;

export const logLevels = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof logLevels)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (logLevels as readonly string[]).includes(value);
}

export const logFormats = ["json", "pretty"] as const;
export type LogFormat = (typeof logFormats)[number];

/**
 * The root logger: JSON lines on stdout (or `destination`), or, in the "pretty" format, one
 * readable line per record for a person at a terminal.
 */
export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream, format: LogFormat = "json"): Logger {
  const target = destination ?? process.stdout;
  return pino({ level, base: { name: "chain-node" } }, format === "pretty" ? prettyLines(target) : target);
}

const levelNames: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO ", 40: "WARN ", 50: "ERROR", 60: "FATAL" };
/** Fields every record carries, left out of the readable line. */
const commonFields = new Set(["level", "time", "name", "msg", "module", "pid", "hostname"]);

/** One record as a readable line: time, level, module, message, then its other fields as key=value. */
export function prettyLogLine(record: Record<string, unknown>): string {
  const time = new Date(typeof record.time === "number" ? record.time : Date.now()).toISOString().slice(11, 23);
  const module = typeof record.module === "string" ? ` [${record.module}]` : "";
  const fields = Object.entries(record)
    .filter(([key]) => !commonFields.has(key))
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  return `${time} ${levelNames[record.level as number] ?? String(record.level)}${module} ${String(record.msg ?? "")}${fields.length > 0 ? `  ${fields.join(" ")}` : ""}`;
}

/** A stream that takes pino's JSON lines and writes them to `target` as readable lines. */
function prettyLines(target: NodeJS.WritableStream): NodeJS.WritableStream {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const lines = chunk
        .toString("utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => {
          try {
            return prettyLogLine(JSON.parse(line) as Record<string, unknown>);
          } catch {
            return line;
          }
        });
      target.write(`${lines.join("\n")}\n`);
      done();
    },
  });
}
