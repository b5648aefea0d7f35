/**
 * One logger for the process (pino). Level from PANOPTES_LOG (default given by the entry point,
 * `info` unless it says otherwise), with levels per component after it: `info,router=debug`
 * (components: http, router, worker-listener); a PANOPTES_LOG that cannot be read means `info` and
 * one warning that says why, never a crash. Pretty on a terminal, JSON lines otherwise. Safe to call
 * from every test and entry point: the first call wins. Keys and tokens never go to logs; prompt and
 * response text neither, unless PANOPTES_LOG_CONTENT=1 asks for them while debugging a provider.
 * A run's lines carry its `run_id` because it is passed along, not because of an implicit context:
 * the scheduler binds it on the run's child logger and each model call carries it to the router.
 * (An AsyncLocalStorage span did this implicitly, but on Node 20 it hooks every promise in the
 * process and cost ~10% of a sweep's throughput and ~0.5 ms on every call's turnaround.)
 * Runs on: Node (core).
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { parseLogSpec } from './log-spec.js';

let root: Logger | undefined;
/** Levels that PANOPTES_LOG sets for named components (`router=debug`). */
let componentLevels: Record<string, string> = {};

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
  const spec = parseLogSpec(process.env.PANOPTES_LOG, opts.defaultLevel || 'info');
  componentLevels = spec.components;
  const level = spec.level;
  const destination =
    opts.destination ??
    (process.stderr.isTTY ? pretty({ destination: 2, sync: true, colorize: true }) : pino.destination({ fd: 2, sync: true }));
  root = pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: redactedPaths(process.env.PANOPTES_LOG_CONTENT === '1'), censor: '[redacted]' },
    },
    destination,
  );
  if (spec.problem) root.warn(spec.problem);
  return root;
}

/** A child logger for one component, at the level PANOPTES_LOG gives that component, if it names it. */
export function componentLogger(parent: Logger, component: string): Logger {
  const level = componentLevels[component];
  return level === undefined ? parent.child({ component }) : parent.child({ component }, { level });
}

/** The process logger (initialising it with defaults if no entry point did). */
export function logger(): Logger {
  return root ?? initTelemetry();
}

/** For tests: forget the logger so the next init takes new options. */
export function resetTelemetryForTests(): void {
  root = undefined;
  componentLevels = {};
}
