// Structured logging through pino: one root logger, a child per module.
import { pino, type Logger as PinoLogger } from "pino";

export type Logger = PinoLogger;

export const logLevels = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof logLevels)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (logLevels as readonly string[]).includes(value);
}

/** The root logger: JSON lines on stdout. */
export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  return destination === undefined
    ? pino({ level, base: { name: "chain-node" } })
    : pino({ level, base: { name: "chain-node" } }, destination);
}
