/**
 * `panoptes runs`: the runs of a data dir, newest first.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { EXIT, addCommonOptions, formatUsd, openCliEngine, reportError, type CommonOptions } from '../common.js';

export function registerRunsCommand(program: Command): void {
  addCommonOptions(
    program.command('runs').description('list runs, newest first').option('--json', 'print JSON'),
  ).action(async (opts: CommonOptions & { json?: boolean }, cmd: Command) => {
    let engine;
    try {
      engine = openCliEngine(opts);
      const runs = await engine.service.listRuns({ limit: 50 });
      if (opts.json) process.stdout.write(JSON.stringify(runs) + '\n');
      else if (runs.length === 0) process.stdout.write('no runs yet\n');
      else {
        for (const r of runs) {
          process.stdout.write(
            `${r.id}  ${r.status.padEnd(9)} ${String(r.doneCount).padStart(4)}/${r.jobCount} jobs  ${r.models.join(',')} x${r.epochs}  ${formatUsd(r.estCostUsd)}  ${new Date(r.createdAt).toISOString()}\n`,
          );
        }
      }
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
