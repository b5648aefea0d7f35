/**
 * `panoptes stats`: tokens, calls and estimated cost per model, across every run or one; the calls
 * that retried hard fails in a table of their own.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { EXIT, addCommonOptions, dataDirOf, reportError, type CommonOptions } from '../common.js';

export function registerStatsCommand(program: Command): void {
  addCommonOptions(
    program
      .command('stats')
      .description('tokens, calls and estimated cost per model')
      .option('--run <run-id>', 'one run only')
      .option('--json', 'print the /stats JSON shape'),
  ).action(async (opts: CommonOptions & { run?: string; json?: boolean }, cmd: Command) => {
    let reader;
    try {
      // The store and the catalog are all this reads: the engine (router, workers, scoring) stays unloaded.
      const [{ openRunReader }, { toStatsShape }, { printUsageTable }, { warnOnUnreadableLogSpec }] = await Promise.all([
        import('../../service/run-reader.js'),
        import('../../http/stats-shapes.js'),
        import('../run-output.js'),
        import('../../log-spec.js'),
      ]);
      warnOnUnreadableLogSpec();
      reader = await openRunReader({ dataDir: dataDirOf(opts), catalogPaths: opts.catalog ?? [] });
      const stats = reader.stats(opts.run);
      if (opts.json) {
        process.stdout.write(JSON.stringify(toStatsShape(stats)) + '\n');
      } else if (stats.models.length === 0) {
        process.stdout.write('no responses recorded yet\n');
      } else {
        printUsageTable(stats.models);
        if (stats.totalSweepCallsUnrecorded > 0) {
          process.stdout.write(
            `\n${stats.totalSweepCallsUnrecorded} of ${stats.totalSweepCallsAsked} calls asked of providers have no record (cut off before their records landed, or in flight): billed, not in the table above\n`,
          );
        }
        if (stats.retries.length > 0) {
          process.stdout.write("\nretries of hard fails (the candidates' extra calls, apart from the sweep's above):\n");
          printUsageTable(stats.retries);
        }
        if (stats.judges.length > 0) {
          process.stdout.write("\njudges' calls (LLM-judge scorers, at the catalog's prices, apart from the sweep's above):\n");
          printUsageTable(stats.judges);
        }
        if (stats.judges.length > 0 || stats.retries.length > 0) {
          const { formatUsd } = await import('../../common/money.js');
          const parts = `sweep ${formatUsd(stats.totalEstCostUsd)} + judges ${formatUsd(stats.totalJudgeCostUsd)} + retries ${formatUsd(stats.totalRetryCostUsd)}`;
          process.stdout.write(`\nin all: ${formatUsd(stats.totalWithScoringUsd)} (${parts})\n`);
        }
      }
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      reader?.close();
    }
  });
}
