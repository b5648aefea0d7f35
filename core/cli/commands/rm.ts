/**
 * `panoptes rm RUN_ID...`: deletes finished runs for good (rows, scores, folder). A queued or
 * running run is refused, named, and left as it is: cancel it first, so its owner (this machine or
 * another process) is never cut off mid-write. `--keep-days N` also deletes the archived runs
 * archived more than N days ago: the optional retention.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { PanoptesError } from '../../domain.js';
import { EXIT, addCommonOptions, parsePositiveInt, reportError, type CommonOptions } from '../common.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export function registerRmCommand(program: Command): void {
  addCommonOptions(
    program
      .command('rm')
      .description('delete finished runs: their records, scores and folder (a queued or running run is refused: cancel it first)')
      .argument('[run-ids...]', 'the runs to delete')
      .option('--keep-days <n>', 'also delete the runs archived more than N days ago', parsePositiveInt('--keep-days')),
  ).action(async (runIds: string[], opts: CommonOptions & { keepDays?: number }, cmd: Command) => {
    let engine;
    try {
      if (runIds.length === 0 && opts.keepDays === undefined) {
        throw new PanoptesError('invalid_input', 'name the runs to delete, or give --keep-days to prune archived runs', { where: 'run-ids' });
      }
      const { openCliEngine } = await import('../open-engine.js');
      engine = openCliEngine(opts);
      const expired = opts.keepDays === undefined ? [] : engine.store.removal.archivedBefore(Date.now() - opts.keepDays * DAY_MS);
      let refused = 0;
      for (const runId of [...new Set([...runIds, ...expired])]) {
        try {
          const run = await engine.service.deleteRun({ runId });
          process.stdout.write(`deleted run ${run.id}${run.name ? ` (${run.name})` : ''}: ${run.vignetteCount * run.jobCount} records and their scores\n`);
        } catch (err) {
          refused += 1;
          process.stderr.write(`not deleted: ${(err as Error).message}\n`);
        }
      }
      if (opts.keepDays !== undefined && expired.length === 0) process.stdout.write(`no run archived more than ${opts.keepDays} days ago\n`);
      cmd.setOptionValue('exit', refused > 0 ? EXIT.failed : EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
