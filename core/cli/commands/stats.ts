/**
 * `panoptes stats`: tokens, calls and estimated cost per model, across every run or one.
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
      const [{ openRunReader }, { toStatsShape }, { printUsageTable }] = await Promise.all([
        import('../../service/run-reader.js'),
        import('../../http/stats-shapes.js'),
        import('../run-output.js'),
      ]);
      reader = openRunReader({ dataDir: dataDirOf(opts), catalogPaths: opts.catalog ?? [] });
      const stats = reader.stats(opts.run);
      if (opts.json) {
        process.stdout.write(JSON.stringify(toStatsShape(stats)) + '\n');
      } else if (stats.models.length === 0) {
        process.stdout.write('no responses recorded yet\n');
      } else {
        printUsageTable(stats.models);
      }
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      reader?.close();
    }
  });
}
