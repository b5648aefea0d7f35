/**
 * How a run's results are printed by `panoptes run`, `resume` and `stats`: the per-model usage
 * table, the vignettes given up on, the finished run as a person reads it, and the `--json` summary.
 * Runs on: Node (core).
 */
import type { Run } from '../domain.js';
import { toCacheStats, toModelStats } from '../http/stats-shapes.js';
import { responsesPath } from '../paths.js';
import type { ModelCost } from '../service/contract.js';
import type { Engine } from '../service/engine.js';
import { usageTotals } from '../service/summaries.js';
import { formatInt, formatUsd, printTable } from './common.js';

/** The summary `--json` prints and `run`/`resume` share. */
export function runSummaryJson(engine: Engine, run: Run) {
  const usage = engine.service.stats({ runId: run.id });
  return usage.then((s) => ({
    run_id: run.id,
    status: run.status,
    job_count: run.jobCount,
    done_count: run.doneCount,
    failed_count: run.failedCount,
    error: run.error,
    responses_path: responsesPath(engine.dataDir, run.id),
    elapsed_ms: run.finishedAt && run.startedAt ? run.finishedAt - run.startedAt : null,
    models: s.models.map((m) => ({ ...toModelStats(m), ...toCacheStats(m) })),
    total_est_cost_usd: s.totalEstCostUsd,
    ...toCacheStats({
      cachedCalls: s.totalCachedCalls,
      cachedInputTokens: s.totalCachedInputTokens,
      cachedOutputTokens: s.totalCachedOutputTokens,
      savedCostUsd: s.totalSavedCostUsd,
    }),
  }));
}

/**
 * Calls, billed tokens and cost per model, and what the prompt cache answered: a re-run served
 * from the cache shows its cached calls, the tokens those answers carry and the cost they saved.
 */
export function printUsageTable(models: ModelCost[], out: NodeJS.WriteStream = process.stdout): void {
  const t = usageTotals(models);
  const anyCached = t.cachedCalls > 0;
  const row = (name: string, u: Omit<ModelCost, 'model'>) => [
    name,
    formatInt(u.calls),
    formatInt(u.inputTokens),
    formatInt(u.outputTokens),
    formatUsd(u.estCostUsd),
    ...(anyCached ? [formatInt(u.cachedCalls), formatInt(u.cachedInputTokens + u.cachedOutputTokens), formatUsd(u.savedCostUsd)] : []),
  ];
  const rows = [
    ['model', 'calls', 'input tokens', 'output tokens', 'est. cost', ...(anyCached ? ['from cache', 'cached tokens', 'saved'] : [])],
    ...models.map((m) => row(m.model, m)),
    row('total', t),
  ];
  printTable(rows, out);
}

/** Lists every vignette the run gave up on (the first 1,000 the contract lists), with its last error, and how to retry them. */
export async function printFailures(engine: Engine, run: Run, out: NodeJS.WriteStream = process.stdout): Promise<void> {
  const detail = await engine.service.getRun({ runId: run.id });
  const total = detail.run.failedVignettes;
  if (total === 0) return;
  out.write(`${total} vignette(s) failed:\n`);
  for (const f of detail.failures) {
    out.write(`  ${f.vignetteId}  ${f.model}@${f.epoch}  after ${f.attempts} attempt(s): ${f.message}\n`);
  }
  if (total > detail.failures.length) out.write(`  and ${total - detail.failures.length} more\n`);
  out.write(`retry them: panoptes resume ${run.id} --retry-failed\n`);
}

/** Prints a finished run the way a person reads it. */
export async function printRunResult(engine: Engine, run: Run): Promise<void> {
  const stats = await engine.service.stats({ runId: run.id });
  const secs = run.finishedAt && run.startedAt ? ((run.finishedAt - run.startedAt) / 1000).toFixed(1) : '?';
  process.stdout.write(`run ${run.id}: ${run.status} (${run.doneCount}/${run.jobCount} jobs, ${run.failedCount} failed) in ${secs}s\n`);
  if (run.error) process.stdout.write(`reason: ${run.error}\n`);
  await printFailures(engine, run);
  printUsageTable(stats.models);
  process.stdout.write(`responses: ${responsesPath(engine.dataDir, run.id)}\n`);
}
