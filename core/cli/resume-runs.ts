/**
 * What `panoptes resume` does once the engine is open: finish one run (first putting its failed
 * parts back in the queue with --retry-failed), or every queued, interrupted or half-scored run.
 * Runs on: Node (core).
 */
import type { Run } from '../domain.js';
import type { Engine } from '../service/engine.js';
import { EXIT, handedOverLine, type PosingOptions } from './common.js';
import { driveRun } from './drive-run.js';
import { printFailures, runSummaryJson } from './run-output.js';

export interface ResumeOptions extends PosingOptions {
  json?: boolean;
  retryFailed?: boolean;
}

export async function resumeOne(engine: Engine, runId: string, opts: ResumeOptions): Promise<number> {
  if (opts.retryFailed) await engine.service.retryRun({ runId, scope: 'failed' });
  else {
    const { run } = await engine.service.getRun({ runId });
    if (run.status === 'done' || run.status === 'failed' || run.status === 'cancelled') {
      const missing = run.failedVignettes > 0 || run.failedCount > 0 || run.status === 'cancelled';
      if (!opts.json) process.stdout.write(`run ${run.id} is ${run.status}${missing ? '; --retry-failed poses its missing records again' : ''}\n`);
      return run.status === 'done' ? EXIT.ok : EXIT.failed;
    }
    engine.recoverInterruptedRuns();
  }
  if (!opts.json) process.stderr.write(`resuming run ${runId}\n`);
  const run = await driveRun(engine, runId, false);
  if (engine.lostRun(runId) && run.status === 'running') {
    process.stderr.write(handedOverLine(runId));
    return EXIT.handedOver;
  }
  await report(engine, run, opts);
  return run.status === 'done' ? EXIT.ok : EXIT.failed;
}

export async function resumeAll(engine: Engine, opts: ResumeOptions): Promise<number> {
  const before = new Set(engine.recoverInterruptedRuns());
  // Runs whose scoring was interrupted (a kill -9 mid-scoring) are finished too.
  for (const s of engine.scoring.behindRuns()) before.add(s);
  if (before.size === 0) {
    if (!opts.json) {
      const failed = await engine.service.listRuns({ status: 'failed', limit: 1 });
      process.stdout.write(
        `nothing to resume${failed.length > 0 ? ` (a failed run is finished: \`panoptes resume RUN_ID --retry-failed\` poses its missing records, e.g. ${failed[0]!.id})` : ''}\n`,
      );
    }
    return EXIT.ok;
  }
  if (!opts.json) process.stderr.write(`resuming ${before.size} run(s)\n`);
  engine.start();
  await engine.finishAll(before);
  let status: number = EXIT.ok;
  for (const id of before) {
    const { run } = await engine.service.getRun({ runId: id });
    if (engine.lostRun(id) && run.status === 'running') {
      process.stderr.write(handedOverLine(id));
      if (status === EXIT.ok) status = EXIT.handedOver;
      continue;
    }
    if (run.status !== 'done') status = EXIT.failed;
    await report(engine, run, opts);
  }
  return status;
}

async function report(engine: Engine, run: Run, opts: ResumeOptions): Promise<void> {
  if (opts.json) {
    process.stdout.write(JSON.stringify(await runSummaryJson(engine, run)) + '\n');
    return;
  }
  process.stdout.write(`run ${run.id}: ${run.status} (${run.doneCount}/${run.jobCount} jobs)${run.error ? ` — ${run.error}` : ''}\n`);
  await printFailures(engine, run);
}
