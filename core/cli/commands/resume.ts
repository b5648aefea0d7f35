/**
 * `panoptes resume`: finish every queued or interrupted run of the data dir, then exit.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { EXIT, addCommonOptions, handedOverLine, openCliEngine, reportError, type CommonOptions } from '../common.js';
import { runSummaryJson } from './run.js';

export function registerResumeCommand(program: Command): void {
  addCommonOptions(
    program
      .command('resume')
      .description('finish every queued or interrupted run, then exit')
      .option('--json', 'print one JSON summary line per run'),
  ).action(async (opts: CommonOptions & { json?: boolean }, cmd: Command) => {
    let engine;
    try {
      engine = openCliEngine(opts);
      const before = new Set(engine.store.unfinishedRunIds());
      engine.store.recoverInterruptedRuns();
      const pending = engine.store.unfinishedRunIds();
      for (const id of pending) before.add(id);
      // Runs whose scoring was interrupted (a kill -9 mid-scoring) are finished too.
      for (const s of engine.scoring.behindRuns()) before.add(s);
      if (before.size === 0) {
        if (!opts.json) process.stdout.write('nothing to resume\n');
        cmd.setOptionValue('exit', EXIT.ok);
        return;
      }
      if (!opts.json) process.stderr.write(`resuming ${before.size} run(s)\n`);
      engine.scheduler.start();
      engine.scoring.start();
      await engine.scheduler.finishAll();
      for (const id of before) await engine.scoring.finish(id);
      let status: number = EXIT.ok;
      for (const id of before) {
        const run = engine.store.getRun(id)!;
        if (engine.scheduler.lostRun(id) && run.status === 'running') {
          process.stderr.write(handedOverLine(id));
          if (status === EXIT.ok) status = EXIT.handedOver;
          continue;
        }
        if (run.status !== 'done') status = EXIT.failed;
        if (opts.json) process.stdout.write(JSON.stringify(await runSummaryJson(engine, run)) + '\n');
        else process.stdout.write(`run ${run.id}: ${run.status} (${run.doneCount}/${run.jobCount} jobs)${run.error ? ` — ${run.error}` : ''}\n`);
      }
      cmd.setOptionValue('exit', status);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
