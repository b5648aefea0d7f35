/**
 * `panoptes runs`: the runs of a data dir, newest first.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import type { RunSummary } from '../../service/contract.js';
import { EXIT, addCommonOptions, dataDirOf, formatInt, formatUsd, reportError, type CommonOptions } from '../common.js';

/** Runs as a table with a header (the sweep's cost, then with its judges' and retries' calls); a failed or cancelled run's reason on the line under it. */
export function printRunsTable(runs: readonly RunSummary[], out: NodeJS.WritableStream = process.stdout): void {
  const rows = [
    ['run', 'name', 'status', 'jobs', 'calls', 'models x epochs', 'est. cost', 'with scoring', 'from cache', 'created'],
    ...runs.map((r) => [
      r.id,
      r.name ?? '',
      r.status,
      `${r.doneCount}/${r.jobCount}${r.failedCount > 0 ? ` (${r.failedCount} failed)` : ''}`,
      formatInt(r.calls),
      `${r.models.join(',')} x${r.epochs}`,
      formatUsd(r.estCostUsd),
      formatUsd(r.totalWithScoringUsd),
      formatInt(r.cachedCalls),
      new Date(r.createdAt).toISOString().replace('T', ' ').slice(0, 19),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const numeric = new Set([3, 4, 6, 7, 8]);
  const line = (row: string[]) => row.map((c, i) => (numeric.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  out.write(line(rows[0]!) + '\n');
  runs.forEach((r, i) => {
    out.write(line(rows[i + 1]!) + '\n');
    if (r.error) out.write(`  reason: ${r.error}\n`);
  });
}

export function registerRunsCommand(program: Command): void {
  addCommonOptions(
    program.command('runs').description('list runs, newest first').option('--json', 'print JSON'),
  ).action(async (opts: CommonOptions & { json?: boolean }, cmd: Command) => {
    let reader;
    try {
      // The store and the catalog are all this reads: the engine (router, workers, scoring) stays unloaded.
      const [{ openRunReader }, { warnOnUnreadableLogSpec }] = await Promise.all([import('../../service/run-reader.js'), import('../../log-spec.js')]);
      warnOnUnreadableLogSpec();
      reader = await openRunReader({ dataDir: dataDirOf(opts), catalogPaths: opts.catalog ?? [] });
      const runs = reader.listRuns(50);
      if (opts.json) process.stdout.write(JSON.stringify(runs) + '\n');
      else if (runs.length === 0) process.stdout.write('no runs yet\n');
      else {
        printRunsTable(runs);
      }
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      reader?.close();
    }
  });
}
