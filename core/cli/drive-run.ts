/**
 * Driving one run to its end in this process, for `panoptes run` and `panoptes resume`. Its
 * progress comes from this process's own event hub: no watcher of other processes' writes is
 * started for a run this process drives itself.
 * Runs on: Node (core).
 */
import type { Run } from '../domain.js';
import type { RunSummary } from '../service/contract.js';
import type { Engine } from '../service/engine.js';
import { createProgressReporter } from './progress.js';

/** Drives one run to its end, showing progress; Ctrl-C, SIGTERM or SIGHUP (the terminal closed) leaves it for `panoptes resume`. */
export async function driveRun(engine: Engine, runId: string, showProgress: boolean): Promise<Run> {
  const reporter = showProgress ? createProgressReporter() : undefined;
  const unsubscribe = engine.events.subscribe((e) => {
    if (e.type === 'run' && e.run.id === runId) reporter?.update(e.run as RunSummary);
  });
  const onSignal = () => {
    reporter?.stop();
    process.stderr.write(`\ninterrupted: run ${runId} is kept; \`panoptes resume\` finishes it\n`);
    void engine.stopRuns().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  try {
    // Records are scored as they land (when the run has scorers), and the run ends scored.
    return await engine.runToEnd(runId);
  } finally {
    reporter?.stop();
    unsubscribe();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
  }
}
