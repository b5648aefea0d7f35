/**
 * `panoptes stats`: tokens, calls and estimated cost per model, across every run or one.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { EXIT, addCommonOptions, openReadingEngine, reportError, type CommonOptions } from '../common.js';
import { toStatsShape } from '../../http/stats-shapes.js';
import { printUsageTable } from './run.js';

export function registerStatsCommand(program: Command): void {
  addCommonOptions(
    program
      .command('stats')
      .description('tokens, calls and estimated cost per model')
      .option('--run <run-id>', 'one run only')
      .option('--json', 'print the /stats JSON shape'),
  ).action(async (opts: CommonOptions & { run?: string; json?: boolean }, cmd: Command) => {
    let engine;
    try {
      engine = openReadingEngine(opts);
      const stats = await engine.service.stats(opts.run === undefined ? {} : { runId: opts.run });
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
      await engine?.close();
    }
  });
}
