/**
 * One logger for the process (pino). Level from PANOPTES_LOG (default given by the entry point,
 * `info` unless it says otherwise); pretty on a terminal, JSON lines otherwise. Safe to call
 * from every test and entry point: the first call wins. Prompt and response text never go to logs.
 * Runs on: Node (core).
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

let root: Logger | undefined;

export interface TelemetryOptions {
  /** Level when PANOPTES_LOG is unset (default `info`). */
  defaultLevel?: string;
  /** Where lines go (default: stderr, pretty when it is a terminal). */
  destination?: DestinationStream;
}

export function initTelemetry(opts: TelemetryOptions = {}): Logger {
  if (root) return root;
  const level = process.env.PANOPTES_LOG || opts.defaultLevel || 'info';
  const destination =
    opts.destination ??
    (process.stderr.isTTY ? pretty({ destination: 2, sync: true, colorize: true }) : pino.destination({ fd: 2, sync: true }));
  root = pino(
    {
      level,
      base: { pid: process.pid },
      // Keys and bearer tokens never reach a log line, whatever a caller passes.
      redact: { paths: ['apiKey', '*.apiKey', 'token', '*.token', 'authorization', '*.authorization', 'headers.authorization'], censor: '[redacted]' },
    },
    destination,
  );
  return root;
}

/** The process logger (initialising it with defaults if no entry point did). */
export function logger(): Logger {
  return root ?? initTelemetry();
}

/** For tests: forget the logger so the next init takes new options. */
export function resetTelemetryForTests(): void {
  root = undefined;
}
