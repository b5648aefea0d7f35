/**
 * `panoptes resume`: finish every queued or interrupted run of the data dir (and interrupted
 * scoring), then exit; or, given a run id, finish that run, and with --retry-failed first put a
 * failed, partly failed or cancelled run back in the queue so its missing records are posed again.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import type { Engine } from '../../service/engine.js';
import { addCallConcurrencyOption, addCallingOptions, reportError, addScoringOptions } from '../common.js';
import type { ResumeOptions } from '../resume-runs.js';

export function registerResumeCommand(program: Command): void {
  addScoringOptions(addCallConcurrencyOption(addCallingOptions(
    program
      .command('resume [runId]')
      .description('finish every queued or interrupted run (or the one named), then exit')
      .option('--retry-failed', "pose the named run's failed vignettes and its failed and cancelled jobs again")
      .option('--json', 'print one JSON summary line per run'),
  ))).action(async (runId: string | undefined, opts: ResumeOptions, cmd: Command) => {
    let engine: Engine | undefined;
    try {
      const [{ openCliEngine }, { resumeAll, resumeOne }] = await Promise.all([import('../open-engine.js'), import('../resume-runs.js')]);
      engine = openCliEngine(opts, { callConcurrency: opts.callConcurrency });
      cmd.setOptionValue('exit', runId === undefined ? await resumeAll(engine, opts) : await resumeOne(engine, runId, opts));
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
