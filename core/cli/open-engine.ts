/**
 * Opening the engine for a CLI command, with the command's options and the environment's lease.
 * Loaded by a command's action only when it runs: the engine brings in the router, the providers,
 * the scheduler and scoring, which `--help` and the read-only commands never need.
 * Runs on: Node (core).
 */
import { existsSync } from 'node:fs';
import { PanoptesError } from '../domain.js';
import { databasePath } from '../paths.js';
import { openEngine, type Engine, type EngineOptions } from '../service/engine.js';
import { initTelemetry } from '../telemetry.js';
import { dataDirOf, type CallingOptions, type CommonOptions } from './common.js';

export function openCliEngine(opts: CallingOptions, extra: Partial<EngineOptions> = {}): Engine {
  // Commands print their own results; logs stay quiet unless PANOPTES_LOG asks.
  initTelemetry({ defaultLevel: 'warn' });
  const leaseMs = leaseFromEnv();
  const router = { ...(opts.hostPatience === undefined ? {} : { hostPatienceMs: opts.hostPatience * 1000 }), ...extra.router };
  return openEngine({
    dataDir: dataDirOf(opts),
    catalogPaths: opts.catalog ?? [],
    leaseMs,
    allowPluginNetwork: opts.allowNetwork === true,
    ...extra,
    router,
  });
}

/**
 * The engine for a command that only reads (export, report): the database is opened read-only, so
 * these work in a read-only data folder. Where no database exists yet one is created, as every
 * command does.
 */
export function openReadingEngine(opts: CommonOptions): Engine {
  return openCliEngine(opts, { readonly: existsSync(databasePath(dataDirOf(opts))) });
}

/** `PANOPTES_LEASE_MS`: how long a run's claim outlives a stalled owner (default 30 s; tests shorten it). */
function leaseFromEnv(): number | undefined {
  const text = process.env.PANOPTES_LEASE_MS;
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 500 || n > 3_600_000) {
    throw new PanoptesError('invalid_input', `PANOPTES_LEASE_MS must be a whole number of milliseconds from 500 to 3600000, got "${text}"`, { where: 'PANOPTES_LEASE_MS' });
  }
  return n;
}
