/**
 * One logger for the process (pino). Level from PANOPTES_LOG (default given by the entry point,
 * `info` unless it says otherwise); pretty on a terminal, JSON lines otherwise. Safe to call
 * from every test and entry point: the first call wins. Keys and tokens never go to logs; prompt and
 * response text neither, unless PANOPTES_LOG_CONTENT=1 asks for them while debugging a provider.
 * `withLogContext` is the span: fields given to it (a run's id) are stamped on every line logged
 * inside it, through every await and callback it starts, by any logger — so code that knows
 * nothing of runs (the model router, a provider) still writes lines that say which run they serve.
 * Runs on: Node (core).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

let root: Logger | undefined;

type LogFields = Record<string, string | number | boolean>;
const logContext = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` on every log line written inside it (nested contexts add to outer ones). */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
  return logContext.run({ ...logContext.getStore(), ...fields }, fn);
}

/** The context's fields, minus those the logger binds itself (a child bound with run_id already). */
function contextFields(logger: Logger): LogFields {
  const fields = logContext.getStore();
  if (!fields) return {};
  const bound = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) if (!bound.includes(`"${key}":`)) out[key] = value;
  return out;
}

/** Keys and bearer tokens never reach a log line, whatever a caller passes; eval content only on request. */
const SECRET_KEYS = ['apiKey', 'token', 'authorization'];
const CONTENT_KEYS = ['prompt', 'system', 'response', 'text', 'messages'];

function redactedPaths(logContent: boolean): string[] {
  const keys = logContent ? SECRET_KEYS : [...SECRET_KEYS, ...CONTENT_KEYS];
  return [...keys.flatMap((k) => [k, `*.${k}`]), 'headers.authorization', 'req.headers.authorization'];
}

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
      mixin: (_line, _level, logger) => contextFields(logger as Logger),
      redact: { paths: redactedPaths(process.env.PANOPTES_LOG_CONTENT === '1'), censor: '[redacted]' },
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
