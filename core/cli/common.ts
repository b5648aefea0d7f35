/**
 * What every CLI command shares: the data-dir option, parsing numbers, printing tables and errors.
 * Light on purpose: every command's definition loads it, so `panoptes --help` does too (the engine
 * is opened from open-engine.ts, which a command loads only when it runs).
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { PanoptesError } from '../domain.js';
import { defaultDataDir } from '../paths.js';
import { alignColumns } from '../text-table.js';

export interface CommonOptions {
  dataDir?: string;
  catalog?: string[];
  /** Scorers asking for the `network` capability may reach the network (commands that score). */
  allowNetwork?: boolean;
}

export interface CallingOptions extends CommonOptions {
  hostPatience?: number;
}

/** Options of the commands that pose a run's vignettes in this process (`run`, `resume`). */
export interface PosingOptions extends CallingOptions {
  callConcurrency?: number;
}

export function addCommonOptions(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'where runs are kept (default: $PANOPTES_DATA_DIR or the user data folder)')
    .option('--catalog <file...>', 'catalog files layered over the embedded default');
}

/** The option of the commands that score: let scorers that ask for the network (url_health) have it. */
export function addScoringOptions(cmd: Command): Command {
  return cmd.option('--allow-network', 'let scorers that ask for the "network" capability (the url_health plugin) reach the network');
}

/**
 * The call bound of the commands that pose a run's vignettes in this process. It is the process's,
 * not the run's (one bound over every run it drives): `resume` is given it again, or takes the default.
 */
export function addCallConcurrencyOption(cmd: Command): Command {
  return cmd.option('--call-concurrency <n>', 'model calls in flight at once (default 8)', parsePositiveInt('--call-concurrency'));
}

/** Options of the commands that make model calls. */
export function addCallingOptions(cmd: Command): Command {
  return addCommonOptions(cmd).option(
    '--host-patience <seconds>',
    'how long calls wait for a model whose hosts are all down before giving up (default 300)',
    parsePositiveInt('--host-patience'),
  );
}

export function dataDirOf(opts: CommonOptions): string {
  return opts.dataDir ?? defaultDataDir();
}

/** Exit statuses: 0 done, 1 the work failed, 2 the request was invalid, 3 another process took the run over and finishes it. */
export const EXIT = { ok: 0, failed: 1, invalid: 2, handedOver: 3 } as const;

/** The line a process prints when another one took its run over. */
export function handedOverLine(runId: string): string {
  return `run ${runId}: taken over by another panoptes process, which finishes it; this process stopped its part (nothing lost)
`;
}

export function reportError(err: unknown): number {
  if (err instanceof PanoptesError) {
    process.stderr.write(`panoptes: ${err.message}\n`);
    return err.code === 'invalid_input' || err.code === 'manifest_invalid' || err.code === 'not_found' ? EXIT.invalid : EXIT.failed;
  }
  process.stderr.write(`panoptes: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return EXIT.failed;
}

export function parsePositiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new PanoptesError('invalid_input', `${name} must be a whole number >= 1, got "${value}"`, { where: name });
    return n;
  };
}

/** Dollars by the one rule of the app and the command line (core/common/money.ts). */
export { formatUsd } from '../common/money.js';
export { formatInt } from '../common/numbers.js';

/** Prints rows as aligned columns: the first left-aligned, the others right-aligned (numbers). */
export function printTable(rows: string[][], out: NodeJS.WritableStream = process.stdout): void {
  for (const line of alignColumns(rows)) out.write(line + '\n');
}
